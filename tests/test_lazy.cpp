// SPDX-License-Identifier: MIT
// zap::Lazy (src/zap/lazy.hpp): lazy start, results and exceptions through
// co_await, symmetric transfer (a chain far deeper than any stack), one frame
// per lazy and nothing more, when_all (tuple and vector, void children,
// first exception by position after every child ran, and before any value
// is moved out) and sync_wait, on and off the pool, a pool of one thread
// included; move assignment hands the frame over; the thread a lazy runs on
// after each hop (pool.worker_index(), which the clang <= 14 caveat of
// lazy.hpp does not touch); awaiting twice is a contract violation. A lazy
// never resumed fails its test (hang_watchdog.hpp) instead of hanging.
#include "counting_new.hpp"
#include "hang_watchdog.hpp"
#include "sentinel.hpp"

#include <zap/lazy.hpp>
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

// Set by tests/CMakeLists.txt (1 where the build makes symmetric transfer a
// tail call); a build that does not say, such as the schemata twin, skips.
#ifndef ZAP_TEST_TAIL_CALLS
#define ZAP_TEST_TAIL_CALLS 0
#endif

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

zap::Lazy<int> answer(std::atomic<int>& started) {
    started++;
    co_return 42;
}

zap::Lazy<void> nothing(std::atomic<int>& ran) {
    ran++;
    co_return;
}

zap::Lazy<std::unique_ptr<int>> move_only(int v) { co_return std::make_unique<int>(v); }

zap::Lazy<int> throws_after(zap::ThreadPool* pool, std::atomic<int>& ran, std::string what) {
    if (pool != nullptr) co_await pool->schedule();
    ran++;
    throw std::runtime_error(what);
}

zap::Lazy<void> fails(zap::ThreadPool* pool, std::atomic<int>& ran, std::string what) {
    if (pool != nullptr) co_await pool->schedule();
    ran++;
    throw std::runtime_error(what);
}

// A frame keeps its arguments until it is destroyed: `frame` counts that.
zap::Lazy<int> holds(Sentinel frame, int v) {
    (void)frame;
    co_return v;
}

// A value whose move constructor throws once `armed` is set.
struct ThrowsWhenMovedArmed {
    static inline std::atomic<bool> armed{false};
    ThrowsWhenMovedArmed() = default;
    ThrowsWhenMovedArmed(ThrowsWhenMovedArmed&&) {
        if (armed) throw std::logic_error("a value was moved out");
    }
};

zap::Lazy<ThrowsWhenMovedArmed> made() { co_return ThrowsWhenMovedArmed{}; }

// Arms ThrowsWhenMovedArmed, then throws.
zap::Lazy<ThrowsWhenMovedArmed> arms_then_throws() {
    ThrowsWhenMovedArmed::armed = true;
    throw std::runtime_error("the child's");
    co_return ThrowsWhenMovedArmed{};
}

// How far below `base` the calling thread's stack is here (a coroutine's
// own locals may live in its frame, on the heap: this function's do not).
[[gnu::noinline]] std::ptrdiff_t stack_below(const char* base) {
    volatile char here = 0;
    return base - const_cast<const char*>(&here);
}

// Each level awaits the next: a chain of `depth` lazies, resumed by
// symmetric transfer. The innermost notes how deep in the stack it runs.
zap::Lazy<long> chain(int depth, const char* base, std::ptrdiff_t& deepest) {
    if (depth == 0) {
        deepest = stack_below(base);
        co_return 0;
    }
    co_return 1 + co_await chain(depth - 1, base, deepest);
}

// Hops onto the pool, then sums [first, last) on the worker; notes whether it was on a worker.
zap::Lazy<long long> sum_on(zap::ThreadPool& pool, long long first, long long last, std::atomic<int>& off_worker) {
    co_await pool.schedule();
    if (!pool.worker_index().has_value()) off_worker++;
    long long s = 0;
    for (long long i = first; i < last; ++i) s += i;
    co_return s;
}

