// SPDX-License-Identifier: MIT
// parallel_reduce and transform_reduce: the documented tree and nothing
// else decides the result (a float sum bit for bit the same on 1, 2, 4 and
// 64 threads, inside and outside the pool), order kept for a non-commutative
// reduce, empty ranges, signed ranges at their limits, exceptions from map,
// transform and reduce, no allocation.
#include "counting_new.hpp"
#include "counting_platform.hpp"
#include "held_worker.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <thread>
#include <vector>

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

// The tree as docs/drop_in.md states it, written out here on its own: parts
// longer than `leaf` halved at lo + (hi - lo) / 2, leaves folded left to right.
template <class T, class At, class Reduce>
T documented_tree(std::size_t lo, std::size_t hi, std::size_t leaf, At at, Reduce reduce) {
    if (hi - lo <= leaf) {
        T acc = at(lo);
        for (std::size_t i = lo + 1; i < hi; ++i) acc = reduce(acc, at(i));
        return acc;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    return reduce(documented_tree<T>(lo, mid, leaf, at, reduce), documented_tree<T>(mid, hi, leaf, at, reduce));
}

std::size_t documented_leaf(std::size_t n) { return (n + 1023) / 1024; }

// Terms whose sum depends strongly on grouping: mixed signs, magnitudes 2^-20 .. 2^20.
std::vector<float> wild_floats(std::size_t n) {
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(-20, 20);
    std::vector<float> v(n);
    for (auto& x : v) x = std::ldexp(mantissa(rng), exponent(rng)) * (rng() % 2 == 0 ? 1.0f : -1.0f);
    return v;
}

float pool_sum(zap::ThreadPool& pool, const std::vector<float>& v) {
    return pool.parallel_reduce(std::size_t{0}, v.size(), 0.0f, [&](std::size_t i) { return v[i]; },
                                [](float a, float b) { return a + b; });
}

struct Boom : std::runtime_error {
    Boom() : std::runtime_error("boom") {}
};

}  // namespace

TEST(ParallelReduce, FloatSumIsBitwiseTheSameOnEveryPoolSize) {
    const std::vector<float> v = wild_floats(1 << 20);
    auto at = [&](std::size_t i) { return v[i]; };
    auto plus = [](float a, float b) { return a + b; };
    const float expected = documented_tree<float>(0, v.size(), documented_leaf(v.size()), at, plus);
    // The check can fail: this input's sum changes with the grouping. Left to
    // right gives another float, and so does a tree whose leaves were cut
    // for two threads (eight pieces) instead of by the range's size alone.
    const float serial = std::accumulate(v.begin(), v.end(), 0.0f);
    const float per_thread_tree = documented_tree<float>(0, v.size(), v.size() / 8, at, plus);
    EXPECT_NE(std::bit_cast<std::uint32_t>(serial), std::bit_cast<std::uint32_t>(expected));
    EXPECT_NE(std::bit_cast<std::uint32_t>(per_thread_tree), std::bit_cast<std::uint32_t>(expected));
    std::printf("sum of %zu floats: tree %a, left to right %a, eight-piece tree %a\n", v.size(),
                static_cast<double>(expected), static_cast<double>(serial), static_cast<double>(per_thread_tree));
    for (std::uint32_t n : {1u, 2u, 4u, 64u}) {
        zap::ThreadPool pool(threads(n));
        for (int round = 0; round < 5; ++round) {
            const float outside = pool_sum(pool, v);
            const float inside = pool.submit([&] { return pool_sum(pool, v); }).get();
            ASSERT_EQ(std::bit_cast<std::uint32_t>(outside), std::bit_cast<std::uint32_t>(expected))
                << n << " threads, from outside, round " << round;
            ASSERT_EQ(std::bit_cast<std::uint32_t>(inside), std::bit_cast<std::uint32_t>(expected))
                << n << " threads, from a task, round " << round;
        }
    }
}

TEST(ParallelReduce, FromOutsideTheCallerComputesTheSameTreeWhileTheOnlyWorkerIsBusy) {
    // psum's shape: a reduction called from outside the pool. With the only
    // worker held by another task, the caller computes every node of its
    // tree itself (outside_wait.hpp OI3), and the sum is bit for bit the
    // documented tree's (R1, OI5). Before the caller helped, the reduction
    // waited for the held worker: release() then saw the watchdog fired.
    const std::vector<float> v = wild_floats(1 << 16);
    const float expected = documented_tree<float>(0, v.size(), documented_leaf(v.size()), [&](std::size_t i) { return v[i]; },
                                                  [](float a, float b) { return a + b; });
    zap_test::HeldWorker held;
    zap::ThreadPool pool(threads(1));
    held.hold(pool, std::chrono::seconds(10));
    const float sum = pool_sum(pool, v);
    EXPECT_TRUE(held.release()) << "the reduction waited for the held worker";
    EXPECT_EQ(std::bit_cast<std::uint32_t>(sum), std::bit_cast<std::uint32_t>(expected));
}

