// SPDX-License-Identifier: MIT
// Idle tasks (schedule_idle, Worker::run_idle_tasks): an idle task that
// re-queues itself waits for the worker's next idle turn, so it neither keeps
// the worker from its other tasks nor from sleeping; at shutdown the worker
// runs idle tasks until none is left. An idle task that never runs fails
// its test (hang_watchdog.hpp).
#include "hang_watchdog.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

zap::Config one_worker() {
    zap::Config config;
    config.max_threads = 1;
    return config;
}

// Re-queues itself until `stop` is set or it has run `limit` times.
struct Requeuer : zap::Task {
    zap::ThreadPool* pool = nullptr;
    std::atomic<bool> stop{false};
    std::atomic<int> runs{0};
    int limit = 0;
    Requeuer() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Requeuer*>(t);
        const int runs = self->runs.fetch_add(1) + 1;
        if (runs < self->limit && !self->stop.load()) self->pool->schedule_idle(*self);
    }
};

// Queues the requeuer as an idle task of the worker that runs it.
struct Starter : zap::Task {
    Requeuer* idle = nullptr;
    Starter() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Starter*>(t);
        self->idle->pool->schedule_idle(*self->idle);
    }
};

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
    idle.pool = &pool;
    idle.limit = limit;
    Starter starter;
    starter.idle = &idle;
    Stopper stopper;
    stopper.idle = &idle;
    pool.schedule(starter);
    while (idle.runs.load() == 0) std::this_thread::yield();
    pool.schedule(stopper);
    while (stopper.runs_seen.load() < 0) std::this_thread::yield();
    EXPECT_LT(stopper.runs_seen.load(), limit);
    EXPECT_LT(stopper.runs_seen.load(), 1000) << "one run per idle turn, and the worker had few idle turns";
}

TEST(IdleTasks, ShutdownRunsIdleTasksUntilNoneIsLeft) {
    // Never stopped: the requeuer runs `limit` times, all of them on the
    // worker before join() returns (a re-queue from join()'s drain would
    // violate schedule_idle()'s rule that only a worker may call it).
    constexpr int limit = 50;
    Requeuer idle;
    idle.limit = limit;
    Starter starter;
    starter.idle = &idle;
    {
        zap::ThreadPool pool(one_worker());
        idle.pool = &pool;
        pool.schedule(starter);
        while (idle.runs.load() == 0) std::this_thread::yield();
    }  // the destructor shuts down and joins
    EXPECT_EQ(idle.runs.load(), limit);
}

}  // namespace
