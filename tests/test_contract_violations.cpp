// SPDX-License-Identifier: MIT
// Contract violations: each misuse that debug builds catch, and what release
// builds do instead where the headers promise something (src/zap/assert.hpp:
// a failed check prints "zap: contract violated: <rule>" and aborts). The
// entry points of the drop-in layer that schedule (spawn, submit,
// parallel_for) have their own cases in test_spawn.cpp and
// test_parallel_for.cpp.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include <functional>
#include <string>
#include <vector>

namespace {

const zap::Config one_thread{.max_threads = 1};

// A task that records that it ran.
struct Flag : zap::Task {
    bool ran = false;
    Flag() : zap::Task(&run) {}
    static void run(zap::Task* task) { static_cast<Flag*>(task)->ran = true; }
};

// Each misuse of a pool that has been shut down, made from the test's own
// thread (not a task of the pool). It returns once the misuse has happened;
// in release builds what was handed over has run by then, on this thread.
struct AfterShutdown {
    const char* what;
    std::function<void(zap::ThreadPool&, Flag&)> misuse;
};

const std::vector<AfterShutdown>& after_shutdown() {
    static const std::vector<AfterShutdown> cases = {
        {"schedule(Task&)", [](zap::ThreadPool& pool, Flag& flag) { pool.schedule(flag); }},
        {"schedule(Batch)",
         [](zap::ThreadPool& pool, Flag& flag) {
             Flag first;  // a batch of two: in release builds both run, in order
             zap::Batch batch(first);
             batch.push(zap::Batch(flag));
             pool.schedule(std::move(batch));
             EXPECT_TRUE(first.ran);
         }},
        {"TaskGroup::run",
         [](zap::ThreadPool& pool, Flag& flag) {
             zap::TaskGroup group(pool);
             group.run([&] { flag.ran = true; });
             group.wait();
         }},
        {"parallel_invoke",
         [](zap::ThreadPool& pool, Flag& flag) { pool.parallel_invoke([] {}, [&] { flag.ran = true; }); }},
    };
    return cases;
}

}  // namespace

#ifndef NDEBUG

TEST(ContractViolationDeathTest, SchedulingAfterShutdownFromOutsideThePool) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    for (const AfterShutdown& entry : after_shutdown()) {
        EXPECT_DEATH(
            {
                zap::ThreadPool pool(one_thread);
                pool.shutdown();
                Flag flag;
                entry.misuse(pool, flag);
            },
            "contract violated: schedule\\(\\) after shutdown\\(\\)")
            << entry.what;
    }
}

TEST(ContractViolationDeathTest, JoinFromATaskOfThePool) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(one_thread);
            pool.submit([&] { pool.join(); }).get();
        },
        "contract violated: join\\(\\) from a task of this pool would wait for itself");
}

TEST(ContractViolationDeathTest, ScheduleIdleOffAWorker) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(one_thread);
            Flag flag;
            pool.schedule_idle(flag);
        },
        "contract violated: schedule_idle\\(\\) from a thread that is not running a task of this pool");
}

TEST(ContractViolationDeathTest, WaitGroupDoneMoreTimesThanAdd) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::WaitGroup group;
            group.add(1);
            group.done();
            group.done();
        },
        "contract violated: WaitGroup::done called more times than add");
}

TEST(ContractViolationDeathTest, WaitGroupCountOverflow) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::WaitGroup group;
            group.add((1u << 29) - 1);
            group.add(1);
        },
        "contract violated: WaitGroup::add overflows the 2\\^29 - 1 count");
}

#else  // release builds: what the headers promise instead

TEST(ContractViolation, SchedulingAfterShutdownRunsOnTheCallingThread) {
    for (const AfterShutdown& entry : after_shutdown()) {
        zap::ThreadPool pool(one_thread);
        pool.shutdown();
        Flag flag;
        entry.misuse(pool, flag);
        EXPECT_TRUE(flag.ran) << entry.what << ": nothing is lost";
    }
}

TEST(ContractViolation, ScheduleIdleOffAWorkerSchedulesAnOrdinaryTask) {
    zap::ThreadPool pool(one_thread);
    Flag flag;
    pool.schedule_idle(flag);
    pool.shutdown();
    pool.join();
    EXPECT_TRUE(flag.ran);
}

#endif
