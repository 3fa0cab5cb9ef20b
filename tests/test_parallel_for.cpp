// SPDX-License-Identifier: MIT
// parallel_for and for_each: every index once, the pieces the range is cut
// into, nesting on a pool of one thread, exceptions, the calling thread's share.
// A loop that never completes fails its test (hang_watchdog.hpp).
#include "counting_platform.hpp"
#include "hang_watchdog.hpp"
#include "held_worker.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

// Runs `body` on a worker of `pool` and returns when it has returned,
// rethrowing what it threw.
template <class Body>
void on_worker(zap::ThreadPool& pool, Body body) {
    zap::TaskGroup group(pool);
    group.run(body);
    group.wait();
}

// Calls per index of [0, n), and the index each call followed on its thread
// (-1 if none): a piece runs its indices in order on one thread, so the
// indices that do not follow their predecessor are where pieces start.
struct Trace {
    std::vector<std::atomic<int>> calls;
    std::vector<long> previous;
    explicit Trace(std::size_t n) : calls(n), previous(n, -2) {}

    void record(std::size_t i) {
        thread_local long last = -1;
        calls[i].fetch_add(1);
        previous[i] = last;  // one call per index: no other thread writes it
        last = static_cast<long>(i);
    }
    void expect_each_once() const {
        for (std::size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i].load(), 1) << "index " << i;
    }
    // Every piece starts at a multiple of `piece` (the last one may be shorter).
    void expect_pieces_of(std::size_t piece) const {
        for (std::size_t i = 1; i < previous.size(); ++i) {
            if (previous[i] == static_cast<long>(i) - 1) continue;  // inside a piece
            ASSERT_EQ(i % piece, 0u) << "a piece starts at " << i;
        }
    }
};

}  // namespace

TEST(ParallelFor, EveryIndexOnceForManySizesAndGrains) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        for (std::size_t size : {0u, 1u, 2u, 3u, 7u, 1000u, 100000u}) {
            for (std::size_t grain : {0u, 1u, 7u, 1u << 30}) {
                Trace trace(size);
                pool.parallel_for(std::size_t{0}, size, [&](std::size_t i) { trace.record(i); }, zap::Grain{grain});
                trace.expect_each_once();
            }
        }
    }
}

TEST(ParallelFor, SignedRangesAtTheLimitsOfTheirType) {
    zap::ThreadPool pool(threads(2));
    std::vector<std::atomic<int>> seen(256);
    pool.parallel_for(std::int8_t{-128}, std::int8_t{127}, [&](std::int8_t i) { seen[i + 128]++; });
    for (int i = 0; i < 255; ++i) ASSERT_EQ(seen[i].load(), 1) << i - 128;
    EXPECT_EQ(seen[255].load(), 0);  // last is excluded

    std::atomic<int> calls{0};
    pool.parallel_for(5, 5, [&](int) { calls++; });
    pool.parallel_for(5, -5, [&](int) { calls++; });  // first > last: an empty range
    EXPECT_EQ(calls.load(), 0);

    std::atomic<long long> sum{0};
    constexpr int top = std::numeric_limits<int>::max();
    pool.parallel_for(top - 1000, top, [&](int i) { sum += top - i; });  // no overflow near the top
    EXPECT_EQ(sum.load(), 1000LL * 1001 / 2);
}

TEST(ParallelFor, AutomaticGrainCutsAboutFourPiecesPerThread) {
    // 1024 indices on 2 threads: grain ceil(1024 / 8) = 128, halves of
    // 1024 -> 512 -> 256 -> 128: eight pieces starting at multiples of 128.
    zap::ThreadPool pool(threads(2));
    for (int round = 0; round < 50; ++round) {
        Trace trace(1024);
        pool.parallel_for(0, 1024, [&](int i) { trace.record(static_cast<std::size_t>(i)); });
        trace.expect_each_once();
        trace.expect_pieces_of(128);
    }
}

TEST(ParallelFor, ExplicitGrainBoundsThePieces) {
    // Grain 10 on 1024: halving stops at 8 (16 > 10 >= 8).
    zap::ThreadPool pool(threads(4));
    for (int round = 0; round < 50; ++round) {
        Trace trace(1024);
        pool.parallel_for(0, 1024, [&](int i) { trace.record(static_cast<std::size_t>(i)); }, zap::Grain{10});
        trace.expect_each_once();
        trace.expect_pieces_of(8);
    }
}

