// SPDX-License-Identifier: MIT
// zap under std::execution (src/zap/execution.hpp, with stdexec): the
// scheduler's concept and identity; schedule(sched) completes on a worker,
// allocating nothing; a stop request before the worker reaches the task
// completes with set_stopped() (at once in start(), or on the worker), and
// racing the run it still completes exactly once; bulk under par spreads
// over the workers through the pool's loop, keeps seq sequential, covers
// every index once, turns a throw into set_error, passes a predecessor's
// set_stopped and set_error on; exec::task on the scheduler hops with both
// awaitables; scheduling after shutdown() is the contract violation. An
// operation that never completes fails its test (hang_watchdog.hpp) instead
// of hanging.
//
// Built only where stdexec compiles (tests/CMakeLists.txt); elsewhere the
// ctest unit.execution exits 77 (SKIPPED).
#include "counting_new.hpp"
#include "counting_platform.hpp"
#include "hang_watchdog.hpp"

#include <zap/execution.hpp>
#include <zap/zap.hpp>

#include <exec/task.hpp>
#include <stdexec/execution.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

// What one schedule operation did: how it completed, how often, where.
struct Probe {
    std::atomic<int> values{0};
    std::atomic<int> stops{0};
    std::optional<std::uint32_t> worker;
    std::thread::id thread;
    zap::WaitGroup done;
    Probe() { done.add(); }
    int completions() const { return values.load() + stops.load(); }
};

// A receiver that records into a Probe, with an inplace_stop_token in its environment.
template <class Pool>
struct ProbeReceiver {
    using receiver_concept = stdexec::receiver_t;
    Probe* probe;
    Pool* pool;
    stdexec::inplace_stop_token token;

    void set_value() && noexcept { finish(probe->values); }
    void set_stopped() && noexcept { finish(probe->stops); }
    auto get_env() const noexcept { return stdexec::prop{stdexec::get_stop_token, token}; }

private:
    void finish(std::atomic<int>& count) const noexcept {
        probe->worker = pool->worker_index();
        probe->thread = std::this_thread::get_id();
        count.fetch_add(1);
        probe->done.done();
    }
};

// An operation state kept in place (operation states do not move).
template <class Sender, class Receiver>
struct Operation {
    stdexec::connect_result_t<Sender, Receiver> state;
    Operation(Sender sender, Receiver receiver) : state(stdexec::connect(std::move(sender), std::move(receiver))) {}
};

template <class Pool>
using ProbeOperation =
    Operation<decltype(std::declval<Pool&>().get_scheduler().schedule()), ProbeReceiver<Pool>>;

// Keeps every worker of `pool` busy until release(): what is scheduled meanwhile waits in a queue.
struct BusyWorkers {
    std::latch started;
    std::latch release_latch{1};
    BusyWorkers(zap::ThreadPool& pool, std::uint32_t n) : started(n) {
        for (std::uint32_t i = 0; i < n; ++i) {
            pool.spawn([this] {
                started.count_down();
                release_latch.wait();
            });
        }
        started.wait();
    }
    void release() { release_latch.count_down(); }
};

}  // namespace

TEST(Execution, TheSchedulerIsAStdexecScheduler) {
    static_assert(stdexec::scheduler<zap::Scheduler>);
    static_assert(std::same_as<zap::Scheduler::scheduler_concept, stdexec::scheduler_t>);
    static_assert(std::is_nothrow_copy_constructible_v<zap::Scheduler>);
    static_assert(std::same_as<decltype(std::declval<zap::ThreadPool&>().get_scheduler()), zap::Scheduler>);
    static_assert(stdexec::sender<decltype(stdexec::schedule(std::declval<zap::Scheduler>()))>);
    zap::ThreadPool a(threads(1)), b(threads(1));
    const zap::Scheduler sa = a.get_scheduler();
    const zap::Scheduler copy = sa;
    EXPECT_TRUE(copy == a.get_scheduler());
    EXPECT_FALSE(sa == b.get_scheduler());
    EXPECT_TRUE(sa != b.get_scheduler());
    EXPECT_EQ(stdexec::get_forward_progress_guarantee(sa), stdexec::forward_progress_guarantee::parallel);
    EXPECT_TRUE(stdexec::get_completion_scheduler<stdexec::set_value_t>(stdexec::get_env(stdexec::schedule(sa))) ==
                sa);
}