// fib with a hop and a fork in every call.
zap::Lazy<long> fib(zap::ThreadPool& pool, int n) {
    co_await pool.schedule();
    if (n < 2) co_return n;
    auto [a, b] = co_await zap::when_all(fib(pool, n - 1), fib(pool, n - 2));
    co_return a + b;
}

long fib_loop(int n) {
    long a = 0, b = 1;
    for (int i = 0; i < n; ++i) a = std::exchange(b, a + b);
    return a;
}

}  // namespace

TEST(Lazy, StartsOnlyWhenAwaited) {
    std::atomic<int> started{0};
    {
        auto lazy = answer(started);
        EXPECT_EQ(started.load(), 0) << "a lazy runs nothing before it is awaited";
    }
    EXPECT_EQ(started.load(), 0) << "destroying an unstarted lazy runs nothing";
    EXPECT_EQ(zap::sync_wait(answer(started)), 42);
    EXPECT_EQ(started.load(), 1);
}

TEST(Lazy, ResultsVoidAndMoveOnly) {
    std::atomic<int> ran{0};
    zap::sync_wait(nothing(ran));
    EXPECT_EQ(ran.load(), 1);
    EXPECT_EQ(*zap::sync_wait(move_only(7)), 7);
}

TEST(Lazy, AnExceptionReachesTheAwaiter) {
    std::atomic<int> ran{0};
    auto outer = [&]() -> zap::Lazy<std::string> {
        try {
            co_await throws_after(nullptr, ran, "inner");
        } catch (const std::runtime_error& e) {
            co_return std::string("caught ") + e.what();
        }
        co_return "not thrown";
    };
    EXPECT_EQ(zap::sync_wait(outer()), "caught inner");
    EXPECT_THROW(zap::sync_wait(throws_after(nullptr, ran, "x")), std::runtime_error);
}