TEST(ParallelFor, AllocatesNothing) {
    // Every upper half lives on the frame that waits for it.
    zap::BasicThreadPool<CountingPlatform> pool(threads(2));
    std::atomic<long> sum{0};
    auto loops = [&] {
        pool.parallel_for(0, 64, [&](int i) {
            pool.parallel_for(0, 1000, [&](int j) { sum += i + j; }, zap::Grain{1});
        });
    };
    const int before = CountingPlatform::allocations.load();  // the pool's worker array is made already
    loops();
    loops();
    EXPECT_EQ(CountingPlatform::allocations.load() - before, 0);
    EXPECT_EQ(sum.load(), 2 * (64L * (999L * 1000 / 2) + 1000L * (63L * 64 / 2)));
}

TEST(ParallelFor, CallerOutsideThePoolRunsTheLowestPieceAndWholePieces) {
    // From outside the pool the caller runs the lowest piece first (step 2),
    // then, while it waits, more pieces of its own loop (step 7): every index
    // of [0, piece) runs on it, and whatever else it runs is whole pieces.
    // 1024 indices: the automatic grain 1024 / (4 x threads) gives 256 on one
    // thread and 128 on two; Grain{10} halves down to 8.
    struct Case {
        std::uint32_t threads;
        zap::Grain grain;
        std::size_t piece;
    };
    for (const Case c : {Case{1, {}, 256}, Case{2, {}, 128}, Case{4, zap::Grain{10}, 8}}) {
        zap::ThreadPool pool(threads(c.threads));
        const std::thread::id caller = std::this_thread::get_id();
        std::vector<char> on_caller(1024, 0);  // one writer per index; parallel_for's return orders the reads
        pool.parallel_for(0, 1024, [&](int i) { on_caller[i] = std::this_thread::get_id() == caller; }, c.grain);
        for (std::size_t i = 0; i < c.piece; ++i) ASSERT_NE(on_caller[i], 0) << "index " << i << ", " << c.threads << " threads";
        for (std::size_t i = 0; i < on_caller.size(); ++i)
            ASSERT_EQ(on_caller[i], on_caller[i - i % c.piece]) << "index " << i << " and its piece's start";
    }
}

TEST(ParallelFor, FromOutsideTheCallerRunsItsPiecesWhileTheOnlyWorkerIsBusy) {
    // The promise as a user sees it: a loop called from a thread outside the
    // pool completes even when every worker is busy elsewhere until it has
    // returned - its caller runs its pieces. A task another thread schedules
    // while the loop runs (on top of the loop's upper halves in the global
    // queue, where a search meets it first) is not the loop's, and the caller
    // leaves it to the pool (outside_wait.hpp OI1). Before the caller helped,
    // the loop waited for the held worker: release() then saw the watchdog
    // fired; with the caller's pieces given no region of their own (a seeded
    // bug), it ran the other thread's task.
    zap_test::HeldWorker held;
    std::atomic<bool> unrelated_ran_on_caller{false};
    std::atomic<bool> unrelated_ran{false};
    {
        zap::ThreadPool pool(threads(1));
        held.hold(pool, std::chrono::seconds(10));
        const std::thread::id caller = std::this_thread::get_id();
        const auto unrelated = [&] {
            unrelated_ran_on_caller = std::this_thread::get_id() == caller;
            unrelated_ran = true;
        };
        Trace trace(1000);
        std::atomic<int> on_caller{0};
        pool.parallel_for(0, 1000, [&](int i) {
            trace.record(static_cast<std::size_t>(i));
            if (std::this_thread::get_id() == caller) on_caller++;
            if (i == 0) std::thread([&] { pool.spawn(unrelated); }).join();  // the lowest piece: the caller's first
        }, zap::Grain{10});
        EXPECT_TRUE(held.release()) << "the loop waited for the held worker";
        trace.expect_each_once();
        EXPECT_EQ(on_caller.load(), 1000);
    }
    EXPECT_TRUE(unrelated_ran.load());
    EXPECT_FALSE(unrelated_ran_on_caller.load()) << "the caller ran a task that was not its loop's";
}

