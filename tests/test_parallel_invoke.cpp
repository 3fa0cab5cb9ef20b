// SPDX-License-Identifier: MIT
// ThreadPool::parallel_invoke: both halves run, from a worker, from outside
// and from join()'s drain, with one worker and with several, stolen and not,
// nested deeply, and with exceptions from either half (both still run, the
// first rethrown).
#include "counting_new.hpp"
#include "held_worker.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <thread>

namespace {

// Runs `body` as a task on `pool` and waits for it from this (outside) thread.
void run_on_pool(zap::ThreadPool& pool, std::function<void()> body) {
    struct Job : zap::Task {
        std::function<void()> body;
        zap::WaitGroup done;
        Job() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<Job*>(t);
            self->body();
            self->done.done();
        }
    } job;
    job.body = std::move(body);
    job.done.add(1);
    pool.schedule(job);
    job.done.wait();
}

long fib(zap::ThreadPool& pool, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    pool.parallel_invoke([&] { x = fib(pool, n - 1); }, [&] { y = fib(pool, n - 2); });
    return x + y;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// Recursion as deep as `depth`, one fork per level: deeper than the ring's 256
// slots, so the ring-full path (no fork) is taken too.
int chain(zap::ThreadPool& pool, int depth) {
    if (depth == 0) return 0;
    int below = 0, side = 0;
    pool.parallel_invoke([&] { below = chain(pool, depth - 1); }, [&] { side = 1; });
    return below + side;
}

}  // namespace

TEST(ParallelInvoke, AllocatesNothing) {
    // The stealable half lives on the caller's frame, stolen or not, on a
    // worker or outside the pool. Counted: every operator new of this binary.
    if (!ZAP_TEST_COUNTS_NEW) GTEST_SKIP() << "ThreadSanitizer owns operator new; counted in the other builds";
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);  // spawning a thread allocates; the forks must not
    std::atomic<long> stolen{0};
    std::function<long(int)> fib_noting_steals = [&](int n) -> long {
        if (n < 2) return n;
        const auto forker = std::this_thread::get_id();
        long x = 0, y = 0;
        pool.parallel_invoke([&] { x = fib_noting_steals(n - 1); }, [&] {
            if (std::this_thread::get_id() != forker) stolen.fetch_add(1, std::memory_order_relaxed);
            y = fib_noting_steals(n - 2);
        });
        return x + y;
    };
    long inside = -1, allocated_inside = -1;
    run_on_pool(pool, [&] {
        const long before = heap_allocations.load();
        inside = fib_noting_steals(22);
        allocated_inside = heap_allocations.load() - before;
    });
    const long before = heap_allocations.load();
    const long outside = fib_noting_steals(22);
    const long allocated_outside = heap_allocations.load() - before;
    EXPECT_EQ(inside, fib_serial(22));
    EXPECT_EQ(outside, fib_serial(22));
    EXPECT_EQ(allocated_inside, 0);
    EXPECT_EQ(allocated_outside, 0);
    std::printf("halves stolen: %ld of %ld forks\n", stolen.load(), 2 * 28656L);
}

// The top of the outside caller's stack while it runs fib_within, on that
// thread only (null elsewhere: a worker's stack is not measured).
thread_local const char* caller_top = nullptr;

// fib of parallel_invoke that ends the process when the outside caller's
// stack has grown more than `limit` bytes below caller_top: a wait that runs
// its oldest, largest forks nested inside the waits for its newest ones grows
// the stack by a whole subtree per level, and would overflow it (a crash)
// before any EXPECT could report.
long fib_within(zap::ThreadPool& pool, int n, std::size_t limit) {
    // Compared as addresses: an optimiser may inline the first call into the
    // test's frame and put `here` above `caller_top` (no depth at all).
    const char here = 0;
    const auto top = reinterpret_cast<std::uintptr_t>(caller_top);
    const auto now = reinterpret_cast<std::uintptr_t>(&here);
    if (caller_top != nullptr && top > now && top - now > limit) {
        std::fprintf(stderr, "FAIL: the outside caller's stack grew past %zu KiB in fib(22): its wait ran old forks "
                             "nested in the waits for new ones (outside_wait.hpp OC4a: newest first)\n", limit / 1024);
        std::abort();
    }
    if (n < 2) return n;
    long x = 0, y = 0;
    pool.parallel_invoke([&] { x = fib_within(pool, n - 1, limit); }, [&] { y = fib_within(pool, n - 2, limit); });
    return x + y;
}

