// SPDX-License-Identifier: MIT
// model/model_tests.cpp - Relacy models of zap's parts and of the whole pool.
// Each model registers itself at the end of this file (model_registry.hpp);
// model_main.cpp runs them by name.
#include "model_registry.hpp"

namespace {

using namespace zap_model;

// ---- Queue: producers push lists while consumers contend for the lock ----
// T0 pushes {a,b} then consumes one; T1 pushes {c} then consumes one; T2
// consumes one twice. Popping one at a time leaves the rest in the cache,
// so consumers hand cache_ on to each other. after() drains: each task was
// popped exactly once, and no link or cache access raced.
struct QueueModel : Model<QueueModel, 3> {
    Queue queue;
    Counted tasks[3];

    void consume_one() {
        Task* cursor = nullptr;
        if (!queue.try_acquire_consumer(cursor)) return;
        run(queue.pop(cursor));
        queue.release_consumer(cursor);
    }
    void thread(unsigned index) {
        if (index == 0) {
            Batch b;
            b.push(tasks[0]);
            b.push(tasks[1]);
            queue.push(b.take_list());
            consume_one();
        } else if (index == 1) {
            queue.push(one(tasks[2]));
            consume_one();
        } else {
            consume_one();
            consume_one();
        }
    }
    void after() {
        run_left(queue);
        expect_each_once(tasks);
    }
};

// ---- Buffer: owner push (overflow + migrate) and pop vs a thief ----------
// The ring (capacity 2) starts two slots before the 2^64 wrap. The owner
// pushes three tasks: the ring fills, half of it migrates, and the migrated
// task plus the one that did not fit go to the owner's overflow queue; then
// the owner pops. The thief steals into its own ring and runs what it got.
struct BufferStealModel : Model<BufferStealModel, 2> {
    static constexpr Buffer::Index start = ~Buffer::Index{1};  // 2^64 - 2
    Buffer owner{start};
    Buffer thief{start + 1};
    Queue overflow;
    Counted tasks[3];

    void thread(unsigned index) {
        if (index == 0) {
            Batch b;
            for (auto& t : tasks) b.push(t);
            List list = b.take_list();
            if (!owner.push(list)) overflow.push(list);
            if (Task* t = owner.pop()) t->run();
        } else {
            steal_and_run(thief, owner);
        }
    }
    void after() {
        while (Task* t = owner.pop()) t->run();
        run_left(overflow);
        expect_each_once(tasks);
    }
};

// ---- Buffer: a thief's stale head -----------------------------------------
// The owner fills its two slots, pops one and pushes a third task while a
// thief steals: the thief can read head before the pop and tail after the
// push, a size of three in a ring of two (RB1), which it must not trust. Half
// of a two-slot ring, rounded up, is one task: a thief that took its share
// from the stale size took both.
struct BufferStaleHeadModel : Model<BufferStaleHeadModel, 2> {
    Buffer owner{0};
    Buffer thief{0};
    Queue overflow;
    Counted tasks[3];

    void thread(unsigned index) {
        if (index == 0) {
            Batch b;
            b.push(tasks[0]);
            b.push(tasks[1]);
            List first = b.take_list();
            RL_ASSERT(owner.push(first));
            if (Task* t = owner.pop()) t->run();
            List third = one(tasks[2]);
            if (!owner.push(third)) overflow.push(third);
        } else {
            Buffer::Stole got{};
            if (!thief.steal(owner, got)) return;
            RL_ASSERT(thief.size() == 0);  // one task: the one to run
            run(got.task);
        }
    }
    void after() {
        while (Task* t = owner.pop()) t->run();
        run_left(overflow);
        expect_each_once(tasks);
    }
};

// ---- Buffer: consume from a queue vs two thieves --------------------------
// A queue holds three tasks pushed by another thread; the owner consumes them
// into its ring (two slots, one to run), two thieves steal from the ring,
// each into its own ring, and a thief's ring is stolen from in turn.
struct BufferConsumeModel : Model<BufferConsumeModel, 3> {
    static constexpr Buffer::Index start = ~Buffer::Index{0};  // 2^64 - 1
    Buffer rings[3] = {Buffer{start}, Buffer{start - 1}, Buffer{start}};
    Queue queue;
    Counted tasks[3];
    rl::atomic<int> filled{0};

