// SPDX-License-Identifier: MIT
// parallel_for and for_each: every index once, the pieces the range is cut
// into, nesting on a pool of one thread, exceptions, the calling thread's share.
#include "counting_platform.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
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

TEST(ParallelFor, CallerOutsideThePoolRunsExactlyTheLowestPiece) {
    // From outside the pool the caller runs the lowest piece itself (step 2)
    // and sleeps while the workers run the rest, so the indices it ran are
    // exactly one piece: [0, piece). 1024 indices: the automatic grain
    // 1024 / (4 x threads) gives 256 on one thread and 128 on two; Grain{10}
    // halves down to 8. One piece for the whole range would fail, and so
    // would pieces longer than the grain.
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
        for (std::size_t i = 0; i < on_caller.size(); ++i)
            ASSERT_EQ(on_caller[i] != 0, i < c.piece) << "index " << i << ", " << c.threads << " threads";
    }
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
