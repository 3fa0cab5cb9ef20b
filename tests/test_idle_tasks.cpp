// SPDX-License-Identifier: MIT
// Idle tasks (schedule_idle, Worker::run_idle_tasks): an idle task that
// re-queues itself waits for the worker's next idle turn, so it neither keeps
// the worker from its other tasks nor from sleeping; at shutdown the worker
// runs idle tasks until none is left, itself, before it leaves. An idle task
// that never runs fails its test (hang_watchdog.hpp).
#include "hang_watchdog.hpp"

#include "call_task.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <thread>
#include <utility>

namespace {

using Call = BasicCall<zap::StdPlatform>;

zap::Config one_worker() {
    zap::Config config;
    config.max_threads = 1;
    return config;
}

// Re-queues itself until `stop` is set, or it has run `limit` times, or it
// has run `after` times since `shutdown_begun` was set. Counts how often it
// was queued, and its runs on a thread other than its first run's.
struct Requeuer : zap::Task {
    zap::ThreadPool* pool = nullptr;
    std::atomic<bool> stop{false};
    std::atomic<bool> shutdown_begun{false};
    std::atomic<int> runs{0};
    std::atomic<int> queued{0};
    std::atomic<int> elsewhere{0};
    int limit = 0;
    int after = 0;
    std::thread::id first;  // these two only the runs touch
    int runs_after = 0;
    Requeuer() : zap::Task(&run) {}
    void requeue() {
        queued.fetch_add(1);
        pool->schedule_idle(*this);
    }
    static void run(zap::Task* t) {
        auto* self = static_cast<Requeuer*>(t);
        const int runs = self->runs.fetch_add(1) + 1;
        if (runs == 1) self->first = std::this_thread::get_id();
        if (std::this_thread::get_id() != self->first) self->elsewhere.fetch_add(1);
        if (runs >= self->limit || self->stop.load()) return;
        if (self->shutdown_begun.load() && ++self->runs_after >= self->after) return;
        self->requeue();
    }
};

// Queues the requeuer as an idle task of the worker that runs it.
struct Starter : zap::Task {
    Requeuer* idle = nullptr;
    Starter() : zap::Task(&run) {}
    static void run(zap::Task* t) { static_cast<Starter*>(t)->idle->requeue(); }
};

// Queues `idle` on the pool's worker; returns once it has run once.
void start(zap::ThreadPool& pool, Requeuer& idle, Starter& starter) {
    idle.pool = &pool;
    starter.idle = &idle;
    pool.schedule(starter);
    while (idle.runs.load() == 0) std::this_thread::yield();
}

// Stops the requeuer and records how often it had run by then.
struct Stopper : zap::Task {
    Requeuer* idle = nullptr;
    std::atomic<int> runs_seen{-1};
    Stopper() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Stopper*>(t);
        self->runs_seen.store(self->idle->runs.load());
        self->idle->stop.store(true);
    }
};

TEST(IdleTasks, ARequeuingIdleTaskDoesNotStarveTheWorker) {
    // One worker: while it is inside run_idle_tasks nobody else runs the
    // stopper. Taking the idle queue again and again (the old "every idle
    // task queued so far") ran the requeuer `limit` times before the
    // stopper; one run per idle turn lets the stopper in after a few.
    constexpr int limit = 1'000'000;
    zap::ThreadPool pool(one_worker());
    Requeuer idle;
    idle.limit = limit;
    Starter starter;
    Stopper stopper;
    stopper.idle = &idle;
    start(pool, idle, starter);
    pool.schedule(stopper);
    while (stopper.runs_seen.load() < 0) std::this_thread::yield();
    EXPECT_LT(stopper.runs_seen.load(), limit);
    EXPECT_LT(stopper.runs_seen.load(), 1000) << "one run per idle turn, and the worker had few idle turns";
}

TEST(IdleTasks, EveryIdleTaskQueuedBeforeAnIdleTurnRunsInIt) {
    // A task queues three idle tasks on its worker and returns: the worker
    // has nothing else to do, so it runs all three and sleeps. A turn that
    // ran only the first would leave the others queued beside the sleeping
    // worker, with nothing left to wake it until the pool shuts down.
    zap::ThreadPool pool(one_worker());
    std::atomic<int> ran{0};
    Call idle[3] = {Call([&] { ++ran; }), Call([&] { ++ran; }), Call([&] { ++ran; })};
    Call queuer([&] {
        for (Call& task : idle) pool.schedule_idle(task);
    });
    pool.schedule(queuer);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);  // far above the microseconds it takes
    while (ran.load() < 3 && std::chrono::steady_clock::now() < limit)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    EXPECT_EQ(ran.load(), 3) << "idle tasks were left queued beside their sleeping worker";
    pool.shutdown();  // runs what is left (B2) while the tasks still exist
    pool.join();
}

TEST(IdleTasks, ShutdownRunsIdleTasksUntilNoneIsLeft) {
    // Never stopped: the requeuer runs `limit` times before join() returns.
    constexpr int limit = 50;
    Requeuer idle;
    idle.limit = limit;
    Starter starter;
    {
        zap::ThreadPool pool(one_worker());
        start(pool, idle, starter);
    }  // the destructor shuts down and joins
    EXPECT_EQ(idle.runs.load(), limit);
}