TEST(Lazy, SymmetricTransferKeepsTheStackFlat) {
    // Ten thousand nested awaits: each transfer is a tail call, so the
    // innermost runs no deeper in the stack than the first. A tail call the
    // compiler may skip: GCC 12 makes it from -O2 (tests/CMakeLists.txt
    // defines ZAP_TEST_TAIL_CALLS where the build promises it).
    if (!ZAP_TEST_TAIL_CALLS) GTEST_SKIP() << "this build (GCC below -O2) does not make symmetric transfer a tail call";
    volatile char base = 0;
    std::ptrdiff_t deepest = 0;
    EXPECT_EQ(zap::sync_wait(chain(10'000, const_cast<const char*>(&base), deepest)), 10'000);
    EXPECT_LT(deepest, 64 * 1024) << "bytes of stack under 10,000 nested awaits";
}

TEST(Lazy, OneAllocationPerLazyAndNoneForTheHopsAndJoins) {
    if (!ZAP_TEST_COUNTS_NEW) GTEST_SKIP() << "ThreadSanitizer owns operator new; counted in the other builds";
    zap::ThreadPool pool(threads(2));
    pool.warm(2);
    std::atomic<int> off{0};
    (void)zap::sync_wait(sum_on(pool, 0, 10, off));  // the pool's first hop has happened
    const long before = heap_allocations.load();
    auto [a, b] = zap::sync_wait(zap::when_all(sum_on(pool, 0, 10, off), sum_on(pool, 10, 20, off)));
    const long made = heap_allocations.load() - before;
    EXPECT_EQ(a + b, 190);
    EXPECT_EQ(made, 3) << "three frames (two children and when_all's), nothing else";
    // The vector form: when_all's frame and one buffer for the results
    // (the children's frames are made before, by calling them).
    std::vector<zap::Lazy<long long>> children;
    for (int i = 0; i < 64; ++i) children.push_back(sum_on(pool, i, i + 1, off));
    const long before_vector = heap_allocations.load();
    const auto sums = zap::sync_wait(zap::when_all(std::move(children)));
    const long made_vector = heap_allocations.load() - before_vector;
    EXPECT_EQ(std::accumulate(sums.begin(), sums.end(), 0LL), 2016);
    EXPECT_EQ(made_vector, 2) << "when_all's frame and the results' one buffer, nothing else";
}

TEST(Lazy, WhenAllOffThePoolRunsTheChildrenInline) {
    std::atomic<int> started{0}, ran{0};
    auto [x, v] = zap::sync_wait(zap::when_all(answer(started), nothing(ran)));
    EXPECT_EQ(x, 42);
    EXPECT_EQ(v, std::monostate{});
    // Children that never hop run one after the other on the awaiting thread.
    std::vector<std::thread::id> where;
    auto note = [&]() -> zap::Lazy<void> {
        where.push_back(std::this_thread::get_id());
        co_return;
    };
    zap::sync_wait(zap::when_all(note(), note(), note()));
    EXPECT_EQ(where, std::vector<std::thread::id>(3, std::this_thread::get_id()));
    EXPECT_EQ(started.load() + ran.load(), 2);
    std::vector<zap::Lazy<int>> many;
    for (int i = 0; i < 5; ++i) many.push_back(answer(started));
    const std::vector<int> results = zap::sync_wait(zap::when_all(std::move(many)));
    EXPECT_EQ(results, std::vector<int>(5, 42));
    std::vector<zap::Lazy<void>> voids;
    for (int i = 0; i < 3; ++i) voids.push_back(nothing(ran));
    zap::sync_wait(zap::when_all(std::move(voids)));
    EXPECT_EQ(ran.load(), 4);
    EXPECT_EQ(std::get<0>(zap::sync_wait(zap::when_all(answer(started)))), 42);
    zap::sync_wait(zap::when_all(std::vector<zap::Lazy<int>>{}));  // nothing to wait for
}

TEST(Lazy, WhenAllFansOutOverTheWorkers) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        std::atomic<int> off{0};
        constexpr long long parts = 64, per = 1000;  // the total passes 2^31: long is 32 bits on Windows
        std::vector<zap::Lazy<long long>> children;
        for (long long p = 0; p < parts; ++p) children.push_back(sum_on(pool, p * per, (p + 1) * per, off));
        const std::vector<long long> sums = zap::sync_wait(zap::when_all(std::move(children)));
        const long long total = std::accumulate(sums.begin(), sums.end(), 0LL);
        EXPECT_EQ(total, parts * per * (parts * per - 1) / 2) << n << " threads";
        EXPECT_EQ(off.load(), 0) << "every child ran on a worker after its hop";
    }
}

TEST(Lazy, ForkJoinFibOnAndOffThePool) {
    for (std::uint32_t n : {1u, 3u}) {
        zap::ThreadPool pool(threads(n));
        EXPECT_EQ(zap::sync_wait(fib(pool, 20)), fib_loop(20)) << n << " threads";
    }
}

TEST(Lazy, SyncWaitOnTheOnlyWorkerHelps) {
    // A task of a one-thread pool waits for a lazy that hops onto that
    // pool: a blocking wait would never see the hop run; sync_wait's helps.
    zap::ThreadPool pool(threads(1));
    std::atomic<int> off{0};
    const long sum = pool.submit([&] { return zap::sync_wait(fib(pool, 12)) + zap::sync_wait(sum_on(pool, 0, 5, off)); }).get();
    EXPECT_EQ(sum, fib_loop(12) + 10);
    EXPECT_EQ(off.load(), 0);
}

TEST(Lazy, WhenAllRethrowsTheFirstByPositionAfterEveryChildRan) {
    zap::ThreadPool pool(threads(3));
    std::atomic<int> ran{0}, started{0};
    auto all = zap::when_all(answer(started), throws_after(&pool, ran, "second"), throws_after(&pool, ran, "third"));
    try {
        (void)zap::sync_wait(std::move(all));
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "second");
    }
    EXPECT_EQ(ran.load(), 2) << "both throwing children ran";
    EXPECT_EQ(started.load(), 1);
}