TEST(ParallelFor, TwoCallersOutsideThePoolEachRunOnlyTheirOwnPieces) {
    // Two threads outside the pool call parallel_for at once while the only
    // worker is held: each caller runs every piece of its own loop, and none
    // of the other's (outside_wait.hpp OI1: each call has a caller region of
    // its own, OC1). Both loops' upper halves wait in the one global queue,
    // where both callers search. The order is forced so that A searches
    // while B's halves, pushed after A's, are queued: A runs its piece 0
    // (after forking its halves) until B has forked, and B runs its piece 0
    // until A's loop has returned. Given one region for both calls (a seeded
    // bug: the region counter not advanced), A ran B's newest halves.
    zap_test::HeldWorker held;
    std::atomic<int> ran{0};
    std::atomic<int> on_another_thread{0};
    std::atomic<bool> a_forked{false}, b_forked{false}, a_done{false};
    const auto until = [](const std::atomic<bool>& flag) {
        while (!flag.load()) std::this_thread::yield();
    };
    {
        zap::ThreadPool pool(threads(1));
        held.hold(pool, std::chrono::seconds(10));
        const auto loop = [&](std::atomic<bool>& forked, const std::atomic<bool>& go_on) {
            const std::thread::id caller = std::this_thread::get_id();
            pool.parallel_for(0, 2000, [&](int i) {
                if (std::this_thread::get_id() != caller) on_another_thread++;
                if (i == 0) {  // run by the caller itself, after its halves are queued
                    forked = true;
                    until(go_on);
                }
                ran++;
            }, zap::Grain{1});
        };
        std::thread a([&] {
            loop(a_forked, b_forked);
            a_done = true;
        });
        std::thread b([&] {
            until(a_forked);
            loop(b_forked, a_done);
        });
        a.join();
        b.join();
        EXPECT_TRUE(held.release()) << "a loop waited for the held worker";
    }
    EXPECT_EQ(ran.load(), 4000);
    EXPECT_EQ(on_another_thread.load(), 0) << "a caller ran a piece of the other caller's loop";
}

TEST(ParallelFor, NestedLoopsOnAPoolOfOneThread) {
    zap::ThreadPool pool(threads(1));
    constexpr int outer = 16, inner = 300;
    std::vector<std::atomic<int>> cells(outer * inner);
    auto nested = [&] {
        pool.parallel_for(0, outer, [&](int i) {
            pool.parallel_for(0, inner, [&](int j) { cells[i * inner + j]++; }, zap::Grain{1});
        }, zap::Grain{1});
    };
    on_worker(pool, nested);  // every wait is on the one worker: it must help
    for (int c = 0; c < outer * inner; ++c) ASSERT_EQ(cells[c].exchange(0), 1) << c;
    nested();  // from outside: the caller's pieces nest on the caller
    for (int c = 0; c < outer * inner; ++c) ASSERT_EQ(cells[c].load(), 1) << c;
}

TEST(ParallelFor, NestedLoopsPastTheHelpBoundOnOneThread) {
    // With Config::max_help_depth 1 only the outermost wait on the worker may
    // help; a deeper split would wait, without helping, for an upper half
    // queued behind it on the only worker. It runs its range as one piece
    // instead (wait_depth.hpp).
    zap::Config config = threads(1);
    config.max_help_depth = 1;
    zap::ThreadPool pool(config);
    constexpr int outer = 16, inner = 64;
    std::vector<std::atomic<int>> cells(outer * inner);
    on_worker(pool, [&] {
        pool.parallel_for(0, outer, [&](int i) {
            pool.parallel_for(0, inner, [&](int j) { cells[i * inner + j]++; }, zap::Grain{1});
        }, zap::Grain{1});
    });
    for (int c = 0; c < outer * inner; ++c) ASSERT_EQ(cells[c].load(), 1) << c;
}

TEST(ParallelFor, ThreeLevelsFromInsideAndOutsideOnSeveralPoolSizes) {
    for (std::uint32_t n : {1u, 2u, 3u}) {
        zap::ThreadPool pool(threads(n));
        std::atomic<long> sum{0};
        auto loops = [&] {
            pool.parallel_for(0, 8, [&](int a) {
                pool.parallel_for(0, 8, [&](int b) {
                    pool.parallel_for(0, 8, [&](int c) { sum += a * 64 + b * 8 + c; });
                });
            });
        };
        loops();
        on_worker(pool, loops);
        EXPECT_EQ(sum.load(), 2 * (511L * 512 / 2)) << n << " threads";
    }
}