TEST(IdleTasks, AnIdleTaskReQueuedWhileItsWorkerLeavesRunsOnThatWorker) {
    // The requeuer keeps itself queued until shutdown() has returned, then
    // re-queues itself `after` more times. shutdown() has set the pool's
    // state before the flag is raised, and the worker's wait() returns at
    // its next look at the state - after at most one more idle turn - so at
    // least `after` - 1 of those re-queues happen while the worker is
    // leaving (B2). Each must run, and on the worker that queued it: an idle
    // task is that worker's (per-thread clean-up, say). A worker that ran
    // its idle queue once on the way out would leave the rest to join()'s
    // drain, on the joining thread, after the worker's on_thread_exit.
    constexpr int after = 3;
    Requeuer idle;
    idle.limit = std::numeric_limits<int>::max();
    idle.after = after;
    Starter starter;
    zap::ThreadPool pool(one_worker());
    start(pool, idle, starter);
    pool.shutdown();
    idle.shutdown_begun.store(true);
    pool.join();
    EXPECT_EQ(idle.runs.load(), idle.queued.load()) << "an idle task was queued and never ran";
    EXPECT_EQ(idle.runs_after, after);
    EXPECT_EQ(idle.elsewhere.load(), 0) << "an idle task ran on a thread other than its worker";
}

// A worker's last idle task: keeps itself queued until shutdown() has
// returned, then calls `last` - while its worker is leaving, after B2's
// sweep, so what `last` schedules stays in that worker's ring for join()'s
// drain.
struct LastWords : zap::Task {
    zap::ThreadPool* pool = nullptr;
    std::function<void()> last;
    std::atomic<bool> queued{false};
    std::atomic<bool> shutdown_begun{false};
    LastWords() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<LastWords*>(t);
        if (self->shutdown_begun.load()) return self->last();
        self->pool->schedule_idle(*self);
        self->queued.store(true);
    }
};

// Shuts the pool down once `idle` is queued; `idle` then has its last words.
void shut_down_after(zap::ThreadPool& pool, LastWords& idle) {
    while (!idle.queued.load()) std::this_thread::yield();
    pool.shutdown();
    idle.shutdown_begun.store(true);
    pool.join();
}

// Two of these run at once, one per worker (each waits for the other to
// start, and A4 wakes the second worker for the second): the one on worker
// 1 queues the idle task there.
struct Meet : zap::Task {
    std::atomic<int>* started = nullptr;
    LastWords* idle = nullptr;
    Meet() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Meet*>(t);
        self->started->fetch_add(1);
        while (self->started->load() < 2) std::this_thread::yield();
        if (self->idle->pool->worker_index() == std::optional<std::uint32_t>{1}) self->idle->pool->schedule_idle(*self->idle);
    }
};

TEST(IdleTasks, ATaskALeavingWorkerSchedulesRunsBeforeJoinReturns) {
    // Worker 1 leaves with a task in its ring, scheduled by its last idle
    // task after worker 0 had gone (B2 sweeps before the idle tasks, not
    // after). join()'s drain must look in every worker's ring, not only in
    // worker 0's, which is its own.
    std::atomic<bool> worker0_left{false};
    Call child;
    LastWords idle;
    idle.last = [&] {
        while (!worker0_left.load()) std::this_thread::yield();
        idle.pool->schedule(child);
    };
    std::atomic<int> started{0};
    Meet meets[2];
    zap::Config config;
    config.max_threads = 2;
    config.on_thread_exit = [&] {
        if (idle.pool->worker_index() == std::optional<std::uint32_t>{0}) worker0_left.store(true);
    };
    zap::ThreadPool pool(config);
    idle.pool = &pool;
    for (Meet& meet : meets) {
        meet.started = &started;
        meet.idle = &idle;
        pool.schedule(meet);
    }
    shut_down_after(pool, idle);
    EXPECT_EQ(child.runs.load(), 1) << "a task left in worker 1's ring never ran";
}

TEST(IdleTasks, JoinsDrainIsolatesInRegionsOfItsOwn) {
    // The worker's last idle task leaves two tasks for the drain: `drained`,
    // which isolates and waits there, and `leftover`, scheduled inside the
    // worker's first region. The drain's first region must not share that
    // region's id (I1: the drain numbers its regions from max_threads + 1),
    // or its wait would run `leftover` inside its own region.
    using namespace std::chrono_literals;
    zap::ThreadPool pool(one_worker());
    std::atomic<bool> in_drains_region{false};
    std::atomic<int> foreign{0};
    Call leftover([&] {
        if (in_drains_region.load()) ++foreign;
    });
    Call drained([&] {
        pool.isolate([&] {
            zap::WaitGroup never_done;
            never_done.add(1);
            in_drains_region = true;
            EXPECT_FALSE(never_done.wait_for(20ms));  // helps: only tasks of this region
            in_drains_region = false;
            never_done.done();
        });
    });
    LastWords idle;
    idle.pool = &pool;
    idle.last = [&] {
        pool.schedule(drained);  // the ring is FIFO for its owner: the drain runs it first
        pool.isolate([&] { pool.schedule(leftover); });
    };
    Call starter([&] { idle.run(&idle); });
    pool.schedule(starter);
    shut_down_after(pool, idle);
    EXPECT_EQ(drained.runs.load(), 1);
    EXPECT_EQ(leftover.runs.load(), 1);
    EXPECT_EQ(foreign.load(), 0) << "the drain's isolated wait ran a task of the worker's region";
}

}  // namespace
