// SPDX-License-Identifier: MIT
// model/mutation/scenarios.cpp - model scenarios added for the ordering
// mutation table (docs/orderings.md): each one kills a weakening that the
// main model suite (model/model_tests.cpp) let survive. Same Relacy platform,
// same src/zap; built with a ring of 4 (ZAP_MODEL_RING) so that a steal can
// take more than one task.
//
// Usage: zap_model_mutation TEST [options as for zap_model: model/model_main.cpp]
#include "model_registry.hpp"

namespace {

using namespace zap_model;

// event_shutdown_publishes: Event's step 1 promises that a wait() returning
// because of SHUTDOWN synchronizes with shutdown(), like a notification
// does. Kills event.hpp's acquire re-read of SHUTDOWN weakened to relaxed.
struct EventShutdownPublishes : Model<EventShutdownPublishes, 2> {
    Event event;
    rl::var<int> data{0};
    void thread(unsigned index) {
        if (index == 0) {
            data($).store(1);
            event.shutdown();
        } else {
            event.wait();
            RL_ASSERT(data($).load() == 1);
        }
    }
};

// steal_twice: the owner pushes three tasks into a ring of four; thief A
// steals ceil(3/2) = 2, keeps one in its own ring and publishes it with the
// release store of tail at the end of steal(); thief B steals from A's ring.
// Kills that store weakened to relaxed (B reads the slot before A's write).
struct StealTwice : Model<StealTwice, 3> {
    Buffer owner, a, b;
    Counted tasks[3];
    rl::atomic<int> a_stole{0};
    void thread(unsigned index) {
        Buffer::Stole got{};
        if (index == 0) {
            Batch batch;
            for (auto& t : tasks) batch.push(t);
            auto list = batch.take_list();
            RL_ASSERT(owner.push(list));
            while (Task* t = owner.pop()) t->run();
        } else if (index == 1) {
            if (a.steal(owner, got)) {
                a_stole($).store(1, rl::mo_relaxed);  // orders nothing: only starts B's attempt
                run(got.task);
                while (Task* t = a.pop()) t->run();
            }
        } else {
            if (a_stole($).load(rl::mo_relaxed) == 0) return;
            if (b.steal(a, got)) {
                run(got.task);
                while (Task* t = b.pop()) t->run();
            }
        }
    }
    void after() {
        for (Buffer* r : {&owner, &a, &b})
            while (Task* t = r->pop()) t->run();
        for (auto& t : tasks) RL_ASSERT(t.runs($).load() == 1);
    }
};

// wait_group_is_done: is_done() is the polling form of wait(): once it
// returns true the work counted by the group is visible and the group may be
// freed. Two threads write their work and call done(); the main thread polls
// is_done(), reads the work, frees the group. Kills is_done()'s acquire load
// weakened to relaxed (the reads of the work race with the writes).
struct WaitGroupIsDone : Model<WaitGroupIsDone, 3> {
    WaitGroup* group = nullptr;
    rl::var<int> work[2];
    void before() {
        Model::before();
        group = new WaitGroup;
        group->add(2);
    }
    void thread(unsigned index) {
        if (index == 0) {
            while (!group->is_done()) P::spin_hint();
            RL_ASSERT(work[0]($).load() == 1 && work[1]($).load() == 1);
            delete group;
            group = nullptr;
        } else {
            work[index - 1]($).store(1);
            group->done();
        }
    }
};

// join_other_thread: one thread schedules two tasks and shuts the pool
// down while another thread joins (the main suite always schedules, shuts
// down and joins on one thread). The second schedule() may find `notified`
// set and leave Sync alone, and the one worker may read the shutdown state
// (relaxed) and leave without seeing that push. The joiner must still run
// it: its acquire of Sync, through the worker's fetch_sub (a read-modify-
// write continues a release sequence), synchronizes with the scheduling
// thread - with notify()'s fence and shutdown()'s CAS after it
// ([atomics.fences]/2), or with the CAS itself (see
// shutdown_publishes_pushes below).
//
// join_after_exit: the same, but the joiner first waits until the worker has
// run its on_thread_exit hook (a relaxed flag: no happens-before edge), so
// join()'s first load of Sync can find the worker gone and join() never
// waits on its event. Then that load's acquire is the only edge from the
// worker's unregister() to the joiner.
template <bool AfterExit>
struct JoinOtherThread : Model<JoinOtherThread<AfterExit>, 2, 1> {
    Pool* pool = nullptr;
    Counted tasks[2];
    rl::atomic<int> exited{0};
    void before() {
        Model<JoinOtherThread, 2, 1>::before();
        zap::Config config = model_config(1);
        if (AfterExit) config.on_thread_exit = [this] { exited($).store(1, rl::mo_relaxed); };
        pool = new Pool(std::move(config));
    }
    void thread(unsigned index) {
        if (index == 0) {
            while (AfterExit && exited($).load(rl::mo_relaxed) == 0) P::spin_hint();
            pool->join();
            for (auto& t : tasks) RL_ASSERT(t.runs($).load() == 1);
        } else {
            for (auto& t : tasks) pool->schedule(t);
            pool->shutdown();
        }
    }
    void after() { delete pool; }
};

// warm_then_schedule: warm() spawns the one worker before any task exists,
// then the main thread schedules a task, shuts down and joins (the main
// suite never calls warm()). Reaches warm()'s reservation CAS.
struct WarmThenSchedule : Model<WarmThenSchedule, 1, 1> {
    Counted task;
    void thread(unsigned) {
        zap::Config config = model_config(1);
        auto* pool = new Pool(std::move(config));
        pool->warm(1);
        pool->schedule(task);
        pool->shutdown();
        pool->join();
        RL_ASSERT(task.runs($).load() == 1);
        delete pool;
    }
};

// The shutdown-and-join scenarios below share this frame: a pool of one worker,
// created before the threads start and deleted after they end, thread 0
// joins it. handed_on() schedules A and A2 as one batch and returns once A
// runs: the worker took both (its search moved A2 into its ring,
// found.pushed), so it handed the waking role on before running A (A4; with
// nobody to hand it to, notify_slow() set state pending with `notified`
// set, A3). A schedule() after that reads `notified` set and takes the fast
// path (A2). With A alone the worker would give the role back with
// `notified` clear, and the next schedule() would take the slow path, whose
// release CAS on Sync publishes its push to join() by itself.
template <class Derived, rl::thread_id_t Static>
struct OneWorkerJoin : Model<Derived, Static, 1> {
    struct Signals : Counted {
        rl::atomic<int> running{0};
        Signals() : Counted(&run) {}
        static void run(Task* t) {
            Counted::bump(t);
            // Synchronizes with handed_on()'s acquire load.
            static_cast<Signals*>(t)->running($).store(1, rl::mo_release);
        }
    };
    Pool* pool = nullptr;
    Signals a;
    Counted a2;
    void before() {
        Model<Derived, Static, 1>::before();
        zap::Config config = model_config(1);
        pool = new Pool(std::move(config));
    }
    void handed_on() {
        Batch batch;
        batch.push(a);
        batch.push(a2);
        pool->schedule(std::move(batch));
        while (a.running($).load(rl::mo_acquire) == 0) P::spin_hint();
    }
    // Thread 0's part: join, then every task ran once.
    void join_and_check(Counted& b) {
        pool->join();
        RL_ASSERT(a.runs($).load() == 1 && a2.runs($).load() == 1 && b.runs($).load() == 1);
    }
    void after() { delete pool; }
};

// shutdown_publishes_pushes: the interleaving an outside review
// proposed as a counterexample for shutdown()'s CAS weakened to acquire, and
// why it is not one. C waits for the hand-over (handed_on), schedules B on
// the fast path and shuts down. The worker may read the shutdown state, miss
// B in its relaxed loads of the global queue and leave; J's join() then
// reads the worker's unregister() fetch_sub. B still reaches J's drain with
// an acquire-only shutdown CAS: B's push is sequenced before the seq_cst
// fence of C's notify(), which is a release fence, and that fence
// synchronizes with J's acquire because J reads a value from the
// hypothetical release sequence of C's later CAS on Sync ([atomics.fences]/2;
// every write to Sync is a read-modify-write, so the worker's fetch_sub is
// in it). A regression test for P2, not a mutant killer: the killers are the
// two models below.
struct ShutdownPublishesPushes : OneWorkerJoin<ShutdownPublishesPushes, 2> {
    Counted b;
    void thread(unsigned index) {
        if (index == 0) {
            join_and_check(b);
        } else {
            handed_on();
            pool->schedule(b);
            pool->shutdown();
        }
    }
};

// shutdown_happens_before_join: B1's promise that everything the
// thread calling shutdown() did before it happens before join() returns, on
// any thread. C schedules B (spawning the one worker), writes a plain
// variable, shuts down; J joins and reads it. While the worker is running or
// not yet started, shutdown()'s CAS takes no closer (it has no event call to
// make), so the only path from C to J is the release sequence that CAS heads
// and the worker's unregister() fetch_sub continues. Kills that CAS weakened
// to acquire: J's read races with C's write (a data race, in any scheduler).
// Uses only the frame's pool (no hand-over needed).
struct ShutdownHappensBeforeJoin : OneWorkerJoin<ShutdownHappensBeforeJoin, 2> {
    Counted b;
    rl::var<int> written{0};
    void thread(unsigned index) {
        if (index == 0) {
            pool->join();
            RL_ASSERT(written($).load() == 1);
            RL_ASSERT(b.runs($).load() == 1);
        } else {
            pool->schedule(b);
            written($).store(1);
            pool->shutdown();
        }
    }
};

// shutdown_publishes_others_pushes: P2 through a third thread. S
// waits for the hand-over (handed_on), schedules B on the fast path, and
// tells C (release). C shuts down; J joins. B's push happens before C's
// shutdown() only through S's flag: S writes nothing to Sync after its fence,
// so the fence argument of shutdown_publishes_pushes does not apply, and J
// reaches B's push only through the release sequence headed by C's CAS. With
// that CAS acquire-only, the worker and J may both read the global queue from
// before B's push (stale relaxed loads, which Relacy draws only under its
// random scheduler), the worker leaves, J's drain finds nothing, and B never
// runs.
struct ShutdownPublishesOthersPushes : OneWorkerJoin<ShutdownPublishesOthersPushes, 3> {
    Counted b;
    rl::atomic<int> scheduled{0};
    void thread(unsigned index) {
        if (index == 0) {
            join_and_check(b);
        } else if (index == 1) {
            handed_on();
            pool->schedule(b);
            // Synchronizes with C's acquire load: B's push happens before shutdown().
            scheduled($).store(1, rl::mo_release);
        } else {
            while (scheduled($).load(rl::mo_acquire) == 0) P::spin_hint();
            pool->shutdown();
        }
    }
};

// handover_push: the store-buffering pair of A2/A5 across a hand-over of
// the waking role. Two workers; the main thread schedules A1 and A2 in one
// batch and waits (a relaxed flag) until one of them runs: by then the
// worker that took it has handed its role on (its search moved the other
// task into its ring, found.pushed, so notify(true) set `notified` and
// spawned the second worker; with A alone it would give the role back, A3,
// and leave `notified` clear). Then it schedules B and waits on a WaitGroup
// without shutting down. B's notify() may read `notified` still set and
// return; then the second worker, whose CAS clears it, must find B after
// its fence, or every worker sleeps with B queued (a deadlock). Kills
// notify()'s seq_cst fence weakened to acq_rel: the second worker's fence
// alone does not order B's push before its search ([atomics.order]/4 needs
// a seq_cst fence on both sides). sync_2w_2t has the same shape but needs
// about 760 K random executions.
struct HandoverPush : Model<HandoverPush, 1, 2> {
    struct Job : Counted {
        HandoverPush* model = nullptr;
        Job() : Counted(&run) {}
        static void run(Task* t) {
            Job* self = static_cast<Job*>(t);
            Counted::bump(t);
            self->model->a_ran($).store(1, rl::mo_relaxed);  // orders nothing: only delays B's schedule
            self->model->group.done();
        }
    };
    Pool* pool = nullptr;
    WaitGroup group;
    Job jobs[3];
    rl::atomic<int> a_ran{0};
    void thread(unsigned) {
        zap::Config config = model_config(2);
        pool = new Pool(std::move(config));
        for (auto& j : jobs) j.model = this;
        group.add(3);
        Batch a;
        a.push(jobs[0]);
        a.push(jobs[1]);
        pool->schedule(std::move(a));
        while (a_ran($).load(rl::mo_relaxed) == 0) P::spin_hint();
        pool->schedule(jobs[2]);
        group.wait();
        expect_each_once(jobs);
        delete pool;
    }
};

ZAP_MODEL_TEST(event_shutdown_publishes, EventShutdownPublishes, true, P::SpawnFailure::never,
               "a wait() ended by shutdown() sees the writes made before shutdown()");
ZAP_MODEL_TEST(steal_twice, StealTwice, true, P::SpawnFailure::never,
               "a steal of two tasks publishes the one it keeps to the next thief");
ZAP_MODEL_TEST(wait_group_is_done, WaitGroupIsDone, true, P::SpawnFailure::never,
               "is_done() true means the counted work is visible and the group may be freed");
using JoinOtherThreadModel = JoinOtherThread<false>;
ZAP_MODEL_TEST(join_other_thread, JoinOtherThreadModel, true, P::SpawnFailure::never,
               "join() on one thread runs every task another thread scheduled before its shutdown()");
using JoinAfterExitModel = JoinOtherThread<true>;
ZAP_MODEL_TEST(join_after_exit, JoinAfterExitModel, true, P::SpawnFailure::never,
               "join() called after the last worker left sees everything the workers did");
ZAP_MODEL_TEST(shutdown_publishes_pushes, ShutdownPublishesPushes, true, P::SpawnFailure::never,
               "a push whose schedule() took the fast path reaches join() through notify()'s fence");
ZAP_MODEL_TEST(shutdown_happens_before_join, ShutdownHappensBeforeJoin, true, P::SpawnFailure::never,
               "what the shutdown() caller did before it happens before join() returns");
ZAP_MODEL_TEST(shutdown_publishes_others_pushes, ShutdownPublishesOthersPushes, true, P::SpawnFailure::never,
               "a push that happens before shutdown() through a third thread reaches join()");
ZAP_MODEL_TEST(warm_then_schedule, WarmThenSchedule, true, P::SpawnFailure::never,
               "a worker spawned by warm() runs the task scheduled after it, or join() does");
ZAP_MODEL_TEST(handover_push, HandoverPush, false, P::SpawnFailure::never,
               "a push made while `notified` is set by a hand-over is found before every worker sleeps");

}  // namespace