TEST(Execution, ScheduleCompletesOnAWorker) {
    for (std::uint32_t n : {1u, 4u}) {
        zap::ThreadPool pool(threads(n));
        const auto me = std::this_thread::get_id();
        auto [where] = stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) | stdexec::then([&] {
                                              return std::pair{pool.worker_index(), std::this_thread::get_id()};
                                          }))
                           .value();
        auto [index, thread] = where;
        ASSERT_TRUE(index.has_value()) << n << " threads";
        EXPECT_LT(*index, n);
        EXPECT_NE(thread, me);
    }
}

TEST(Execution, ScheduleFromAWorkerStaysOnThePool) {
    zap::ThreadPool pool(threads(2));
    auto sched = pool.get_scheduler();
    std::atomic<int> on_worker{0};
    auto hop = [&] { on_worker += pool.worker_index().has_value() ? 1 : 0; };
    stdexec::sync_wait(stdexec::schedule(sched) | stdexec::then(hop) | stdexec::continues_on(sched) |
                       stdexec::then(hop) | stdexec::let_value([&] { return stdexec::schedule(sched); }) |
                       stdexec::then(hop));
    EXPECT_EQ(on_worker.load(), 3);
}

TEST(Execution, AScheduleAllocatesNothing) {
    // The operation state is the pool's task: connect and start allocate
    // nothing, through the Platform or operator new.
    if (!ZAP_TEST_COUNTS_NEW) GTEST_SKIP() << "ThreadSanitizer owns operator new; counted in the other builds";
    using Pool = zap::BasicThreadPool<CountingPlatform>;
    Pool pool(threads(2));
    pool.warm(2);
    constexpr int rounds = 2000;
    std::vector<std::optional<ProbeOperation<Pool>>> operations(rounds);
    std::vector<Probe> probes(rounds);
    stdexec::inplace_stop_source never;
    const int platform_before = CountingPlatform::allocations.load();
    const long news_before = heap_allocations.load();
    for (int i = 0; i < rounds; ++i) {
        operations[i].emplace(pool.get_scheduler().schedule(), ProbeReceiver<Pool>{&probes[i], &pool, never.get_token()});
        stdexec::start(operations[i]->state);
    }
    const int platform_allocations = CountingPlatform::allocations.load() - platform_before;
    const long news = heap_allocations.load() - news_before;
    for (auto& probe : probes) probe.done.wait();
    EXPECT_EQ(platform_allocations, 0) << "over " << rounds << " schedules";
    EXPECT_EQ(news, 0) << "over " << rounds << " schedules";
    for (auto& probe : probes) EXPECT_EQ(probe.values.load(), 1);
}

TEST(Execution, AStopRequestedBeforeStartCompletesStoppedAtOnce) {
    zap::ThreadPool pool(threads(1));
    Probe probe;
    stdexec::inplace_stop_source source;
    source.request_stop();
    ProbeOperation<zap::ThreadPool> op(pool.get_scheduler().schedule(),
                                       ProbeReceiver<zap::ThreadPool>{&probe, &pool, source.get_token()});
    stdexec::start(op.state);
    // Completed inside start(), on this thread, before any worker could.
    EXPECT_EQ(probe.stops.load(), 1);
    EXPECT_EQ(probe.values.load(), 0);
    EXPECT_EQ(probe.thread, std::this_thread::get_id());
    EXPECT_FALSE(probe.worker.has_value());
}

