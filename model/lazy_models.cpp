// SPDX-License-Identifier: MIT
// model/lazy_models.cpp - Relacy models of zap::Lazy's join and wait
// (src/zap/lazy.hpp, CO5-CO10): the real when_all and sync_wait, on the
// Relacy platform, with coroutines that hop onto a real pool. Each child
// writes its result into an rl::var before it ends; the parent reads them
// after when_all: a read the join's ordering does not publish is a data
// race. Spurious wake-ups are off: a parent nobody resumes is a deadlock.
//
//   lazy_when_all          max_threads 2, sync_wait from outside: two children
//                          hop and end on the workers, in either order, or
//                          one on each; the last arrival resumes the parent
//                          (CO6), which reads both results.
//   lazy_when_all_inline   max_threads 1: one child hops, the other ends
//                          inside the parent's await_suspend; the hopping one
//                          may end before the parent's own arrival (CO7: the
//                          parent goes on without suspending) or after it
//                          (it resumes the parent on the worker).
//   lazy_sync_wait_worker  max_threads 1: a task of the pool sync_waits for a
//                          when_all whose children hop onto that same pool:
//                          the wait helps (CO10), or nothing would run them.
#include "model_registry.hpp"

#include <zap/lazy.hpp>

#include <tuple>

namespace {

using namespace zap_model;

// The results the children write, and read by the parent.
struct Results {
    rl::var<int> a{0};
    rl::var<int> b{0};
};

zap::Lazy<int> child(Pool* pool, rl::var<int>& out, int value) {
    if (pool != nullptr) co_await pool->schedule();
    out($).store(value);
    co_return value;
}

// Forks the two children, then reads what they wrote.
zap::Lazy<int> parent(Pool* pool_a, Pool* pool_b, Results& results) {
    auto [x, y] = co_await zap::basic_when_all<P>(child(pool_a, results.a, 1), child(pool_b, results.b, 2));
    RL_ASSERT(x == 1 && y == 2);
    co_return results.a($).load() + results.b($).load();  // published by the join (CO6)
}

// lazy_when_all / lazy_when_all_inline: the owner sync_waits from outside.
template <std::uint32_t Workers, bool BothHop>
struct WhenAllModel : Model<WhenAllModel<Workers, BothHop>, 1, Workers> {
    Results results;
    void thread(unsigned) {
        Pool* pool = new Pool(model_config(Workers));
        RL_ASSERT(zap::basic_sync_wait<P>(parent(pool, BothHop ? pool : nullptr, results)) == 3);
        delete pool;
    }
};

using WhenAll2 = WhenAllModel<2, true>;
using WhenAllInline = WhenAllModel<1, false>;

// lazy_sync_wait_worker: a task's sync_wait helps its own pool.
struct SyncWaitWorker : Model<SyncWaitWorker, 1, 1> {
    Results results;
    Pool* pool = nullptr;
    rl::var<int> sum{0};
    struct Waiter : Task {
        SyncWaitWorker* model;
        WaitGroup done;
        explicit Waiter(SyncWaitWorker* m) : Task(&run), model(m) { done.add(); }
        static void run(Task* t) {
            auto* self = static_cast<Waiter*>(t);
            SyncWaitWorker* m = self->model;
            m->sum($).store(zap::basic_sync_wait<P>(parent(m->pool, m->pool, m->results)));
            self->done.done();
        }
    };
    void thread(unsigned) {
        pool = new Pool(model_config(1));
        Waiter waiter(this);
        pool->schedule(waiter);
        waiter.done.wait();
        RL_ASSERT(sum($).load() == 3);
        delete pool;
    }
};

}  // namespace

ZAP_MODEL_TEST(lazy_when_all, WhenAll2, false, P::SpawnFailure::never,
               "two children end on two workers in any order: the last resumes the parent, which sees both results");
ZAP_MODEL_TEST(lazy_when_all_inline, WhenAllInline, false, P::SpawnFailure::never,
               "one child ends inline, one on the worker, before or after the parent's own arrival: resumed once");
ZAP_MODEL_TEST(lazy_sync_wait_worker, SyncWaitWorker, false, P::SpawnFailure::never,
               "sync_wait in a task of a one-thread pool runs the hops it waits for (helping) and sees the results");