// Step 3: a part longer than the grain forks its halves, so the two halves
// of the top split run at once on a pool of two (16 indices, a grain of 2):
// the lower half's first index waits for the upper half's first to start.
// Had the top been computed serially, as a part no longer than the grain is,
// the lower half would wait for ever (the watchdog reports it).
TEST(ParallelReduce, TheHalvesOfALongPartRunAtOnce) {
    zap::ThreadPool pool(threads(2));
    std::atomic<bool> upper_started{false};
    const long sum = pool.parallel_reduce(
        0, 16, 0L,
        [&](int i) {
            if (i == 8) upper_started = true;
            while (i == 0 && !upper_started.load()) std::this_thread::yield();
            return static_cast<long>(i);
        },
        [](long a, long b) { return a + b; });
    EXPECT_EQ(sum, 120);
}

TEST(ParallelReduce, DoubleTransformReduceIsBitwiseTheSameOnEveryPoolSize) {
    std::vector<double> v(100'003);
    std::mt19937_64 rng(7);
    for (auto& x : v) x = std::ldexp(static_cast<double>(rng() % 1000 + 1), static_cast<int>(rng() % 80) - 40);
    auto square = [](double x) { return x * x; };
    auto plus = [](double a, double b) { return a + b; };
    const double tree = documented_tree<double>(0, v.size(), documented_leaf(v.size()),
                                                [&](std::size_t i) { return square(v[i]); }, plus);
    const double expected = 0.5 + tree;  // transform_reduce: reduce(init, tree)
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        const double got = pool.transform_reduce(v, 0.5, plus, square);
        EXPECT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(expected)) << n << " threads";
    }
}

TEST(ParallelReduce, EmptyRangesReturnTheIdentityOrInitAndCallNothing) {
    zap::ThreadPool pool(threads(2));
    int calls = 0;
    auto map = [&](int) {
        ++calls;
        return 1;
    };
    auto reduce = [&](int a, int b) {
        ++calls;
        return a + b;
    };
    EXPECT_EQ(pool.parallel_reduce(5, 5, 42, map, reduce), 42);
    EXPECT_EQ(pool.parallel_reduce(9, 3, 42, map, reduce), 42) << "first > last is empty, as in parallel_for";
    std::vector<int> none;
    EXPECT_EQ(pool.transform_reduce(none, 7, reduce, [&](int x) { return map(x); }), 7);
    EXPECT_EQ(calls, 0);
}

TEST(ParallelReduce, IntegerSumsForManySizes) {
    for (std::uint32_t n : {1u, 3u}) {
        zap::ThreadPool pool(threads(n));
        for (std::int64_t size : {1, 2, 3, 7, 100, 1023, 1024, 1025, 4097, 100'000}) {
            const std::int64_t got = pool.parallel_reduce(std::int64_t{0}, size, std::int64_t{0},
                                                          [](std::int64_t i) { return i * i; },
                                                          [](std::int64_t a, std::int64_t b) { return a + b; });
            EXPECT_EQ(got, (size - 1) * size * (2 * size - 1) / 6) << size << " on " << n << " threads";
        }
    }
}

TEST(ParallelReduce, SignedRangesAtTheLimitsOfTheirType) {
    zap::ThreadPool pool(threads(2));
    constexpr int lo = std::numeric_limits<int>::min();
    constexpr int hi = std::numeric_limits<int>::max();
    auto count = [](int) { return std::int64_t{1}; };
    auto plus = [](std::int64_t a, std::int64_t b) { return a + b; };
    EXPECT_EQ(pool.parallel_reduce(lo, lo + 5000, std::int64_t{0}, count, plus), 5000);
    EXPECT_EQ(pool.parallel_reduce(hi - 5000, hi, std::int64_t{0}, count, plus), 5000);
    // Every index is seen: the smallest and largest of [lo, lo + 3000).
    auto min_max = [](std::pair<int, int> a, std::pair<int, int> b) {
        return std::pair{std::min(a.first, b.first), std::max(a.second, b.second)};
    };
    const auto seen = pool.parallel_reduce(lo, lo + 3000, std::pair{hi, lo}, [](int i) { return std::pair{i, i}; },
                                           min_max);
    EXPECT_EQ(seen.first, lo);
    EXPECT_EQ(seen.second, lo + 2999);
}

TEST(ParallelReduce, NonCommutativeReduceKeepsTheOrder) {
    // Concatenation is associative, not commutative: the result is the
    // indices in order, whoever computed which part.
    std::string expected;
    for (int i = 0; i < 3000; ++i) expected += std::to_string(i % 10);
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        const std::string got = pool.parallel_reduce(
            0, 3000, std::string{}, [](int i) { return std::to_string(i % 10); },
            [](std::string a, const std::string& b) { return a + b; });
        EXPECT_EQ(got, expected) << n << " threads";
        std::vector<int> digits(3000);
        std::iota(digits.begin(), digits.end(), 0);
        const std::string via_transform = pool.transform_reduce(
            digits, std::string{"<"}, [](std::string a, const std::string& b) { return a + b; },
            [](int i) { return std::to_string(i % 10); });
        EXPECT_EQ(via_transform, "<" + expected) << n << " threads: init first, as in std::transform_reduce";
    }
}