TEST(ParallelInvoke, FromOutsideTheCallersStackStaysNearTheRecursionsDepth) {
    // The outside caller's wait runs its own forks (outside_wait.hpp OC4a),
    // newest first, as a worker pops its ring: the stack then holds about
    // one recursion's frames (measured: 20-72 KiB here at -O0, up to 123 KiB
    // with AddressSanitizer). A search that ran the oldest fork first took
    // more than 8 MiB and crashed. 1 MiB: half a Windows main thread's stack.
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    for (int round = 0; round < 20; ++round) {
        const char top = 0;
        caller_top = &top;
        EXPECT_EQ(fib_within(pool, 22, std::size_t{1} << 20), fib_serial(22));
        caller_top = nullptr;
    }
}

TEST(ParallelInvoke, OneWorkerRunsBothHalvesInOrderOnItsOwnThread) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    run_on_pool(pool, [&] {
        const auto me = std::this_thread::get_id();
        int step = 0;
        std::thread::id a_thread, b_thread;
        pool.parallel_invoke(
            [&] {
                a_thread = std::this_thread::get_id();
                EXPECT_EQ(step++, 0);
            },
            [&] {
                b_thread = std::this_thread::get_id();
                EXPECT_EQ(step++, 1) << "with one worker nobody can steal b: it runs after a, taken back";
            });
        EXPECT_EQ(step, 2);
        EXPECT_EQ(a_thread, me);
        EXPECT_EQ(b_thread, me);
    });
}

TEST(ParallelInvoke, RecursiveFibOnOneWorker) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    long result = 0;
    run_on_pool(pool, [&] { result = fib(pool, 22); });
    EXPECT_EQ(result, fib_serial(22));
}