TEST(Execution, AStopRequestedWhileQueuedCompletesStoppedOnTheWorker) {
    for (std::uint32_t n : {1u, 2u}) {
        zap::ThreadPool pool(threads(n));
        BusyWorkers busy(pool, n);
        Probe probe;
        stdexec::inplace_stop_source source;
        ProbeOperation<zap::ThreadPool> op(pool.get_scheduler().schedule(),
                                           ProbeReceiver<zap::ThreadPool>{&probe, &pool, source.get_token()});
        stdexec::start(op.state);  // queued: every worker is busy
        source.request_stop();
        EXPECT_EQ(probe.completions(), 0) << "nothing completes before a worker reaches the task";
        busy.release();
        probe.done.wait();
        EXPECT_EQ(probe.stops.load(), 1) << n << " threads";
        EXPECT_EQ(probe.values.load(), 0);
        EXPECT_TRUE(probe.worker.has_value()) << "set_stopped() on the worker that reached the task";
    }
}

TEST(Execution, AStopRacingTheRunCompletesExactlyOnce) {
    // Operations started from here while another thread requests stop on
    // each at once: each completes once, with set_value() or set_stopped(),
    // on a worker (a stop seen in start() completes here, before the push).
    zap::ThreadPool pool(threads(2));
    constexpr int rounds = 3000;
    std::vector<Probe> probes(rounds);
    std::vector<stdexec::inplace_stop_source> sources(rounds);
    std::vector<std::optional<ProbeOperation<zap::ThreadPool>>> operations(rounds);
    std::atomic<int> next_stop{0};
    std::thread stopper([&] {
        for (int i = 0; i < rounds; ++i) {
            while (next_stop.load() <= i) std::this_thread::yield();
            // 0 to 15 us later: before the worker reaches the task, or while it runs it, or after.
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(i % 16);
            while (std::chrono::steady_clock::now() < until) {
            }
            sources[i].request_stop();
        }
    });
    for (int i = 0; i < rounds; ++i) {
        operations[i].emplace(pool.get_scheduler().schedule(),
                              ProbeReceiver<zap::ThreadPool>{&probes[i], &pool, sources[i].get_token()});
        // The stop is let go before start() for one in four, after it for the others.
        if (i % 4 == 0) next_stop.store(i + 1);
        stdexec::start(operations[i]->state);
        next_stop.store(i + 1);
    }
    stopper.join();
    int values = 0, stops = 0;
    for (auto& probe : probes) {
        probe.done.wait();
        ASSERT_EQ(probe.completions(), 1);
        values += probe.values.load();
        stops += probe.stops.load();
        if (probe.values.load() == 1) {
            EXPECT_TRUE(probe.worker.has_value());
        }
    }
    std::printf("%d completed with set_value(), %d with set_stopped()\n", values, stops);
}

TEST(Execution, BulkUnderParSpreadsOverTheWorkers) {
    // Two iterations that each wait for the other to start: they can only
    // both finish if they run at once, on two workers.
    zap::ThreadPool pool(threads(2));
    std::atomic<int> arrived{0};
    std::atomic<int> met{0};
    std::vector<std::optional<std::uint32_t>> where(2);
    auto rendezvous = [&](int i) {
        where[i] = pool.worker_index();
        arrived.fetch_add(1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (arrived.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        if (arrived.load() == 2) met.fetch_add(1);
    };
    stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) | stdexec::bulk(stdexec::par, 2, rendezvous));
    EXPECT_EQ(met.load(), 2) << "the two iterations did not run at the same time";
    ASSERT_TRUE(where[0].has_value() && where[1].has_value());
    EXPECT_NE(*where[0], *where[1]);
}

TEST(Execution, BulkUnderParUnseqRunsOnThePoolToo) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> arrived{0}, met{0};
    auto rendezvous = [&](int) {
        arrived.fetch_add(1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (arrived.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        if (arrived.load() == 2) met.fetch_add(1);
    };
    stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) |
                       stdexec::bulk_unchunked(stdexec::par_unseq, 2, rendezvous));
    EXPECT_EQ(met.load(), 2);
}

