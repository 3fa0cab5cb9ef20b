// SPDX-License-Identifier: MIT
// spawn() and submit(): heap tasks, their one allocation, exceptions,
// lifetimes of the callable, and use after shutdown().
#include "counting_platform.hpp"
#include "sentinel.hpp"

#include <zap/portable_platform.hpp>
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define ZAP_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ZAP_TEST_TSAN 1
#endif
#endif

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

}  // namespace

TEST(Spawn, RunsEveryCallableOnce) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        constexpr int count = 2000;
        std::vector<std::atomic<int>> runs(count);
        zap::WaitGroup wg;
        wg.add(count);
        {
            zap::ThreadPool pool(threads(n));
            for (int i = 0; i < count; ++i) pool.spawn([&, i] {
                runs[i].fetch_add(1);
                wg.done();
            });
            wg.wait();
        }
        for (int i = 0; i < count; ++i) ASSERT_EQ(runs[i].load(), 1) << i;
    }
}

TEST(Spawn, DestructorRunsWhatWasSpawnedIncludingChildren) {
    std::atomic<int> ran{0};
    {
        zap::ThreadPool pool(threads(2));
        for (int i = 0; i < 100; ++i) pool.spawn([&] {
            ran++;
            pool.spawn([&] { ran++; });  // spawned by a running task: part of the drain
        });
    }
    EXPECT_EQ(ran.load(), 200);
}

TEST(Spawn, TakesMoveOnlyCallables) {
    std::atomic<int> seen{0};
    {
        zap::ThreadPool pool(threads(2));
        auto value = std::make_unique<int>(42);
        pool.spawn([&seen, value = std::move(value)] { seen = *value; });
    }
    EXPECT_EQ(seen.load(), 42);
}

TEST(Spawn, ATaskTooLargeForABlockIsOnePlatformAllocation) {
    // closure_alloc.hpp: a heap task larger than a block's payload goes to the Platform.
    zap::BasicThreadPool<CountingPlatform> pool(threads(2));
    zap::BasicWaitGroup<CountingPlatform> wg;
    std::array<char, 256> big{};
    big.back() = 'z';
    wg.add(2);
    const int before = CountingPlatform::allocations.load();
    pool.spawn([&wg, big] {
        EXPECT_EQ(big.back(), 'z');  // the capture arrived whole
        wg.done();
    });
    pool.spawn([&wg, big] {
        EXPECT_EQ(big.back(), 'z');
        wg.done();
    });
    EXPECT_EQ(CountingPlatform::allocations.load() - before, 2);
    wg.wait();
}

// Whether spawn.hpp takes heap tasks from closure_alloc.hpp on platform P.
template <class P>
constexpr bool recycles_closures = requires { P::recycles_closures; };

TEST(Spawn, SmallTasksReuseTheirBlocks) {
    if constexpr (!recycles_closures<CountingPlatform>) {
        GTEST_SKIP() << "this platform allocates every heap task (closure recycling is the Linux and Windows platforms')";
    }
    // A small task's block comes back to the spawning thread once the task
    // has run (submit's future is ready only after its task is freed), so
    // tasks spawned one after another take one slab from the Platform at
    // most (and the spawning thread's Cache, a Platform allocation too).
    zap::BasicThreadPool<CountingPlatform> pool(threads(2));
    const int before = CountingPlatform::allocations.load();
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(pool.submit([i] { return i; }).get(), i);
    EXPECT_LE(CountingPlatform::allocations.load() - before, 2);
}

// A platform that allocates every heap task on its own (the portable one,
// without the closure recycler) and audits each block it is given back: how
// many are still out, and whether the callable in it had been destroyed -
// an Audited capture stamps its destructor's mark over its live one.
struct AuditingPlatform : zap::PortablePlatform {
    static constexpr std::uint64_t live = 0x11fe'11fe'11fe'11feu;
    static inline std::atomic<long> outstanding{0};
    static inline std::atomic<long> freed_while_live{0};

    static void* allocate(std::size_t size, std::size_t align) {
        outstanding.fetch_add(1);  // a counter only
        return zap::PortablePlatform::allocate(size, align);
    }
    static void deallocate(void* p, std::size_t size, std::size_t align) noexcept {
        const auto* words = static_cast<const std::uint64_t*>(p);
        for (std::size_t i = 0; i < size / sizeof(std::uint64_t); ++i)
            if (words[i] == live) freed_while_live.fetch_add(1);  // a counter only
        outstanding.fetch_sub(1);
        zap::PortablePlatform::deallocate(p, size, align);
    }
};

struct Audited {
    volatile std::uint64_t mark = AuditingPlatform::live;  // volatile: the destructor's store is kept
    Audited() = default;
    Audited(Audited&&) noexcept = default;
    ~Audited() { mark = 0; }
};