TEST(ParallelInvoke, RecursiveFibOnSeveralWorkers) {
    for (std::uint32_t threads : {2u, 4u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        long result = 0;
        run_on_pool(pool, [&] { result = fib(pool, 25); });
        EXPECT_EQ(result, fib_serial(25)) << threads << " workers";
    }
}

TEST(ParallelInvoke, DeeperThanTheRing) {
    for (std::uint32_t threads : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        int result = 0;
        run_on_pool(pool, [&] { result = chain(pool, 1000); });
        EXPECT_EQ(result, 1000) << threads << " workers";
    }
}

TEST(ParallelInvoke, FromOutsideThePoolARunsOnTheCallerAndBOnce) {
    // b goes to the pool; a worker runs it, or the caller once a is done and
    // it waits (outside_wait.hpp OC4): either way once, before the call returns.
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    const auto me = std::this_thread::get_id();
    std::thread::id a_thread;
    std::atomic<int> b_runs{0};
    pool.parallel_invoke([&] { a_thread = std::this_thread::get_id(); }, [&] { b_runs++; });
    EXPECT_EQ(a_thread, me) << "a runs on the calling thread";
    EXPECT_EQ(b_runs.load(), 1);
    EXPECT_EQ(fib(pool, 20), fib_serial(20)) << "an outside caller that recurses";
}

TEST(ParallelInvoke, FromOutsideTheCallerRunsBWhileTheOnlyWorkerIsBusy) {
    // With the only worker held by another task until the call has returned,
    // the caller runs b itself, and a recursion of forks from outside
    // completes the same way (outside_wait.hpp OI3). Before the caller
    // helped, it waited for the held worker: release() saw the watchdog fired.
    zap_test::HeldWorker held;
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    held.hold(pool, std::chrono::seconds(10));
    const auto me = std::this_thread::get_id();
    std::thread::id b_thread;
    pool.parallel_invoke([] {}, [&] { b_thread = std::this_thread::get_id(); });
    const long f = fib(pool, 18);
    EXPECT_TRUE(held.release()) << "the caller waited for the held worker";
    EXPECT_EQ(b_thread, me);
    EXPECT_EQ(f, fib_serial(18));
}

namespace {

// Forks `depth` levels from the calling thread and records, on `caller`,
// how many of the b halves it is running at once, nested in its waits: each
// one the caller runs sits one helping level deeper (outside_wait.hpp OC4c).
struct NestedOnCaller {
    std::thread::id caller = std::this_thread::get_id();
    int running = 0;  // touched on the caller only
    int deepest = 0;

    void fork(zap::ThreadPool& pool, int depth) {
        if (depth == 0) return;
        pool.parallel_invoke([&] { fork(pool, depth - 1); },
                             [&] {
                                 const bool here = std::this_thread::get_id() == caller;
                                 if (here) deepest = std::max(deepest, ++running);
                                 fork(pool, depth - 1);
                                 if (here) --running;
                             });
    }
};

}  // namespace

// The helping levels an outside caller of an 8-deep nest of parallel_invoke
// reaches on a pool of one worker, which is held until the watchdog lets it
// go (1 s): until then the caller runs every b itself, down to its bound.
namespace {
int helping_levels_on_the_caller(zap::Config config) {
    zap_test::HeldWorker held;
    config.max_threads = 1;
    zap::ThreadPool pool(config);
    held.hold(pool, std::chrono::seconds(1));
    NestedOnCaller nested;
    nested.fork(pool, 8);
    held.release();
    return nested.deepest;
}
}  // namespace

TEST(ParallelInvoke, FromOutsideTheCallerHelpsNoDeeperThanMaxHelpDepth) {
    // The caller's help bound (OC5): at Config::max_help_depth nested
    // helping levels it stops running its forks and sleeps until a worker
    // has; a bound checked one level late would let it run a fourth.
    EXPECT_EQ(helping_levels_on_the_caller(zap::Config{.max_help_depth = 3}), 3);
}

TEST(ParallelInvoke, FromOutsideTheCallerHelpsOneLevelPerKiBOfStack) {
    // Without max_help_depth the bound is one helping level per KiB of
    // Config::stack_size (helping_wait.hpp): 1 KiB allows one.
    EXPECT_EQ(helping_levels_on_the_caller(zap::Config{.stack_size = 1024}), 1);
}

TEST(ParallelInvoke, OnAWorkerAtTheHelpBoundBothRunInline) {
    // A task run by a helping wait at the bound (max_help_depth 1) may not
    // help again, so a wait for b there could not run it: parallel_invoke
    // forks nothing and runs a, then b, itself (wait_depth.hpp).
    zap::ThreadPool pool(zap::Config{.max_threads = 1, .max_help_depth = 1});
    std::atomic<int> calls{0};
    std::thread::id a_thread, b_thread, nested_thread;
    run_on_pool(pool, [&] {
        zap::WaitGroup nested;
        nested.add();
        pool.spawn([&] {
            nested_thread = std::this_thread::get_id();
            pool.parallel_invoke(
                [&] {
                    a_thread = std::this_thread::get_id();
                    calls++;
                },
                [&] {
                    b_thread = std::this_thread::get_id();
                    calls++;
                });
            nested.done();
        });
        nested.wait();  // the only worker: this wait runs the task, one help level down
    });
    EXPECT_EQ(calls.load(), 2);
    EXPECT_EQ(a_thread, nested_thread);
    EXPECT_EQ(b_thread, nested_thread);
}

TEST(ParallelInvoke, StolenHalfIsWaitedFor) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    std::atomic<bool> b_started{false};
    std::atomic<bool> b_finished{false};
    run_on_pool(pool, [&] {
        const auto me = std::this_thread::get_id();
        std::thread::id b_thread;
        pool.parallel_invoke(
            [&] {
                // b can only start before a returns if another worker stole it.
                // The fork's wake-up is a hint; a scheduled no-op is a full
                // notify, so a sleeping worker is sure to look (and to steal b,
                // the oldest task in this ring) even if the hint was missed.
                zap::Task nothing([](zap::Task*) {});
                bool nudged = false;
                const auto start = std::chrono::steady_clock::now();
                while (!b_started.load()) {
                    if (!nudged && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(50)) {
                        pool.schedule(nothing);
                        nudged = true;
                    }
                    std::this_thread::yield();
                }
            },
            [&] {
                b_thread = std::this_thread::get_id();
                b_started = true;
                std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the caller waits meanwhile
                b_finished = true;
            });
        EXPECT_TRUE(b_finished.load()) << "parallel_invoke returned before the stolen half ended";
        EXPECT_NE(b_thread, me);
    });
}

