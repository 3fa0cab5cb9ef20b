// SPDX-License-Identifier: MIT
// model/lifecycle_models.cpp - shutdown(), join() and the destructor on
// different threads (Protocol B of pool_core.hpp).
//
// The main suite shuts down and joins on one thread, so it cannot see a
// shutdown() that is still inside its event calls when another thread's
// join() returns and frees the pool. Here the joiner deletes the pool as soon
// as join() returns, inside its own thread, while the other threads may still
// be running: any touch of the pool after that is ACCESS TO FREED MEMORY.
#include "model_registry.hpp"

namespace {

using namespace zap_model;

// The base of these models: a pool of one worker, made before the threads start.
template <class Derived, rl::thread_id_t Static, rl::thread_id_t Dynamic = 0>
struct OneWorkerPool : Model<Derived, Static, Dynamic> {
    Pool* pool = nullptr;
    void before() {
        Model<Derived, Static, Dynamic>::before();
        pool = new Pool(model_config(1));
    }
};

// apart_no_worker: no task, so no worker is ever spawned. S: shutdown().
// J: join(), then delete. shutdown()'s CAS leaves spawned 0, so join() may
// return at once; shutdown() must not touch the join event after that (B1,
// P5).
struct ApartNoWorker : OneWorkerPool<ApartNoWorker, 2> {
    void thread(unsigned index) {
        if (index == 0) {
            pool->join();
            delete pool;
        } else {
            pool->shutdown();
        }
    }
};

// apart_idle_worker: S warms one worker (it finds no work and sleeps, or is
// on its way to), then shuts down. J: join(), then delete. shutdown()'s CAS
// sees the worker idle and shuts the idle event down; the worker may return
// from the event before shutdown()'s futex wake, leave, and be joined: the
// wake must not reach freed memory (B1, P5).
struct ApartIdleWorker : OneWorkerPool<ApartIdleWorker, 2, 1> {
    void thread(unsigned index) {
        if (index == 0) {
            pool->join();
            delete pool;
        } else {
            pool->warm(1);
            pool->shutdown();
        }
    }
};

// apart_spawn_fails: W warms one worker and its spawn fails; S shuts down
// once W is past its reservation (it waits for the spawn attempt: timing
// only, no happens-before), so the failure races shutdown(); J joins and
// deletes. When the failed spawn gives back the last reservation after
// shutdown, spawn_failed() notifies the join event: that call must be over
// before join() returns (A7, P5). (A warm() that starts after the pool is
// freed is the caller's bug, as for any object: not modelled.)
struct ApartSpawnFails : OneWorkerPool<ApartSpawnFails, 3> {
    void thread(unsigned index) {
        if (index == 0) {
            pool->join();
            delete pool;
        } else if (index == 1) {
            while (P::spawn_attempts() == 0) P::spin_hint();
            pool->shutdown();
        } else {
            pool->warm(1);
        }
    }
};

// apart_spawn_fails_late_join: as apart_spawn_fails, but J joins only once
// S has returned from shutdown() (a relaxed flag: timing, no happens-before).
// J then often finds the pool shut down with no worker on its first load,
// while W's failed spawn still holds its closer: only B5's wait for closers
// keeps J from freeing the pool under W's join event notify and
// release_closer(). In apart_spawn_fails J is nearly always asleep on the
// join event by then, and random scheduling rarely opens that window: a
// joiner that stopped waiting for closers after one pause failed there at
// execution 187,486 (of the ctest's 100,000), here at 24,906.
struct ApartSpawnFailsLateJoin : OneWorkerPool<ApartSpawnFailsLateJoin, 3> {
    rl::atomic<bool> shut_down{false};
    void thread(unsigned index) {
        if (index == 0) {
            while (!shut_down($).exchange(false, rl::mo_relaxed)) rl::yield(1, $);  // an RMW: the latest value
            pool->join();
            delete pool;
        } else if (index == 1) {
            while (P::spawn_attempts() == 0) P::spin_hint();
            pool->shutdown();
            shut_down($).store(true, rl::mo_relaxed);
        } else {
            pool->warm(1);
        }
    }
};

// two_joiners: two threads join() at once while a third schedules a task
// and shuts down. Both joins return (one join event notification must not
// leave the other asleep), and each sees the task run. The pool is freed
// after both have returned.
struct TwoJoiners : OneWorkerPool<TwoJoiners, 3, 1> {
    Counted task;
    void thread(unsigned index) {
        if (index < 2) {
            pool->join();
            RL_ASSERT(task.runs($).load() == 1);
        } else {
            pool->schedule(task);
            pool->shutdown();
        }
    }
    void after() { delete pool; }
};

}  // namespace

ZAP_MODEL_TEST(apart_no_worker, ApartNoWorker, true, P::SpawnFailure::never,
               "shutdown() and join() on different threads, no worker: nothing touches the pool after join()");
ZAP_MODEL_TEST(apart_idle_worker, ApartIdleWorker, true, P::SpawnFailure::never,
               "shutdown() waking an idle worker while another thread joins and frees: no late touch");
ZAP_MODEL_TEST(apart_spawn_fails, ApartSpawnFails, true, P::SpawnFailure::always,
               "a failed spawn racing shutdown(), a third thread joins and frees: no late touch");
ZAP_MODEL_TEST(apart_spawn_fails_late_join, ApartSpawnFailsLateJoin, true, P::SpawnFailure::always,
               "a failed spawn racing shutdown(), a joiner that comes after it and frees: no late touch");
ZAP_MODEL_TEST(two_joiners, TwoJoiners, false, P::SpawnFailure::never,
               "two concurrent join() calls both return, and both see every task run");