TEST(Spawn, TheCallableIsDestroyedBeforeItsBlockIsGivenBack) {
    {
        zap::BasicThreadPool<AuditingPlatform> pool(threads(2));
        for (int i = 0; i < 100; ++i) pool.spawn([audited = Audited{}] { (void)audited; });
    }
    EXPECT_EQ(AuditingPlatform::freed_while_live.load(), 0);
}

TEST(Spawn, ACallableWhoseMoveThrowsLeavesNoBlockBehind) {
    // spawn() moves the callable twice: into the task's job, then into the
    // task's block. The second move throws here, inside the block.
    struct SecondMoveThrows {
        int moves = 0;
        SecondMoveThrows() = default;
        SecondMoveThrows(SecondMoveThrows&& other) : moves(other.moves + 1) {
            if (moves == 2) throw std::runtime_error("second move");
        }
        void operator()() const {}
    };
    zap::BasicThreadPool<AuditingPlatform> pool(threads(1));
    const long before = AuditingPlatform::outstanding.load();
    EXPECT_THROW(pool.spawn(SecondMoveThrows{}), std::runtime_error);
    EXPECT_EQ(AuditingPlatform::outstanding.load(), before);
}

TEST(SpawnDeathTest, ExceptionEscapingASpawnedTaskTerminates) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(1));
            pool.spawn([] { throw std::runtime_error("escaped from spawn"); });
        },
        "escaped from spawn");
}

// Config::on_unhandled_exception: a handler instead of std::terminate. It
// reads the message on the worker; the exception dies there too (one read
// on another thread would be unit.spawn's ThreadSanitizer false positive).
TEST(OnUnhandledException, ReceivesWhatEscapedASpawnAndThePoolGoesOn) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        std::mutex mutex;
        std::vector<std::string> messages;
        std::atomic<int> ran{0};
        {
            zap::Config config = threads(n);
            config.on_unhandled_exception = [&](std::exception_ptr error) {
                try {
                    std::rethrow_exception(error);
                } catch (const std::exception& e) {
                    std::lock_guard lock(mutex);
                    messages.emplace_back(e.what());
                }
            };
            zap::ThreadPool pool(config);
            for (int i = 0; i < 300; ++i) {
                pool.spawn([&ran, i] {
                    ran++;
                    if (i % 3 == 0) throw std::runtime_error("spawned " + std::to_string(i));
                });
            }
        }  // the destructor runs every task
        EXPECT_EQ(ran.load(), 300) << n << " threads";
        ASSERT_EQ(messages.size(), 100u) << n << " threads: one call per escaped exception";
        std::sort(messages.begin(), messages.end());
        EXPECT_TRUE(std::binary_search(messages.begin(), messages.end(), "spawned 297"));
    }
}

TEST(OnUnhandledException, RunsOnTheWorkerAfterTheCallableIsGone) {
    // As for a future (spawn.hpp, steps 4-5): when the handler hears of the
    // exception, the callable and its captures have been destroyed.
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    std::atomic<int> calls{0};
    std::atomic<bool> callable_was_gone{false};
    std::atomic<bool> on_worker{false};
    zap::ThreadPool* self = nullptr;
    {
        zap::Config config = threads(2);
        config.on_unhandled_exception = [&](std::exception_ptr) {
            callable_was_gone = destroyed->load() == 1;
            on_worker = self->worker_index().has_value();
            calls++;
        };
        zap::ThreadPool pool(config);
        self = &pool;
        pool.spawn([s = Sentinel(destroyed)] { throw 42; });
    }
    EXPECT_EQ(calls.load(), 1);
    EXPECT_TRUE(callable_was_gone.load());
    EXPECT_TRUE(on_worker.load());
}

TEST(OnUnhandledException, OnlyForSpawnNotForSubmitOrTaskGroup) {
    std::atomic<int> calls{0};
    zap::Config config = threads(2);
    config.on_unhandled_exception = [&](std::exception_ptr) { calls++; };
    zap::ThreadPool pool(config);
    zap::TaskGroup group(pool);
    group.run([] { throw std::logic_error("child"); });
    EXPECT_THROW(group.wait(), std::logic_error) << "a child's exception is the group's";
    auto future = pool.submit([]() -> int { throw std::logic_error("submitted"); });
    future.wait();
    EXPECT_EQ(calls.load(), 0) << "submit's exception is the future's";
}

TEST(OnUnhandledExceptionDeathTest, AThrowingHandlerTerminates) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::Config config = threads(1);
            config.on_unhandled_exception = [](std::exception_ptr) { throw std::runtime_error("from the handler"); };
            zap::ThreadPool pool(config);
            pool.spawn([] { throw 1; });
        },
        "from the handler");
}

