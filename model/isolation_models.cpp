// SPDX-License-Identifier: MIT
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
//
// The ring's two region steps on their own, against the other party of the
// ring (buffer.hpp steps 7 and 8; no pool):
//   isolation_claim_past  a thief in region R claims past an older task of
//                         region 0 to the task of R (step 8) while the owner
//                         takes its newest task back: the claim returns only
//                         a task of R, hands every other task it claimed to
//                         the caller, and each task is taken exactly once.
//   isolation_pop_back_past the owner takes back its task of R from under a
//                         newer task of region 0 (step 7) and pushes that one
//                         back, while a thief steals: each task exactly once,
//                         the owner's take of region R only.
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
            IsolationModel& m = *static_cast<Child*>(t)->model;
            m.children.done();
            m.all.done();
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

constexpr std::uint64_t region = 7;  // any id but 0

// Step 8 against the owner's take-back (step 6).
struct ClaimPastModel : Model<ClaimPastModel, 2> {
    Buffer victim;
    Counted tasks[2];  // [0]: region 0, older; [1]: region R, newer

    void thread(unsigned index) {
        if (index == 0) {
            zap::detail::Region::set(tasks[1], region);
            Batch b;
            for (auto& t : tasks) b.push(t);
            List list = b.take_list();
            const bool fits = victim.push(list);
            RL_ASSERT(fits);  // two slots
            if (Task* t = victim.pop_back()) t->run();
        } else {
            Batch passed;
            Task* mine = Buffer::claim_of(victim, region, [&passed](Task& t) { passed.push(t); });
            if (mine != nullptr) {
                RL_ASSERT(zap::detail::Region::of(*mine) == region);  // IS1
                mine->run();
            }
            while (Task* t = passed.pop()) {
                RL_ASSERT(zap::detail::Region::of(*t) != region);  // a task of R is returned, never passed
                t->run();  // set aside, run later by someone (IS2)
            }
        }
    }
    void after() {
        while (Task* t = victim.pop()) t->run();
        expect_each_once(tasks);
    }
};

// Step 7 against a thief's steal (step 3).
struct PopBackPastModel : Model<PopBackPastModel, 2> {
    Buffer owner;
    Buffer thief;
    Counted tasks[2];  // [0]: region R, older; [1]: region 0, newer

    void thread(unsigned index) {
        if (index == 0) {
            zap::detail::Region::set(tasks[0], region);
            Batch b;
            for (auto& t : tasks) b.push(t);
            List list = b.take_list();
            const bool fits = owner.push(list);
            RL_ASSERT(fits);  // two slots
            Batch above;
            Task* mine = owner.pop_back_of(region, [&above](Task& t) { above.push(t); });
            if (!above.empty()) {
                List back = above.take_list();
                const bool back_in = owner.push(back);  // back on top, before anything runs (IS2)
                RL_ASSERT(back_in);
            }
            if (mine != nullptr) {
                RL_ASSERT(zap::detail::Region::of(*mine) == region);  // IS1
                mine->run();
            }
        } else {
            steal_and_run(thief, owner);
        }
    }
    void after() {
        while (Task* t = owner.pop()) t->run();
        expect_each_once(tasks);
    }
};

using IsolationOneWorker = IsolationModel<1>;
using IsolationTwoWorkers = IsolationModel<2>;

ZAP_MODEL_TEST(isolation_one_worker, IsolationOneWorker, false, P::SpawnFailure::never,
               "1 worker, ring of 2: the isolated wait runs its children, sets the foreign tasks aside, runs none");
ZAP_MODEL_TEST(isolation_two_workers, IsolationTwoWorkers, false, P::SpawnFailure::never,
               "2 workers: each task once, no foreign task inside the isolated wait, the wait returns");
ZAP_MODEL_TEST(isolation_claim_past, ClaimPastModel, true, P::SpawnFailure::never,
               "step 8 vs take-back: only region R returned, others passed, each task once");
ZAP_MODEL_TEST(isolation_pop_back_past, PopBackPastModel, true, P::SpawnFailure::never,
               "step 7 vs a thief: the newer task passed and pushed back, each task once");

}  // namespace