TEST(ParallelReduce, NestedOnAPoolOfOneThread) {
    // Each term is itself a reduction: the inner calls fork and wait on the
    // only worker, which helps.
    zap::ThreadPool pool(threads(1));
    // std::int64_t, not long: the total passes 2^31, and long is 32 bits on Windows (LLP64).
    using I64 = std::int64_t;
    auto row = [&](int r) {
        return pool.parallel_reduce(0, 500, I64{0}, [r](int c) { return static_cast<I64>(r) * c; },
                                    [](I64 a, I64 b) { return a + b; });
    };
    const I64 total = pool.submit([&] {
                              return pool.parallel_reduce(0, 200, I64{0}, row, [](I64 a, I64 b) { return a + b; });
                          }).get();
    EXPECT_EQ(total, (I64{199} * 200 / 2) * (I64{499} * 500 / 2));
}

TEST(ParallelReduce, ExceptionFromMapIsRethrownAfterEveryCall) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        std::vector<std::atomic<int>> calls(20'000);
        auto map = [&](int i) {
            calls[static_cast<std::size_t>(i)]++;
            if (i % 997 == 5) throw Boom();
            return i;
        };
        EXPECT_THROW(pool.parallel_reduce(0, 20'000, 0, map, [](int a, int b) { return a ^ b; }), Boom);
        for (auto& c : calls) ASSERT_EQ(c.load(), 1) << n << " threads: a throwing map cancels nothing";
        // The pool and the call are usable afterwards.
        EXPECT_EQ(pool.parallel_reduce(0, 100, 0, [](int i) { return i; }, [](int a, int b) { return a + b; }), 4950);
    }
}

TEST(ParallelReduce, ExceptionFromReduceOrTransformIsRethrown) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> maps{0};
    auto map = [&](int i) {
        maps++;
        return i;
    };
    auto picky = [](int a, int b) {
        if (a + b > 1'000'000) throw Boom();
        return a + b;
    };
    EXPECT_THROW(pool.parallel_reduce(0, 10'000, 0, map, picky), Boom);
    EXPECT_EQ(maps.load(), 10'000) << "every map still called";
    std::vector<int> v(5000, 1);
    std::atomic<int> transforms{0};
    auto transform = [&](int x) {
        if (++transforms == 2500) throw std::out_of_range("transform");
        return x;
    };
    EXPECT_THROW(pool.transform_reduce(v, 0, [](int a, int b) { return a + b; }, transform), std::out_of_range);
    EXPECT_EQ(transforms.load(), 5000);
}

TEST(ParallelReduce, AllocatesNothing) {
    // The pool's forks live on the frames that wait for them (parallel_invoke);
    // counted through the pool's Platform::allocate, and every operator new.
    zap::BasicThreadPool<CountingPlatform> pool(threads(2));
    pool.warm(2);
    auto run = [&] {
        return pool.parallel_reduce(0, 1 << 16, std::uint64_t{0}, [](int i) { return std::uint64_t(i); },
                                    [](std::uint64_t a, std::uint64_t b) { return a + b; });
    };
    const std::uint64_t expected = (std::uint64_t{1} << 16) * ((std::uint64_t{1} << 16) - 1) / 2;
    EXPECT_EQ(run(), expected);  // warm
    const int before = CountingPlatform::allocations.load();
    const long news_before = heap_allocations.load();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(run(), expected);
    EXPECT_EQ(CountingPlatform::allocations.load() - before, 0);
    if (ZAP_TEST_COUNTS_NEW) {
        EXPECT_EQ(heap_allocations.load() - news_before, 0);
    }
}

// ---- C++ conventions: every integral index type, two index types, terms made T, const shared callables ----

namespace {

// The sum of every index of [lo, hi) of I, and the count of terms, as a reduction.
template <class I>
void expect_reduces_every_index(zap::ThreadPool& pool, I lo, I hi) {
    long long expected = 0;
    for (long long i = static_cast<long long>(lo); i < static_cast<long long>(hi); ++i) expected += i;
    const auto sum = pool.parallel_reduce(lo, hi, 0LL, [](I i) { return static_cast<long long>(i); },
                                          std::plus<>{});
    EXPECT_EQ(sum, expected) << "an index type of " << sizeof(I) << " byte(s)";
    const auto count = pool.parallel_reduce(lo, hi, 0LL, [](I) { return 1LL; }, std::plus<>{});
    EXPECT_EQ(count, static_cast<long long>(hi) - static_cast<long long>(lo));
}

template <class I>
void expect_reduces_the_whole_type(zap::ThreadPool& pool) {
    expect_reduces_every_index<I>(pool, std::numeric_limits<I>::min(), std::numeric_limits<I>::max());
}

}  // namespace

TEST(ParallelReduce, EightBitAndCharacterIndexTypes) {
    // A leaf count of 1024 does not fit an 8-bit type: the leaf size was
    // n / 0 (SIGFPE with g++ -O2, UBSan "division by zero").
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        expect_reduces_the_whole_type<char>(pool);
        expect_reduces_the_whole_type<signed char>(pool);
        expect_reduces_the_whole_type<unsigned char>(pool);
        expect_reduces_the_whole_type<std::int8_t>(pool);
        expect_reduces_the_whole_type<std::uint8_t>(pool);
        expect_reduces_the_whole_type<char8_t>(pool);
        expect_reduces_the_whole_type<char16_t>(pool);
        expect_reduces_the_whole_type<short>(pool);
        expect_reduces_the_whole_type<unsigned short>(pool);
        expect_reduces_every_index<wchar_t>(pool, 0, 5000);
        expect_reduces_every_index<char32_t>(pool, 0, 5000);
    }
}

TEST(ParallelReduce, BoundsOfTwoTypesUseTheirCommonType) {
    zap::ThreadPool pool(threads(2));
    std::vector<int> v(3000);
    std::iota(v.begin(), v.end(), 1);
    const long long sum = pool.parallel_reduce(0, v.size(), 0LL, [&](auto i) {
        static_assert(std::is_same_v<decltype(i), std::size_t>);
        return static_cast<long long>(v[i]);
    }, std::plus<>{});
    EXPECT_EQ(sum, 3000LL * 3001 / 2);
}

TEST(ParallelReduce, TermsAreMadeTBeforeReduceSeesThem) {
    // map returns int, T is long long: reduce is only ever called with two T
    // (it was called with (long long, int) inside a leaf).
    zap::ThreadPool pool(threads(2));
    const auto reduce = [](auto a, auto b) {
        static_assert(std::is_same_v<decltype(a), long long> && std::is_same_v<decltype(b), long long>);
        return a + b;
    };
    EXPECT_EQ(pool.parallel_reduce(0, 5000, 0LL, [](int i) { return i; }, reduce), 4999LL * 5000 / 2);
    std::vector<short> shorts(5000, 2);
    EXPECT_EQ(pool.transform_reduce(shorts, 0LL, reduce, [](short s) { return s; }), 10000);
    // A sum of shorts computes in int (promotion) and comes back to short.
    EXPECT_EQ(pool.parallel_reduce(0, 100, short{0}, [](int) { return short{1}; }, std::plus<>{}), 100);
}

namespace {

// Callables with both call operators: the reductions must use the const ones.
struct ConstMap {
    int operator()(int i) const { return i; }
    int operator()(int) {
        ADD_FAILURE() << "map called through a non-const reference";
        return 0;
    }
};
struct ConstReduce {
    int operator()(int a, int b) const { return a + b; }
    int operator()(int, int) {
        ADD_FAILURE() << "reduce called through a non-const reference";
        return 0;
    }
};

}  // namespace

TEST(ParallelReduce, MapAndReduceAreCalledThroughAConstReference) {
    zap::ThreadPool pool(threads(2));
    ConstMap map;
    ConstReduce reduce;
    EXPECT_EQ(pool.parallel_reduce(0, 5000, 0, map, reduce), 4999 * 5000 / 2);
    std::vector<int> v(100, 1);
    EXPECT_EQ(pool.transform_reduce(v, 0, reduce, map), 100);
}