#ifndef NDEBUG
TEST(SpawnDeathTest, AfterShutdownFromOutsideThePoolAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(1));
            pool.shutdown();
            pool.spawn([] {});
        },
        "contract violated: schedule\\(\\) after shutdown\\(\\)");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(1));
            pool.shutdown();
            (void)pool.submit([] { return 1; });
        },
        "contract violated: schedule\\(\\) after shutdown\\(\\)");
}
#else
TEST(Spawn, AfterShutdownReleaseBuildsRunOnTheCallingThread) {
    zap::ThreadPool pool(threads(1));
    pool.shutdown();
    std::thread::id ran_on;
    pool.spawn([&] { ran_on = std::this_thread::get_id(); });
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    auto future = pool.submit([] { return 7; });
    EXPECT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_EQ(future.get(), 7);
}
#endif

TEST(Spawn, ByRunningTasksAfterShutdownIsPartOfTheDrain) {
    std::atomic<int> ran{0};
    {
        zap::ThreadPool pool(threads(1));
        zap::WaitGroup started;
        std::atomic<bool> release{false};
        started.add();
        pool.spawn([&] {
            started.done();
            while (!release) std::this_thread::yield();
            pool.spawn([&] { ran++; });  // after shutdown(), from a task of the pool: allowed
        });
        started.wait();
        pool.shutdown();
        release = true;
        pool.join();
    }
    EXPECT_EQ(ran.load(), 1);
}

TEST(Submit, DeliversValuesVoidAndReferences) {
    zap::ThreadPool pool(threads(2));
    auto value = pool.submit([] { return std::string("forty-two"); });
    std::atomic<bool> ran{false};
    auto nothing = pool.submit([&] { ran = true; });
    int target = 5;
    auto reference = pool.submit([&target]() -> int& { return target; });
    auto move_only = pool.submit([] { return std::make_unique<int>(9); });
    EXPECT_EQ(value.get(), "forty-two");
    nothing.get();
    EXPECT_TRUE(ran.load());
    EXPECT_EQ(&reference.get(), &target);
    EXPECT_EQ(*move_only.get(), 9);
}

TEST(Submit, ExceptionGoesIntoTheFuture) {
    zap::ThreadPool pool(threads(2));
    auto failed = pool.submit([]() -> int { throw std::runtime_error("into the future"); });
    auto fine = pool.submit([] { return 3; });
    try {
        failed.get();
        FAIL() << "get() returned";
    } catch (const std::runtime_error& error) {
        EXPECT_STREQ(error.what(), "into the future");
    }
    EXPECT_EQ(fine.get(), 3);  // the pool and its other tasks are unaffected
}

TEST(Submit, AResultWhoseMoveThrowsIntoTheFutureDeliversThatException) {
    // The result is moved twice on its way: into the task's keeping, then
    // into the future. The second move throws here; its exception, not a
    // broken promise, is what get() reports.
#if !(defined(__x86_64__) && defined(__GLIBC__)) || defined(ZAP_TEST_TSAN)
    // std::promise::set_value runs in std::call_once, which deadlocks when
    // the callable throws where call_once is not exception-safe: MinGW-w64's
    // (GCC bug 66146) and ThreadSanitizer's pthread_once, which stays
    // "running" after a throw; this test hung under both.
    GTEST_SKIP() << "std::call_once is not exception-safe here (GCC bug 66146, or TSan's pthread_once)";
#endif
    struct SecondMoveThrows {
        int moves = 0;
        SecondMoveThrows() = default;
        SecondMoveThrows(SecondMoveThrows&& other) : moves(other.moves + 1) {
            if (moves == 2) throw std::runtime_error("second move");
        }
    };
    zap::ThreadPool pool(threads(1));
    auto result = pool.submit([] { return SecondMoveThrows{}; });
    try {
        result.get();
        FAIL() << "get() returned";
    } catch (const std::runtime_error& error) {
        EXPECT_STREQ(error.what(), "second move");
    }
}

TEST(Submit, CallableIsDestroyedBeforeTheFutureIsReady) {
    zap::ThreadPool pool(threads(2));
    for (int round = 0; round < 200; ++round) {
        auto destroyed = std::make_shared<std::atomic<int>>(0);
        auto future = pool.submit([sentinel = Sentinel(destroyed)] { return 1; });
        EXPECT_EQ(future.get(), 1);
        ASSERT_EQ(destroyed->load(), 1) << "round " << round;
    }
}

TEST(Submit, FromInsideTasksAndFromOtherThreads) {
    zap::ThreadPool pool(threads(2));
    std::vector<std::thread> outside;
    std::atomic<int> sum{0};
    for (int t = 0; t < 3; ++t) outside.emplace_back([&] {
        for (int i = 0; i < 100; ++i) {
            // A task that submits a child and hands the child's future out.
            auto outer = pool.submit([&pool, i] { return pool.submit([i] { return i; }); });
            sum += outer.get().get();  // waited for here, outside the pool: no worker blocks
        }
    });
    for (auto& thread : outside) thread.join();
    EXPECT_EQ(sum.load(), 3 * 4950);
}