TEST(ParallelFor, EveryCallRunsAndTheFirstExceptionIsRethrown) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        // One thrower: exactly its exception, and every other index still ran.
        std::vector<std::atomic<int>> calls(1000);
        try {
            pool.parallel_for(0, 1000, [&](int i) {
                calls[i]++;
                if (i == 617) throw std::runtime_error("617");
            });
            FAIL() << "no exception";
        } catch (const std::runtime_error& error) {
            EXPECT_STREQ(error.what(), "617");
        }
        for (int i = 0; i < 1000; ++i) ASSERT_EQ(calls[i].load(), 1) << i;

        // Every tenth index throws, on every thread: one of them comes out.
        std::atomic<int> total{0};
        try {
            pool.parallel_for(0, 1000, [&](int i) {
                total++;
                if (i % 10 == 0) throw std::to_string(i);
            }, zap::Grain{16});
            FAIL() << "no exception";
        } catch (const std::string& which) {
            EXPECT_EQ(std::stoi(which) % 10, 0);
        }
        EXPECT_EQ(total.load(), 1000);
    }
}

TEST(ParallelFor, ExceptionFromANestedLoopReachesTheOuterCaller) {
    zap::ThreadPool pool(threads(1));
    std::atomic<int> calls{0};
    EXPECT_THROW(on_worker(pool, [&] {
                     pool.parallel_for(0, 4, [&](int i) {
                         pool.parallel_for(0, 50, [&](int j) {
                             calls++;
                             if (i == 2 && j == 30) throw std::logic_error("inner");
                         });
                     });
                 }),
                 std::logic_error);
    EXPECT_EQ(calls.load(), 200);
}

#ifndef NDEBUG
TEST(ParallelForDeathTest, AfterShutdownFromOutsideThePoolAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(2));
            pool.shutdown();
            pool.parallel_for(0, 1000, [](int) {});
        },
        "contract violated: schedule\\(\\) after shutdown\\(\\)");
}
#else
TEST(ParallelFor, AfterShutdownReleaseBuildsRunTheHalvesOnTheCallingThread) {
    zap::ThreadPool pool(threads(2));
    pool.shutdown();
    Trace trace(1000);
    pool.parallel_for(0, 1000, [&](int i) { trace.record(static_cast<std::size_t>(i)); });
    trace.expect_each_once();
}
#endif

TEST(ForEach, CallsWithTheElementAndItsIndex) {
    zap::ThreadPool pool(threads(2));
    std::vector<long> values(10000, -1);
    pool.for_each(values, [](long& value, std::size_t i) { value = static_cast<long>(i) * 3; });
    for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], static_cast<long>(i) * 3);

    std::array<int, 5> fixed{};
    pool.for_each(fixed, [](int& value, std::size_t i) { value = static_cast<int>(i) + 1; });
    EXPECT_EQ(fixed, (std::array<int, 5>{1, 2, 3, 4, 5}));

    std::deque<int> deque(777, 1);
    std::atomic<long> sum{0};
    const auto& constant = deque;
    pool.for_each(constant, [&](const int& value, std::size_t i) { sum += value * static_cast<long>(i); });
    EXPECT_EQ(sum.load(), 776L * 777 / 2);

    std::vector<int> empty;
    pool.for_each(empty, [](int&, std::size_t) { FAIL() << "called on an empty range"; });
}

TEST(ForEach, NestedOnOneThreadWithExceptions) {
    zap::ThreadPool pool(threads(1));
    std::vector<std::vector<int>> rows(20, std::vector<int>(50, 0));
    std::atomic<int> calls{0};
    try {
        on_worker(pool, [&] {
            pool.for_each(rows, [&](std::vector<int>& row, std::size_t r) {
                pool.for_each(row, [&](int& cell, std::size_t c) {
                    calls++;
                    cell = static_cast<int>(r * 100 + c);
                    if (r == 19 && c == 49) throw std::runtime_error("last cell");
                });
            });
        });
        FAIL() << "no exception";
    } catch (const std::runtime_error& error) {
        EXPECT_STREQ(error.what(), "last cell");
    }
    EXPECT_EQ(calls.load(), 1000);
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t c = 0; c < rows[r].size(); ++c) ASSERT_EQ(rows[r][c], static_cast<int>(r * 100 + c));
}