TEST(Execution, BulkUnderSeqKeepsOneCallAfterTheOther) {
    zap::ThreadPool pool(threads(4));
    std::vector<int> order;
    std::set<std::thread::id> threads_seen;
    stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) | stdexec::bulk(stdexec::seq, 1000, [&](int i) {
                           order.push_back(i);  // one call at a time: no lock needed
                           threads_seen.insert(std::this_thread::get_id());
                       }));
    ASSERT_EQ(order.size(), 1000u);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(order[i], i);
    EXPECT_EQ(threads_seen.size(), 1u);
}

TEST(Execution, BulkCallsEveryIndexOnceAndPassesTheValuesOn) {
    for (std::uint32_t n : {1u, 3u}) {
        zap::ThreadPool pool(threads(n));
        constexpr int shape = 100'000;
        std::vector<std::atomic<int>> calls(shape);
        auto [result] = stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) | stdexec::then([] { return 42; }) |
                                           stdexec::bulk(stdexec::par, shape, [&](int i, int& value) {
                                               calls[i].fetch_add(1);
                                               EXPECT_EQ(value, 42);
                                           }))
                            .value();
        EXPECT_EQ(result, 42);
        for (int i = 0; i < shape; ++i) ASSERT_EQ(calls[i].load(), 1) << "index " << i << ", " << n << " threads";
    }
}

TEST(Execution, BulkChunkedCoversTheShapeInAtMostFourChunksPerThread) {
    zap::ThreadPool pool(threads(3));
    constexpr std::size_t shape = 1000;
    std::vector<std::atomic<int>> calls(shape);
    std::mutex lock;
    std::vector<std::pair<std::size_t, std::size_t>> chunks;
    stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) |
                       stdexec::bulk_chunked(stdexec::par, shape, [&](std::size_t begin, std::size_t end) {
                           for (std::size_t i = begin; i < end; ++i) calls[i].fetch_add(1);
                           const std::lock_guard hold(lock);
                           chunks.emplace_back(begin, end);
                       }));
    for (std::size_t i = 0; i < shape; ++i) ASSERT_EQ(calls[i].load(), 1) << "index " << i;
    EXPECT_GT(chunks.size(), 1u);
    EXPECT_LE(chunks.size(), 4u * pool.max_threads());
}

TEST(Execution, BulkOfAnEmptyOrNegativeShapeCallsNothing) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> calls{0};
    auto sched = pool.get_scheduler();
    for (int shape : {0, -3}) {
        stdexec::sync_wait(stdexec::schedule(sched) | stdexec::bulk(stdexec::par, shape, [&](int) { calls++; }) |
                           stdexec::bulk_chunked(stdexec::par, shape, [&](int, int) { calls++; }) |
                           stdexec::bulk_unchunked(stdexec::par, shape, [&](int) { calls++; }));
    }
    EXPECT_EQ(calls.load(), 0);
}

TEST(Execution, BulkUnderParPassesAPredecessorsStopAndErrorOn) {
    // The predecessor completes on the scheduler (so the pool's bulk takes
    // the work) with set_stopped() or set_error(): nothing is called, and
    // the completion reaches the receiver as it came.
    zap::ThreadPool pool(threads(2));
    std::atomic<int> calls{0};
    auto sched = pool.get_scheduler();
    stdexec::inplace_stop_source source;
    source.request_stop();  // schedule(sched) completes with set_stopped() (X1)
    auto stopped = stdexec::sync_wait(
        stdexec::write_env(stdexec::schedule(sched) | stdexec::bulk(stdexec::par, 10, [&](int) { calls++; }),
                           stdexec::prop{stdexec::get_stop_token, source.get_token()}));
    EXPECT_FALSE(stopped.has_value()) << "set_stopped() comes out as it went in";
    std::atomic<int> errors{0};
    stdexec::sync_wait(stdexec::schedule(sched) | stdexec::then([] { throw std::logic_error("before"); }) |
                       stdexec::bulk(stdexec::par, 10, [&](int) { calls++; }) |
                       stdexec::upon_error([&](std::exception_ptr error) {
                           try {
                               std::rethrow_exception(error);
                           } catch (const std::logic_error& e) {
                               if (std::string(e.what()) == "before") errors++;
                           }
                       }));
    EXPECT_EQ(errors.load(), 1) << "the predecessor's error reaches the receiver";
    EXPECT_EQ(calls.load(), 0);
}