    void thread(unsigned index) {
        Buffer::Stole got{};
        if (index == 0) {
            Batch b;
            for (auto& t : tasks) b.push(t);
            queue.push(b.take_list());
            filled($).store(1, rl::mo_release);  // only to start the thieves after the push; synchronizes with their acquire load
            if (rings[0].consume(queue, got)) run(got.task);
            while (Task* t = rings[0].pop()) t->run();
        } else {
            if (filled($).load(rl::mo_acquire) == 0) return;  // nothing to steal yet
            Buffer& mine = rings[index];
            if (mine.steal(rings[0], got) || mine.steal(rings[3 - index], got)) {
                run(got.task);
                while (Task* t = mine.pop()) t->run();
            }
        }
    }
    void after() {
        for (auto& r : rings)
            while (Task* t = r.pop()) t->run();
        run_left(queue);
        expect_each_once(tasks);
    }
};

// ---- Event: waiters vs notify and shutdown ---------------------------------
// Liveness: run with spurious wake-ups off, so a lost wake-up is a Relacy
// deadlock. EventNotify: one notify for one waiter. EventTwoSleepers: two
// waiters, one thread notifies then shuts down (the seed's E3 hang).
// EventLateNotify: two waiters, one thread notifies while another shuts
// down (a notify that overwrote SHUTDOWN, the seed's E2, leaves a waiter).
// EventThreeWaiters: three waiters, two notifies then shutdown.
struct EventNotifyModel : Model<EventNotifyModel, 2> {
    Event event;
    rl::var<int> data{0};
    void thread(unsigned index) {
        if (index == 0) {
            data($).store(1);
            event.notify();
        } else {
            event.wait();
            RL_ASSERT(data($).load() == 1);  // the notify's release reached us
        }
    }
};

struct EventTwoSleepersModel : Model<EventTwoSleepersModel, 3> {
    Event event;
    void thread(unsigned index) {
        if (index == 0) {
            event.notify();
            event.shutdown();
        } else {
            event.wait();
        }
    }
};

struct EventLateNotifyModel : Model<EventLateNotifyModel, 4> {
    Event event;
    void thread(unsigned index) {
        if (index == 0)
            event.notify();
        else if (index == 1)
            event.shutdown();
        else
            event.wait();
    }
};

struct EventThreeWaitersModel : Model<EventThreeWaitersModel, 4> {
    Event event;
    void thread(unsigned index) {
        if (index == 0) {
            event.notify();
            event.notify();
            event.shutdown();
        } else {
            event.wait();
        }
    }
};

// ---- WaitGroup: done() from two threads, the waiter frees the group -------
struct WaitGroupModel : Model<WaitGroupModel, 3> {
    WaitGroup* group = nullptr;
    rl::var<int> work[2];
    void before() {
        Model::before();
        group = new WaitGroup;  // Relacy's heap: a done() touching it after wait() returns is caught
        group->add(2);
    }
    void thread(unsigned index) {
        if (index == 0) {
            group->wait();
            RL_ASSERT(work[0]($).load() == 1 && work[1]($).load() == 1);
            delete group;
            group = nullptr;
        } else {
            work[index - 1]($).store(1);
            group->done();
        }
    }
};

// ---- Sync protocol: no task stranded while every worker sleeps -------------
// The pool with max_threads workers; the main thread schedules tasks (one
// of which schedules a child from inside the pool) and waits on a WaitGroup
// for all of them WITHOUT shutting down: join()'s drain cannot hide a
// stranded task. A lost wake-up leaves every worker asleep on the idle event
// and the main thread asleep on the group: a Relacy deadlock (spurious
// wake-ups off). Then shutdown, join, and the pool is freed at once.
// Serial: the main thread waits for each task before it schedules the next
// (a round trip, then another): the next task finds the worker spinning
// (A8: A3 only sets `notified`), asleep after it gave the role back, or in
// between.
template <std::uint32_t Workers, int Outside, bool Child, bool Serial = false>
struct SyncModel : Model<SyncModel<Workers, Outside, Child, Serial>, 1, Workers> {
    struct Job : Counted {
        SyncModel* model = nullptr;
        Job() : Counted(&run) {}
        static void run(Task* t) {
            Job* self = static_cast<Job*>(t);
            Counted::bump(t);
            if (Child && self == &self->model->jobs[0]) self->model->pool->schedule(self->model->jobs[Outside]);
            self->model->group.done();
        }
    };
    static constexpr int total = Outside + (Child ? 1 : 0);
    Pool* pool = nullptr;
    WaitGroup group;
    Job jobs[total];