// ---- C++ conventions: two index types, every integral type, a const shared body, f(element) ----

namespace {

// parallel_for(first, last) over the whole of an integer type's window
// [lo, hi): every index once, each of type I.
template <class I>
void expect_every_index_once(zap::ThreadPool& pool, I lo, I hi) {
    const auto n = static_cast<std::size_t>(static_cast<long long>(hi) - static_cast<long long>(lo));
    std::vector<std::atomic<int>> seen(n);
    pool.parallel_for(lo, hi, [&](auto i) {
        static_assert(std::is_same_v<decltype(i), I>, "the body is called with the index type");
        seen[static_cast<std::size_t>(static_cast<long long>(i) - static_cast<long long>(lo))]++;
    }, zap::Grain{3});
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(seen[k].load(), 1) << "index " << static_cast<long long>(lo) + k;
}

// The type's whole range when it is at most 16 bits wide, else 3000 indices at each end.
template <class I>
void expect_every_index_once_near_the_limits(zap::ThreadPool& pool) {
    using Limits = std::numeric_limits<I>;
    if constexpr (sizeof(I) <= 2) {
        expect_every_index_once<I>(pool, Limits::min(), Limits::max());
    } else {
        expect_every_index_once<I>(pool, Limits::min(), static_cast<I>(Limits::min() + 3000));
        expect_every_index_once<I>(pool, static_cast<I>(Limits::max() - 3000), Limits::max());
    }
}

}  // namespace

TEST(ParallelFor, EveryIntegralIndexTypeEightBitAndCharactersIncluded) {
    for (std::uint32_t n : {1u, 3u}) {
        zap::ThreadPool pool(threads(n));
        expect_every_index_once_near_the_limits<char>(pool);
        expect_every_index_once_near_the_limits<signed char>(pool);
        expect_every_index_once_near_the_limits<unsigned char>(pool);
        expect_every_index_once_near_the_limits<std::int8_t>(pool);
        expect_every_index_once_near_the_limits<std::uint8_t>(pool);
        expect_every_index_once_near_the_limits<char8_t>(pool);
        expect_every_index_once_near_the_limits<char16_t>(pool);
        expect_every_index_once_near_the_limits<char32_t>(pool);
        expect_every_index_once_near_the_limits<wchar_t>(pool);
        expect_every_index_once_near_the_limits<short>(pool);
        expect_every_index_once_near_the_limits<unsigned short>(pool);
        expect_every_index_once_near_the_limits<int>(pool);
        expect_every_index_once_near_the_limits<unsigned>(pool);
        expect_every_index_once_near_the_limits<long long>(pool);
        expect_every_index_once_near_the_limits<unsigned long long>(pool);
    }
}

TEST(ParallelFor, BoundsOfTwoTypesUseTheirCommonType) {
    zap::ThreadPool pool(threads(2));
    std::vector<int> v(1000, 0);
    pool.parallel_for(0, v.size(), [&](auto i) {  // int and std::size_t: the user's first hour
        static_assert(std::is_same_v<decltype(i), std::size_t>);
        v[i] += 1;
    });
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], 1) << i;

    std::atomic<long> sum{0};
    pool.parallel_for(std::uint8_t{10}, 300, [&](auto i) {  // std::uint8_t and int: int
        static_assert(std::is_same_v<decltype(i), int>);
        sum += i;
    });
    EXPECT_EQ(sum.load(), (299L * 300 - 9L * 10) / 2);

    std::atomic<int> calls{0};
    pool.parallel_for(-5LL, 5u, [&](long long i) { calls += i >= -5 && i < 5 ? 1 : 1000; });  // long long holds every unsigned (long does not on Windows)
    EXPECT_EQ(calls.load(), 10);
    pool.parallel_for(std::size_t{7}, 3, [&](std::size_t) { calls++; });  // first > last: empty
    // Empty whatever the index type can hold: std::size_t cannot hold -3,
    // but 0 > -3, so there is nothing to call and no bound to check.
    pool.parallel_for(std::size_t{0}, -3, [&](std::size_t) { calls++; });
    EXPECT_EQ(calls.load(), 10);
}

