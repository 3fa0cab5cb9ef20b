// SPDX-License-Identifier: MIT
// `co_await pool.schedule()`: the coroutine resumes on a worker of that pool,
// from outside and from a worker, on one thread and several; a hop allocates
// nothing; hops from many coroutines at once; after shutdown() it is
// schedule()'s contract violation; it moves until it is awaited, never after.
#include "counting_new.hpp"
#include "counting_platform.hpp"
#include "detached.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

// (A coroutine lambda reads its captures through the closure object: each
// test keeps the lambda in a variable that outlives the coroutine.)
using zap_test::Detached;

// `hops` hops, noting for each resumption whether it was on a worker.
template <class P>
Detached hopper(zap::BasicThreadPool<P>& pool, int hops, std::atomic<int>& on_worker, zap::BasicWaitGroup<P>& done) {
    for (int i = 0; i < hops; ++i) {
        co_await pool.schedule();
        if (pool.worker_index().has_value()) on_worker++;
    }
    done.done();
}

}  // namespace

TEST(ScheduleAwaiter, IsMovableUntilAwaitedNotCopyable) {
    // A coroutine type's await_transform may take the awaiter by value
    // (exec::task does); once awaited it is linked into the pool's queues.
    zap::ThreadPool pool(threads(1));
    using Awaiter = decltype(pool.schedule());
    static_assert(std::is_nothrow_move_constructible_v<Awaiter>, "movable until it is awaited");
    static_assert(!std::is_copy_constructible_v<Awaiter> && !std::is_copy_assignable_v<Awaiter>,
                  "one hop, one task: not copyable");
    std::atomic<int> on_worker{0};
    zap::WaitGroup done;
    done.add();
    auto body = [&]() -> Detached {
        auto first = pool.schedule();
        auto moved = std::move(first);  // before it is awaited: allowed
        co_await moved;
        if (pool.worker_index().has_value()) on_worker++;
        done.done();
    };
    body();
    done.wait();
    EXPECT_EQ(on_worker.load(), 1);
}

TEST(ScheduleAwaiter, FromOutsideResumesOnAWorker) {
    zap::ThreadPool pool(threads(2));
    const auto me = std::this_thread::get_id();
    std::thread::id resumed_on;
    std::optional<std::uint32_t> index;
    zap::WaitGroup done;
    done.add();
    auto body = [&]() -> Detached {
        co_await pool.schedule();
        resumed_on = std::this_thread::get_id();
        index = pool.worker_index();
        done.done();
    };
    body();
    done.wait();
    EXPECT_NE(resumed_on, me);
    ASSERT_TRUE(index.has_value());
    EXPECT_LT(*index, 2u);
}

TEST(ScheduleAwaiter, EveryHopFromAWorkerStaysOnThePool) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        std::atomic<int> on_worker{0};
        zap::WaitGroup done;
        done.add();
        hopper(pool, 1000, on_worker, done);
        done.wait();
        EXPECT_EQ(on_worker.load(), 1000) << n << " threads";
    }
}

TEST(ScheduleAwaiter, ManyCoroutinesHopAtOnce) {
    for (std::uint32_t n : {1u, 3u}) {
        zap::ThreadPool pool(threads(n));
        std::atomic<int> on_worker{0};
        zap::WaitGroup done;
        constexpr int coroutines = 500, hops = 40;
        done.add(coroutines);
        for (int c = 0; c < coroutines; ++c) hopper(pool, hops, on_worker, done);
        done.wait();
        EXPECT_EQ(on_worker.load(), coroutines * hops) << n << " threads";
    }
}

TEST(ScheduleAwaiter, AWaitOnTheOnlyWorkerRunsTheHop) {
    // A task on a pool of one thread waits for a coroutine that hops onto
    // that pool: the waiting worker's helping wait resumes it.
    zap::ThreadPool pool(threads(1));
    std::atomic<int> on_worker{0};
    pool.submit([&] {
            zap::WaitGroup done;
            done.add();
            hopper(pool, 10, on_worker, done);
            done.wait();
        }).get();
    EXPECT_EQ(on_worker.load(), 10);
}

TEST(ScheduleAwaiter, AHopAllocatesNothing) {
    // The awaiter, and with it the task, lives in the coroutine's frame: after
    // the frame (one allocation, when the coroutine is called) no hop
    // allocates, neither through the pool's Platform nor through operator new.
    zap::BasicThreadPool<CountingPlatform> pool(threads(2));
    pool.warm(2);
    constexpr int hops = 10'000;
    int platform_allocations = -1;
    long news = -1;
    zap::BasicWaitGroup<CountingPlatform> done;
    done.add();
    auto body = [&]() -> Detached {
        co_await pool.schedule();  // the first hop: the frame exists, the workers run
        const int before = CountingPlatform::allocations.load();
        const long news_before = heap_allocations.load();
        for (int i = 1; i < hops; ++i) co_await pool.schedule();
        platform_allocations = CountingPlatform::allocations.load() - before;
        news = heap_allocations.load() - news_before;
        done.done();
    };
    body();
    done.wait();
    EXPECT_EQ(platform_allocations, 0) << "over " << hops - 1 << " hops";
    if (ZAP_TEST_COUNTS_NEW) {
        EXPECT_EQ(news, 0) << "over " << hops - 1 << " hops";
    }
}

#ifndef NDEBUG
TEST(ScheduleAwaiterDeathTest, MovedAfterItWasAwaitedAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(1));
            auto awaiter = pool.schedule();
            awaiter.await_suspend(std::noop_coroutine());  // what co_await does: now it is queued
            auto moved = std::move(awaiter);
            (void)moved;
        },
        "contract violated: a schedule awaiter moved after it was awaited");
}

TEST(ScheduleAwaiterDeathTest, AfterShutdownFromOutsideThePoolAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(1));
            pool.shutdown();
            auto body = [&]() -> Detached { co_await pool.schedule(); };
            body();
        },
        "contract violated: schedule\\(\\) after shutdown\\(\\)");
}
#else
TEST(ScheduleAwaiter, AfterShutdownReleaseBuildsResumeOnTheCallingThread) {
    zap::ThreadPool pool(threads(1));
    pool.shutdown();
    const auto me = std::this_thread::get_id();
    std::thread::id resumed_on;
    auto body = [&]() -> Detached {
        co_await pool.schedule();
        resumed_on = std::this_thread::get_id();
    };
    body();
    EXPECT_EQ(resumed_on, me) << "the hop ran at once, inside await_suspend";
}
#endif