TEST(Execution, BulkOnAPoolOfOneThreadFromAWorker) {
    // The bulk receiver's loop waits on the only worker: its wait helps.
    zap::ThreadPool pool(threads(1));
    std::atomic<int> calls{0};
    auto sched = pool.get_scheduler();
    stdexec::sync_wait(stdexec::schedule(sched) | stdexec::bulk(stdexec::par, 5000, [&](int) { calls++; }) |
                       stdexec::bulk(stdexec::par, 5000, [&](int) { calls++; }));
    EXPECT_EQ(calls.load(), 10'000);
}

TEST(Execution, AThrowInBulkReachesTheReceiverAfterEveryCall) {
    zap::ThreadPool pool(threads(3));
    std::atomic<int> calls{0};
    auto work = stdexec::schedule(pool.get_scheduler()) | stdexec::bulk(stdexec::par, 1000, [&](int i) {
                    calls++;
                    if (i % 100 == 7) throw std::runtime_error("index " + std::to_string(i));
                });
    EXPECT_THROW(stdexec::sync_wait(std::move(work)), std::runtime_error);
    EXPECT_EQ(calls.load(), 1000) << "a throwing call cancels nothing";
    // set_error, seen as such downstream.
    std::atomic<int> errors{0};
    stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) |
                       stdexec::bulk(stdexec::par, 10, [](int) { throw std::logic_error("x"); }) |
                       stdexec::upon_error([&](std::exception_ptr) { errors++; }));
    EXPECT_EQ(errors.load(), 1);
}

namespace {

exec::task<int> hops(zap::ThreadPool& pool, zap::Scheduler sched, int rounds) {
    int on_worker = pool.worker_index().has_value() ? 1 : 0;
    for (int i = 0; i < rounds; ++i) {
        co_await stdexec::schedule(sched);
        on_worker += pool.worker_index().has_value() ? 1 : 0;
        co_await pool.schedule();
        on_worker += pool.worker_index().has_value() ? 1 : 0;
    }
    co_return on_worker;
}

exec::task<long> fan_out(zap::ThreadPool& pool, zap::Scheduler sched) {
    auto [a, b] = co_await stdexec::when_all(stdexec::starts_on(sched, hops(pool, sched, 50)),
                                              stdexec::starts_on(sched, hops(pool, sched, 50)));
    co_return a + b;
}

}  // namespace

TEST(Execution, AnExecTaskStartedOnTheSchedulerHopsWithBothAwaitables) {
    for (std::uint32_t n : {1u, 3u}) {
        zap::ThreadPool pool(threads(n));
        auto sched = pool.get_scheduler();
        auto [on_worker] = stdexec::sync_wait(stdexec::starts_on(sched, hops(pool, sched, 100))).value();
        EXPECT_EQ(on_worker, 201) << n << " threads: the start and every resumption on a worker";
        auto [both] = stdexec::sync_wait(stdexec::starts_on(sched, fan_out(pool, sched))).value();
        EXPECT_EQ(both, 2 * 101);
    }
}

#ifndef NDEBUG
TEST(ExecutionDeathTest, ScheduleAfterShutdownFromOutsideThePoolAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(1));
            pool.shutdown();
            stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()));
        },
        "contract violated: schedule\\(\\) after shutdown\\(\\)");
}
#else
TEST(Execution, ScheduleAfterShutdownReleaseBuildsCompleteOnTheCallingThread) {
    zap::ThreadPool pool(threads(1));
    pool.shutdown();
    const auto me = std::this_thread::get_id();
    auto [thread] = stdexec::sync_wait(stdexec::schedule(pool.get_scheduler()) |
                                       stdexec::then([] { return std::this_thread::get_id(); }))
                        .value();
    EXPECT_EQ(thread, me) << "the task ran at once, inside start()";
}
#endif