    void thread(unsigned) {
        zap::Config config = model_config(Workers);
        pool = new Pool(std::move(config));
        for (auto& j : jobs) j.model = this;
        group.add(Serial ? 1 : total);
        for (int i = 0; i < Outside; ++i) {
            pool->schedule(jobs[i]);
            if (!Serial || i + 1 == Outside) continue;
            group.wait();
            group.add(1);
        }
        group.wait();
        expect_each_once(jobs);
        delete pool;  // shutdown + join, then free: a late touch of the pool is caught
    }
};

// ---- Pool end to end: shutdown + join with the drain, pool freed at once ---
// Tasks come from outside and from tasks; shutdown() may race the workers;
// join() drains; every task ran exactly once, and nothing touches the pool
// after join() returns (it is deleted right away).
// LateJoin: after shutdown() the joiner spins until every worker that
// started has reached on_thread_exit, so join() typically arrives while the
// last worker is in unregister(): its first load of Sync may already see
// shutdown with spawned 0 (B4's fast path, no sleep). That is the window in
// which the last worker still touches the pool after its fetch_sub (B3: the
// join event's notify) and only B5's thread join keeps the pool alive.
// Without LateJoin the joiner is nearly always asleep on the join event by
// then, and a late touch needs a spurious wake-up between the worker's post
// and its futex wake followed by a long uninterrupted run of the joiner
// (drain, destructor): random scheduling almost never produces that
// (100 K executions of pool_1w_1t did not, docs/model.md).
template <std::uint32_t Workers, int Outside, bool Child, bool LateJoin = false>
struct PoolModel : Model<PoolModel<Workers, Outside, Child, LateJoin>, 1, Workers> {
    struct Job : Counted {
        PoolModel* model = nullptr;
        Job() : Counted(&run) {}
        static void run(Task* t) {
            Job* self = static_cast<Job*>(t);
            Counted::bump(t);
            if (Child && self == &self->model->jobs[0]) self->model->pool->schedule(self->model->jobs[Outside]);
        }
    };
    static constexpr int total = Outside + (Child ? 1 : 0);
    Pool* pool = nullptr;
    Job jobs[total];
    rl::atomic<int> started{0};  // workers past on_thread_start (LateJoin only)
    rl::atomic<int> exited{0};   // workers at on_thread_exit (LateJoin only)

    void thread(unsigned) {
        zap::Config config = model_config(Workers);
        if (LateJoin) {
            config.on_thread_start = [this] { started($).fetch_add(1, rl::mo_relaxed); };
            config.on_thread_exit = [this] { exited($).fetch_add(1, rl::mo_relaxed); };
        }
        pool = new Pool(std::move(config));
        for (auto& j : jobs) j.model = this;
        for (int i = 0; i < Outside; ++i) pool->schedule(jobs[i]);
        pool->shutdown();
        if (LateJoin) {
            // Ends: spawns never fail here, so at least one worker starts,
            // and every started worker leaves after shutdown(). Timing only
            // (relaxed, no happens-before): join() must not rely on it. The
            // reads are RMWs so that they see the latest counts.
            for (;;) {
                const int e = exited($).fetch_add(0, rl::mo_relaxed);
                if (e > 0 && e == started($).fetch_add(0, rl::mo_relaxed)) break;
                rl::yield(1, $);
            }
        }
        pool->join();
        expect_each_once(jobs);
        delete pool;
    }
};

// ---- a task scheduled again after it ran ----------------------------------
// One batch [A, B] goes to the global queue from outside: A's link points at
// B. The worker takes both into its ring (consume: B to run, A left in the
// ring with its link untouched), runs B, then A; A schedules itself once
// more from its own callback, into the worker's ring. The rescheduled A must
// carry no stale link (BT1 of batch.hpp): Buffer::push follows links until
// null, so a stale A -> B would push B again and B would run twice. A runs
// exactly twice (it was scheduled twice), B exactly once.
struct RescheduleModel : Model<RescheduleModel, 1, 1> {
    struct Job : Counted {
        RescheduleModel* model = nullptr;
        Job() : Counted(&run) {}
        static void run(Task* t) {
            Job* self = static_cast<Job*>(t);
            Counted::bump(t);
            if (self == &self->model->jobs[0] && self->runs($).load() == 1) self->model->pool->schedule(*self);
        }
    };
    Pool* pool = nullptr;
    Job jobs[2];

