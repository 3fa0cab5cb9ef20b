// SPDX-License-Identifier: MIT
// model/warm_models.cpp - warm() against the pool's spawn accounting.
//
// warm() and notify_slow() both reserve a worker slot with a CAS on Sync
// (spawned += 1) before they spawn its thread, and the thread gives the slot
// back when it leaves (B3); join() waits for spawned to reach 0. So every
// successful reservation must be followed by a spawn (or by spawn_failed()
// giving it back), and no thread may start without one. The seed's warm()
// broke both (docs/seed-defects.md D15; model/seed/warm-break.patch).
#include "model_registry.hpp"

namespace {

using namespace zap_model;

// pool_warm_race / pool_warm_first: with max_threads 1, thread 0 calls
// warm(1) and thread 1 schedules a task; thread 0 then shuts down and joins
// (after the schedule: `scheduled` is a release/acquire flag), and the task
// must have run once. In pool_warm_race the two race, so warm()'s CAS can
// lose to notify_slow()'s reservation; in pool_warm_first thread 1 schedules
// only after warm() returned, so warm()'s reservation is the one that counts
// and its worker must run the task. Two dynamic threads, so that a thread
// started without a reservation is seen (ZAP_ASSERT in run_worker) rather
// than refused by the model platform.
template <bool Race>
struct WarmModel : Model<WarmModel<Race>, 2, 2> {
    Pool* pool = nullptr;
    Counted task;
    rl::atomic<int> warmed{0};
    rl::atomic<int> scheduled{0};
    void before() {
        Model<WarmModel, 2, 2>::before();
        zap::Config config = model_config(1);
        pool = new Pool(std::move(config));
    }
    void thread(unsigned index) {
        if (index == 0) {
            pool->warm(1);
            warmed($).store(1, rl::mo_relaxed);  // orders nothing: only delays thread 1 (pool_warm_first)
            while (scheduled($).load(rl::mo_acquire) == 0) P::spin_hint();
            pool->shutdown();
            pool->join();
            RL_ASSERT(task.runs($).load() == 1);
        } else {
            while (!Race && warmed($).load(rl::mo_relaxed) == 0) P::spin_hint();
            pool->schedule(task);
            scheduled($).store(1, rl::mo_release);  // the schedule happens before shutdown()
        }
    }
    void after() { delete pool; }
};

using WarmRaceModel = WarmModel<true>;
ZAP_MODEL_TEST(pool_warm_race, WarmRaceModel, true, P::SpawnFailure::never,
               "warm() racing schedule(): no worker starts without a reservation, the task runs once");
using WarmFirstModel = WarmModel<false>;
ZAP_MODEL_TEST(pool_warm_first, WarmFirstModel, true, P::SpawnFailure::never,
               "warm() then schedule(): warm()'s reservation becomes a worker, join() returns, the task runs once");

// pool_warm_fails_beside_a_push: max_threads 2, every spawn after the
// first fails. A first task starts the one worker, which then goes idle;
// thread 0 calls warm(2), whose spawn fails, while thread 1 schedules a
// task, whose notify signals the idle worker. The failed spawn gives its
// reservation back (A7) and must leave thread 1's notification alone: a
// worker is still there (spawned 1), so the notification is that worker's
// to take. Thread 0 then sleeps on a bare futex until the task has run
// (not on a WaitGroup, whose wait from outside would run it itself): a
// notification erased by the failed spawn leaves the worker asleep with
// the task queued, a Relacy deadlock.
struct WarmFailsBesideAPushModel : Model<WarmFailsBesideAPushModel, 2, 2> {
    Pool* pool = nullptr;
    Flagged first;
    Flagged pushed;
    void before() {
        Model<WarmFailsBesideAPushModel, 2, 2>::before();
        pool = new Pool(model_config(2));
    }
    void thread(unsigned index) {
        if (index == 0) pool->schedule(first);
        while (!first.done()) P::spin_hint();
        if (index == 1) {
            pool->schedule(pushed);
            return;
        }
        pool->warm(2);
        while (!pushed.done()) P::futex_wait(pushed.ran, 0, nullptr);
        pool->shutdown();
        pool->join();
    }
    void after() { delete pool; }
};
ZAP_MODEL_TEST(pool_warm_fails_beside_a_push, WarmFailsBesideAPushModel, false, P::SpawnFailure::after_first,
               "warm()'s failed spawn beside a push: the pushed task's notification survives, the worker runs it");

}  // namespace