TEST(Lazy, WhenAllOfVoidChildrenRethrowsTheFirstByPosition) {
    zap::ThreadPool pool(threads(3));
    for (zap::ThreadPool* on : {static_cast<zap::ThreadPool*>(nullptr), &pool}) {
        std::atomic<int> ran{0};
        std::vector<zap::Lazy<void>> children;
        children.push_back(nothing(ran));
        children.push_back(fails(on, ran, "second"));
        children.push_back(fails(on, ran, "third"));
        try {
            zap::sync_wait(zap::when_all(std::move(children)));
            ADD_FAILURE() << "no exception" << (on ? " (on the pool)" : " (off the pool)");
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()), "second");
        }
        EXPECT_EQ(ran.load(), 3) << "every child ran";
    }
}

TEST(Lazy, WhenAllRethrowsBeforeMovingAnyValueOut) {
    // Off the pool the children run in order: the first has its value when
    // the second arms the value's move and throws. The caller gets the
    // child's exception, not one from moving the first child's value.
    for (bool vector : {false, true}) {
        ThrowsWhenMovedArmed::armed = false;
        try {
            if (vector) {
                std::vector<zap::Lazy<ThrowsWhenMovedArmed>> children;
                children.push_back(made());
                children.push_back(arms_then_throws());
                (void)zap::sync_wait(zap::when_all(std::move(children)));
            } else {
                (void)zap::sync_wait(zap::when_all(made(), arms_then_throws()));
            }
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()), "the child's");
        } catch (const std::logic_error& e) {
            ADD_FAILURE() << (vector ? "vector" : "tuple") << ": " << e.what() << " before the child's exception";
        }
    }
    ThrowsWhenMovedArmed::armed = false;
}

TEST(Lazy, MoveAssignmentDestroysTheOldFrameAndTakesTheOther) {
    auto first = std::make_shared<std::atomic<int>>(0);
    auto second = std::make_shared<std::atomic<int>>(0);
    zap::Lazy<int> a = holds(Sentinel(first), 1);
    zap::Lazy<int>& same = a;
    a = std::move(same);
    EXPECT_EQ(first->load(), 0) << "assigning a lazy to itself keeps its frame";
    {
        zap::Lazy<int> b = holds(Sentinel(second), 2);
        a = std::move(b);
        EXPECT_EQ(first->load(), 1) << "the frame `a` held is destroyed";
    }
    EXPECT_EQ(second->load(), 0) << "the moved-from lazy no longer owns its frame";
    EXPECT_EQ(zap::sync_wait(std::move(a)), 2);
    EXPECT_EQ(second->load(), 1);
}

TEST(Lazy, WorkerIndexIsTheResumingThreadsAfterEveryHop) {
    // The clang <= 14 caveat (lazy.hpp) is about std::this_thread::get_id();
    // worker_index() must be right after every hop, whatever the compiler.
    zap::ThreadPool pool(threads(2));
    std::atomic<int> wrong{0};
    auto hopper = [&]() -> zap::Lazy<std::set<std::uint32_t>> {
        std::set<std::uint32_t> seen;
        if (pool.worker_index().has_value()) wrong++;  // started off the pool
        for (int i = 0; i < 2000; ++i) {
            co_await pool.schedule();
            const auto index = pool.worker_index();
            if (!index.has_value()) {
                wrong++;
            } else {
                seen.insert(*index);
            }
        }
        co_return seen;
    };
    const auto seen = zap::sync_wait(hopper());
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_FALSE(seen.empty());
}

#ifndef NDEBUG
TEST(LazyDeathTest, AwaitingTwiceAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            std::atomic<int> started{0};
            auto lazy = answer(started);
            auto twice = [&]() -> zap::Lazy<int> {
                const int a = co_await lazy;
                co_return a + co_await lazy;
            };
            (void)zap::sync_wait(twice());
        },
        "contract violated: a zap::Lazy is awaited once");
}
#endif