#ifndef NDEBUG
TEST(ParallelForDeathTest, ABoundTheIndexTypeCannotHoldAsserts) {
    zap::ThreadPool pool(threads(2));
    // int and std::size_t: the index type is std::size_t, which cannot hold -1.
    EXPECT_DEATH(pool.parallel_for(-1, std::size_t{10}, [](std::size_t) {}),
                 "a loop bound must fit the index type std::common_type_t<A, B>");
    EXPECT_DEATH((void)pool.parallel_reduce(-1, std::size_t{10}, std::size_t{0}, [](std::size_t i) { return i; },
                                            std::plus<>{}),
                 "a loop bound must fit the index type");
}
#else
TEST(ParallelFor, ABoundTheIndexTypeCannotHoldNeverCallsOutsideTheRange) {
    // Release builds: the indices of [first, last) that the index type holds.
    zap::ThreadPool pool(threads(2));
    std::vector<std::atomic<int>> seen(10);
    pool.parallel_for(-3, std::size_t{10}, [&](std::size_t i) {
        ASSERT_LT(i, 10u);
        seen[i]++;
    });
    for (auto& s : seen) EXPECT_EQ(s.load(), 1);
    // A first bound below what the index type holds is taken as its 0:
    // [-3, 0) keeps no index.
    pool.parallel_for(-3, std::size_t{0}, [&](std::size_t) { ADD_FAILURE() << "an empty range called its body"; });
}
#endif

namespace {

// A body with both call operators: the loops must use the const one.
struct ConstOnlyPlease {
    std::atomic<int>* calls;
    void operator()(int) const { (*calls)++; }
    void operator()(int) { ADD_FAILURE() << "the body was called through a non-const reference"; }
    void operator()(int&, std::size_t) const { (*calls)++; }
    void operator()(int&, std::size_t) { ADD_FAILURE() << "the body was called through a non-const reference"; }
};

// Counts its copies and moves: the loops share the caller's object.
struct CopyCounted {
    static inline std::atomic<int> copies{0};
    CopyCounted() = default;
    CopyCounted(const CopyCounted&) { copies++; }
    CopyCounted(CopyCounted&&) noexcept { copies++; }
    void operator()(int) const {}
};

}  // namespace

TEST(ParallelFor, TheBodyIsSharedAndCalledThroughAConstReference) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> calls{0};
    ConstOnlyPlease body{&calls};
    pool.parallel_for(0, 1000, body, zap::Grain{10});
    EXPECT_EQ(calls.load(), 1000);
    std::vector<int> v(100);
    pool.for_each(v, body);
    EXPECT_EQ(calls.load(), 1100);

    CopyCounted counted;
    pool.parallel_for(0, 1000, counted, zap::Grain{1});
    pool.parallel_for(0, 1000, CopyCounted{}, zap::Grain{1});
    EXPECT_EQ(CopyCounted::copies.load(), 0);
}

TEST(ForEach, TakesTheElementAloneOrWithItsIndex) {
    zap::ThreadPool pool(threads(2));
    std::vector<int> v(5000, 1);
    pool.for_each(v, [](int& x) { x += 1; });  // the std::for_each shape
    for (int x : v) ASSERT_EQ(x, 2);
    pool.for_each(v, [](int& x, std::size_t i) { x = static_cast<int>(i); });
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<int>(i));

    // A callable that takes either: the element alone.
    std::atomic<int> alone{0}, with_index{0};
    pool.for_each(v, [&](auto&&... args) { (sizeof...(args) == 1 ? alone : with_index)++; });
    EXPECT_EQ(alone.load(), 5000);
    EXPECT_EQ(with_index.load(), 0);

    // A range of proxies (std::vector<bool>): the element is a prvalue. One
    // piece: neighbouring bits share a word, so two threads may not write them.
    std::vector<bool> bits(300, false);
    pool.for_each(bits, [](auto bit) { bit = true; }, zap::Grain{300});
    for (bool b : bits) ASSERT_TRUE(b);
}
