// model/isolation_models.cpp - Relacy models of ThreadPool::isolate()
// (src/zap/isolation.hpp, Protocol I).
//
//   isolation_one_worker  max_threads 1, a ring of 2 slots. Task X schedules
//                         two foreign tasks (no region), then, inside
//                         isolate(), two children it waits for on a
//                         WaitGroup. The ring overflows: a foreign task and a
//                         child share the overflow queue. The isolated wait
//                         must run both children (I3a, I3b) and no foreign
//                         task (IS1); the foreign tasks it set aside run
//                         afterwards (IS2).
//   isolation_two_workers the same with a second worker that steals
//                         meanwhile: each task runs exactly once, none of the
//                         foreign ones on X's thread during its wait, and the
//                         wait returns (no lost wake-up: spurious wake-ups off).
// The main thread waits (outside the pool) for all five tasks, then deletes
// the pool.
#include "model_registry.hpp"

namespace {

using namespace zap_model;

template <std::uint32_t Workers>
struct IsolationModel : Model<IsolationModel<Workers>, 1, Workers> {
    // A task of no region: must not run on X's thread while X's isolated wait runs.
    struct Foreign : Counted {
        IsolationModel* model = nullptr;
        Foreign() : Counted(&run) {}
        static void run(Task* t) {
            auto* self = static_cast<Foreign*>(t);
            IsolationModel& m = *self->model;
            const bool on_waiter = m.waiter($).load(rl::mo_relaxed) == static_cast<int>(rl::thread_index());
            RL_ASSERT(!(on_waiter && m.in_wait($).load(rl::mo_relaxed)));  // IS1
            Counted::bump(t);
            m.all.done();
        }
    };
    struct Child : Counted {
        IsolationModel* model = nullptr;
        Child() : Counted(&run) {}
        static void run(Task* t) {
            Counted::bump(t);
            static_cast<Child*>(t)->model->children.done();
        }
    };
    struct X : Counted {
        IsolationModel* model = nullptr;
        X() : Counted(&run) {}
        static void run(Task* t) {
            Counted::bump(t);
            static_cast<X*>(t)->model->body();
            static_cast<X*>(t)->model->all.done();
        }
    };

    Pool* pool = nullptr;
    WaitGroup all;       // the five tasks, waited for by the main thread
    WaitGroup children;  // X's two children, waited for inside isolate()
    Foreign foreign[2];
    Child child[2];
    X x;
    rl::atomic<int> waiter{-1};  // timing only: which thread runs X's wait
    rl::atomic<bool> in_wait{false};

    void body() {
        for (auto& f : foreign) pool->schedule(f);
        pool->isolate([this] {
            children.add(2);
            for (auto& c : child) pool->schedule(c);
            waiter($).store(static_cast<int>(rl::thread_index()), rl::mo_relaxed);
            in_wait($).store(true, rl::mo_relaxed);
            children.wait();
            in_wait($).store(false, rl::mo_relaxed);
        });
    }

    void thread(unsigned) {
        pool = new Pool(model_config(Workers));
        for (auto& f : foreign) f.model = this;
        for (auto& c : child) c.model = this;
        x.model = this;
        all.add(5);
        pool->schedule(x);
        all.wait();
        expect_each_once(foreign);
        expect_each_once(child);
        delete pool;
    }
};

using IsolationOneWorker = IsolationModel<1>;
using IsolationTwoWorkers = IsolationModel<2>;

ZAP_MODEL_TEST(isolation_one_worker, IsolationOneWorker, false, P::SpawnFailure::never,
               "1 worker, ring of 2: the isolated wait runs its children, sets the foreign tasks aside, runs none");
ZAP_MODEL_TEST(isolation_two_workers, IsolationTwoWorkers, false, P::SpawnFailure::never,
               "2 workers: each task once, no foreign task inside the isolated wait, the wait returns");

}  // namespace