TEST(ParallelInvoke, TheForksHintWakesASleepingWorkerForB) {
    // J2's hint on its own: both workers asleep, one is woken for the task
    // (and gives the waking role back, A4: nothing else is queued), the task
    // forks, and a waits until b has started. Only the hint's wake-up of the
    // other worker, which then steals b, lets a return before 10 s. A hint
    // that woke nobody (its notify_slow() deleted, or its test inverted)
    // left b in the ring until a gave up.
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both past their spin, asleep
    std::atomic<bool> b_started{false};
    bool gave_up = false;
    std::thread::id b_thread;
    run_on_pool(pool, [&] {
        const auto me = std::this_thread::get_id();
        pool.parallel_invoke(
            [&] {
                const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (!b_started.load() && std::chrono::steady_clock::now() < end) std::this_thread::yield();
                gave_up = !b_started.load();
            },
            [&] {
                b_thread = std::this_thread::get_id();
                b_started = true;
            });
        EXPECT_FALSE(gave_up) << "b waited for a: the fork's hint woke nobody (J2)";
        EXPECT_NE(b_thread, me);
    });
}

TEST(ParallelInvoke, ExceptionFromAStillRunsB) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    run_on_pool(pool, [&] {
        bool b_ran = false;
        EXPECT_THROW(pool.parallel_invoke([] { throw std::runtime_error("a"); }, [&] { b_ran = true; }),
                     std::runtime_error);
        EXPECT_TRUE(b_ran);
    });
}

TEST(ParallelInvoke, ExceptionFromBStillRunsA) {
    for (std::uint32_t threads : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        run_on_pool(pool, [&] {
            bool a_ran = false;
            try {
                pool.parallel_invoke([&] { a_ran = true; }, [] { throw std::logic_error("b"); });
                ADD_FAILURE() << "b's exception was lost";
            } catch (const std::logic_error& e) {
                EXPECT_STREQ(e.what(), "b");
            }
            EXPECT_TRUE(a_ran);
        });
    }
}

TEST(ParallelInvoke, BothThrowFirstIsRethrownAfterBoth) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    run_on_pool(pool, [&] {
        int ended = 0;
        try {
            pool.parallel_invoke(
                [&] {
                    ++ended;
                    throw std::runtime_error("a");
                },
                [&] {
                    ++ended;
                    throw std::runtime_error("b");
                });
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "a") << "with one worker a throws first";
        }
        EXPECT_EQ(ended, 2);
    });
}

TEST(ParallelInvoke, ExceptionFromAStolenBFromOutside) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    bool a_ran = false;
    EXPECT_THROW(pool.parallel_invoke([&] { a_ran = true; }, [] { throw std::runtime_error("b on a worker"); }),
                 std::runtime_error);
    EXPECT_TRUE(a_ran);
}

TEST(ParallelInvoke, ExceptionsInsideRecursionAllHalvesRun) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    std::atomic<int> leaves{0};
    std::function<void(int)> tree = [&](int depth) {
        if (depth == 0) {
            if (leaves.fetch_add(1) % 7 == 3) throw std::runtime_error("leaf");
            return;
        }
        pool.parallel_invoke([&] { tree(depth - 1); }, [&] { tree(depth - 1); });
    };
    run_on_pool(pool, [&] { EXPECT_THROW(tree(10), std::runtime_error); });
    EXPECT_EQ(leaves.load(), 1 << 10) << "a throwing half cancels nothing";
}

namespace {

// The production platform whose workers never start: every task runs in
// join()'s drain, on the joining thread, whose context has no worker.
struct NoSpawn : zap::StdPlatform {
    static bool spawn(const zap::ThreadOptions&, void* (*)(void*), void*) noexcept { return false; }
};
using DrainPool = zap::BasicThreadPool<NoSpawn>;

long fib_drain(DrainPool& pool, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    pool.parallel_invoke([&] { x = fib_drain(pool, n - 1); }, [&] { y = fib_drain(pool, n - 2); });
    return x + y;
}

}  // namespace

TEST(ParallelInvoke, InsideJoinsDrainWithNoWorker) {
    DrainPool pool(zap::Config{.max_threads = 2});
    long result = 0;
    std::thread::id ran_on;
    struct Job : zap::BasicTask<NoSpawn> {
        std::function<void()> body;
        Job() : zap::BasicTask<NoSpawn>(&run) {}
        static void run(zap::BasicTask<NoSpawn>* t) { static_cast<Job*>(t)->body(); }
    } job;
    job.body = [&] {
        ran_on = std::this_thread::get_id();
        result = fib_drain(pool, 12);  // b is scheduled to the pool; the drain's wait runs it
    };
    pool.schedule(job);
    pool.shutdown();
    pool.join();
    EXPECT_EQ(ran_on, std::this_thread::get_id()) << "no worker: join()'s drain ran the task";
    EXPECT_EQ(result, fib_serial(12));
}