    void thread(unsigned) {
        zap::Config config = model_config(1);
        pool = new Pool(std::move(config));
        for (auto& j : jobs) j.model = this;
        Batch batch;
        batch.push(jobs[0]);
        batch.push(jobs[1]);
        pool->schedule(std::move(batch));
        pool->shutdown();
        pool->join();
        RL_ASSERT(jobs[0].runs($).load() == 2);
        RL_ASSERT(jobs[1].runs($).load() == 1);
        delete pool;
    }
};

// ---- join() waiting before shutdown() with no worker ever spawned ---------
// One thread joins while another shuts down; every spawn fails. Only
// shutdown() can wake the joiner (B1): without it, a deadlock.
struct JoinFirstModel : Model<JoinFirstModel, 2, 1> {
    Pool* pool = nullptr;
    Counted task;
    void before() {
        Model::before();
        zap::Config config = model_config(1);
        pool = new Pool(std::move(config));
        pool->schedule(task);  // the spawn fails: the task waits for the drain
    }
    void thread(unsigned index) {
        if (index == 0) {
            pool->join();
            RL_ASSERT(task.runs($).load() == 1);
        } else {
            pool->shutdown();
        }
    }
    void after() { delete pool; }
};

using Sync1w2tModel = SyncModel<1, 2, false>;
using Sync2w1tChildModel = SyncModel<2, 1, true>;
using Sync2w2tModel = SyncModel<2, 2, false>;
using Sync2w2tChildModel = SyncModel<2, 2, true>;
using Sync1w2tSerialModel = SyncModel<1, 2, false, true>;
using SyncSpawnFailsFirstModel = SyncModel<1, 2, false>;
using Pool1w1tModel = PoolModel<1, 1, false>;
using Pool1w2tChildModel = PoolModel<1, 2, true>;
using Pool2w1tChildModel = PoolModel<2, 1, true>;
using Pool1w1tLateJoinModel = PoolModel<1, 1, false, true>;
using Pool2w1tChildLateJoinModel = PoolModel<2, 1, true, true>;
using Pool2w3tModel = PoolModel<2, 3, false>;
using PoolSpawnMaybeFailsModel = PoolModel<2, 2, false>;
using PoolSpawnAlwaysFailsModel = PoolModel<1, 2, true>;

// ---- the registry ----------------------------------------------------------
ZAP_MODEL_TEST(queue, QueueModel, true, P::SpawnFailure::never,
               "every pushed task is popped once; links and cache race-free");
ZAP_MODEL_TEST(buffer_steal, BufferStealModel, true, P::SpawnFailure::never,
               "push overflow/migrate and pop vs a thief, across the wrap: each task once");
ZAP_MODEL_TEST(buffer_stale_head, BufferStaleHeadModel, true, P::SpawnFailure::never,
               "a thief that reads a stale head takes half of a two-slot ring, one task, never both");
ZAP_MODEL_TEST(buffer_consume, BufferConsumeModel, true, P::SpawnFailure::never,
               "consume from a queue vs two thieves, across the wrap: each task once");
ZAP_MODEL_TEST(event_notify, EventNotifyModel, false, P::SpawnFailure::never,
               "a notify reaches its waiter and publishes the notifier's writes");
ZAP_MODEL_TEST(event_two_sleepers, EventTwoSleepersModel, false, P::SpawnFailure::never,
               "two sleepers, notify then shutdown: both return");
ZAP_MODEL_TEST(event_late_notify, EventLateNotifyModel, false, P::SpawnFailure::never,
               "notify racing shutdown cannot undo it: both waiters return");
ZAP_MODEL_TEST(event_three_waiters, EventThreeWaitersModel, false, P::SpawnFailure::never,
               "three waiters, two notifies, shutdown: all return");
ZAP_MODEL_TEST(wait_group, WaitGroupModel, true, P::SpawnFailure::never,
               "wait() returns after both done(), and the group may be freed at once");
ZAP_MODEL_TEST(sync_1w_2t, Sync1w2tModel, false, P::SpawnFailure::never,
               "1 worker, 2 tasks from outside: none stranded");
ZAP_MODEL_TEST(sync_2w_1t_child, Sync2w1tChildModel, false, P::SpawnFailure::never,
               "2 workers, a task and its child: none stranded");
ZAP_MODEL_TEST(sync_2w_2t, Sync2w2tModel, false, P::SpawnFailure::never,
               "2 workers, 2 tasks from outside: none stranded");
// Since the give-back a waker that took the only task gives its role back, so in
// sync_2w_1t_child the second worker is spawned by the child's notify,
// after the push: it never steals while the owner pushes. With a second
// task from outside the waker hands the role on (its search moved it, or
// the push came during its search), and the second worker searches while
// the first task pushes its child.
ZAP_MODEL_TEST(sync_2w_2t_child, Sync2w2tChildModel, false, P::SpawnFailure::never,
               "2 workers, 2 tasks from outside, one with a child: none stranded");
ZAP_MODEL_TEST(sync_1w_2t_serial, Sync1w2tSerialModel, false, P::SpawnFailure::never,
               "1 worker, a task from outside waited for, then another (A8's spin): none stranded");
ZAP_MODEL_TEST(sync_spawn_fails_first, SyncSpawnFailsFirstModel, false, P::SpawnFailure::first,
               "the first spawn fails: the next schedule() retries it");
ZAP_MODEL_TEST(pool_1w_1t, Pool1w1tModel, true, P::SpawnFailure::never,
               "1 worker: task ran once, pool freed right after join");
ZAP_MODEL_TEST(pool_1w_2t_child, Pool1w2tChildModel, true, P::SpawnFailure::never,
               "1 worker, tasks from outside and a child: each once");
ZAP_MODEL_TEST(pool_2w_1t_child, Pool2w1tChildModel, true, P::SpawnFailure::never,
               "2 workers, a task and its child: each once, no late touch");
ZAP_MODEL_TEST(pool_1w_1t_late_join, Pool1w1tLateJoinModel, true, P::SpawnFailure::never,
               "1 worker, join() once the worker reached on_thread_exit: pool freed right after join");
ZAP_MODEL_TEST(pool_2w_1t_child_late_join, Pool2w1tChildLateJoinModel, true, P::SpawnFailure::never,
               "2 workers, a task and its child, join() once every started worker reached on_thread_exit: no late touch");
ZAP_MODEL_TEST(pool_2w_3t, Pool2w3tModel, true, P::SpawnFailure::never,
               "2 workers, 3 tasks, shutdown racing the workers");
ZAP_MODEL_TEST(pool_spawn_maybe_fails, PoolSpawnMaybeFailsModel, true, P::SpawnFailure::maybe,
               "any spawn may fail: tasks still run once (drain)");
ZAP_MODEL_TEST(pool_spawn_always_fails, PoolSpawnAlwaysFailsModel, true, P::SpawnFailure::always,
               "no worker ever starts: join() drains everything");
ZAP_MODEL_TEST(pool_reschedule, RescheduleModel, true, P::SpawnFailure::never,
               "batch [A, B], A reschedules itself: no stale link drags B in (A twice, B once)");
ZAP_MODEL_TEST(join_before_shutdown, JoinFirstModel, false, P::SpawnFailure::always,
               "join() waiting before shutdown() with no worker returns");

}  // namespace