// ---- parallel_invoke(f1, ..., fn): n >= 2 callables ----

namespace {

// Callable once, as an lvalue only; neither copyable nor movable; it may be
// mutable. Counts its calls.
struct LvalueOnly {
    int calls = 0;
    std::thread::id ran_on{};
    LvalueOnly() = default;
    LvalueOnly(const LvalueOnly&) = delete;
    LvalueOnly& operator=(const LvalueOnly&) = delete;
    void operator()() & {
        ++calls;
        ran_on = std::this_thread::get_id();
    }
    void operator()() && = delete;
};

// Sums 1..n with an n-way parallel_invoke at each level: 8 leaves under two
// levels of 2- to 5-way forks.
long nested_sum(zap::ThreadPool& pool, int depth) {
    if (depth == 0) return 1;
    long a = 0, b = 0, c = 0;
    pool.parallel_invoke([&] { a = nested_sum(pool, depth - 1); }, [&] { b = nested_sum(pool, depth - 1); },
                         [&] { c = nested_sum(pool, depth - 1); });
    return a + b + c;
}

}  // namespace

TEST(ParallelInvokeN, EveryCallableRunsOnceAsAnLvalueNeverCopied) {
    for (std::uint32_t threads : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads);
        auto check = [&] {
            LvalueOnly f[8];
            pool.parallel_invoke(f[0], f[1]);
            for (int i = 0; i < 2; ++i) EXPECT_EQ(f[i].calls, 1);
            pool.parallel_invoke(f[0], f[1], f[2]);
            pool.parallel_invoke(f[0], f[1], f[2], f[3]);
            pool.parallel_invoke(f[0], f[1], f[2], f[3], f[4]);
            pool.parallel_invoke(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
            const int expected[8] = {5, 5, 4, 3, 2, 1, 1, 1};
            for (int i = 0; i < 8; ++i) EXPECT_EQ(f[i].calls, expected[i]) << "callable " << i;
        };
        check();               // from outside the pool
        run_on_pool(pool, check);  // from a worker
    }
}

TEST(ParallelInvokeN, MutableCallablesAndTemporaries) {
    zap::ThreadPool pool(2);
    std::atomic<int> total{0};
    pool.parallel_invoke([&, n = 0]() mutable { total += ++n; }, [&, n = 1]() mutable { total += ++n; },
                         [&, n = 2]() mutable { total += ++n; });
    EXPECT_EQ(total.load(), 1 + 2 + 3);
}

TEST(ParallelInvokeN, NestedNWayForksOnOneAndSeveralWorkers) {
    for (std::uint32_t threads : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads);
        EXPECT_EQ(nested_sum(pool, 6), 729);  // 3^6 leaves
        long inside = 0;
        run_on_pool(pool, [&] { inside = nested_sum(pool, 6); });
        EXPECT_EQ(inside, 729);
    }
}

TEST(ParallelInvokeN, EveryCallableRunsWhenSomeThrowAndOneExceptionIsRethrown) {
    zap::ThreadPool pool(2);
    std::atomic<int> ran{0};
    auto ok = [&] { ran++; };
    auto boom = [&] {
        ran++;
        throw std::runtime_error("boom");
    };
    EXPECT_THROW(pool.parallel_invoke(ok, boom, ok, boom, ok), std::runtime_error);
    EXPECT_EQ(ran.load(), 5);
    run_on_pool(pool, [&] { EXPECT_THROW(pool.parallel_invoke(boom, ok, ok, ok, ok, boom, ok), std::runtime_error); });
    EXPECT_EQ(ran.load(), 12);
}

TEST(ParallelInvokeN, AllocatesNothing) {
    if (!ZAP_TEST_COUNTS_NEW) GTEST_SKIP() << "ThreadSanitizer owns operator new; counted in the other builds";
    zap::ThreadPool pool(2);
    pool.warm(2);
    long inside = 0, allocated_inside = -1;
    run_on_pool(pool, [&] {
        const long before = heap_allocations.load();
        for (int i = 0; i < 50; ++i) inside += nested_sum(pool, 5);
        allocated_inside = heap_allocations.load() - before;
    });
    const long before = heap_allocations.load();
    const long outside = nested_sum(pool, 5);
    EXPECT_EQ(heap_allocations.load() - before, 0);
    EXPECT_EQ(allocated_inside, 0);
    EXPECT_EQ(inside, 50 * 243);
    EXPECT_EQ(outside, 243);
}
