// SPDX-License-Identifier: MIT
// TaskGroup: children, waits inside and outside the pool, exceptions,
// the destructor, reuse; two pools waiting on each other; the bound on
// nested helping; and what a helping wait does to a lock its waiter holds.
#include "hang_watchdog.hpp"
#include "held_worker.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
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

std::uint64_t fib_serial(unsigned n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

std::uint64_t fib(zap::ThreadPool& pool, unsigned n) {
    if (n < 2) return n;
    std::uint64_t a = 0, b = 0;
    zap::TaskGroup group(pool);
    group.run([&] { a = fib(pool, n - 1); });
    b = fib(pool, n - 2);
    group.wait();
    return a + b;
}

}  // namespace

TEST(TaskGroup, WaitFromOutsideThePool) {
    zap::ThreadPool pool(threads(2));
    std::vector<std::atomic<int>> runs(500);
    zap::TaskGroup group(pool);
    for (auto& r : runs) group.run([&r] { r++; });
    group.wait();
    for (auto& r : runs) ASSERT_EQ(r.load(), 1);
}

TEST(TaskGroup, FromOutsideTheWaitRunsItsChildrenWhileTheOnlyWorkerIsBusy) {
    // wait() on a thread outside the pool runs the group's own children
    // (outside_wait.hpp OC8), and their children, while the only worker is
    // busy elsewhere until the wait has returned. A task another thread
    // schedules between the children (in the global queue among them) is
    // not the group's, and the caller leaves it to the pool (OI1). Before the
    // wait helped, it waited for the held worker: release() then saw the
    // watchdog fired, and every child ran on the worker.
    constexpr int children = 32;
    zap_test::HeldWorker held;
    std::atomic<bool> unrelated_ran_on_caller{false};
    std::atomic<bool> unrelated_ran{false};
    std::vector<std::atomic<int>> ran_on_caller(2 * children);  // 1: on the caller, 2: elsewhere
    {
        zap::ThreadPool pool(threads(1));
        held.hold(pool, std::chrono::seconds(10));
        const std::thread::id caller = std::this_thread::get_id();
        const auto mark = [&ran_on_caller, caller](int i) { ran_on_caller[i] = std::this_thread::get_id() == caller ? 1 : 2; };
        zap::TaskGroup group(pool);
        for (int i = 0; i < children; ++i) {
            group.run([&group, &mark, i] {
                mark(i);
                group.run([&mark, i] { mark(children + i); });  // a grandchild, run by the child
            });
            if (i == children / 2) {
                std::thread([&] {
                    pool.spawn([&] {
                        unrelated_ran_on_caller = std::this_thread::get_id() == caller;
                        unrelated_ran = true;
                    });
                }).join();
            }
        }
        group.wait();
        EXPECT_TRUE(held.release()) << "the wait waited for the held worker";
        for (int i = 0; i < 2 * children; ++i) EXPECT_EQ(ran_on_caller[i].load(), 1) << "task " << i;
    }
    EXPECT_TRUE(unrelated_ran.load());
    EXPECT_FALSE(unrelated_ran_on_caller.load()) << "the caller ran a task that was not its group's";
}

TEST(TaskGroup, FromOutsideAWaitForManyChildrenReadsEachQueuedChildOnce) {
    // The caller runs every child itself (the only worker is held), each
    // found by a search of the global queue (outside_wait.hpp OC4a). A
    // search that took the whole queue to keep one child read all the
    // others each time: 400,000 children meant 8 * 10^10 reads, and the hang
    // watchdog ended the test. Stopping at the first child reads each once.
    constexpr int children = 400000;
    zap_test::HeldWorker held;
    int ran = 0;  // plain: every child runs on this thread
    {
        zap::ThreadPool pool(threads(1));
        held.hold(pool, std::chrono::seconds(60));
        zap::TaskGroup group(pool);
        for (int i = 0; i < children; ++i) group.run([&ran] { ++ran; });
        group.wait();
        EXPECT_TRUE(held.release()) << "the wait waited for the held worker";
    }
    EXPECT_EQ(ran, children);
}

TEST(TaskGroup, FromOutsideTheWaitRunsChildrenAWorkerSchedulesWhileItSleeps) {
    // The caller's wait sleeps one nap at a time and searches again (OC4d),
    // the workers' rings and overflow queues too (OC4a): children that a
    // running child schedules later - into its worker's ring, and past the
    // ring's 256 slots into its overflow queue - while that child keeps the
    // only worker busy until they have all run, are found and run by the
    // caller. A wait that slept until done() after its first nap, or
    // searched only once, or skipped the rings or the overflow queues, left
    // them to the busy worker: the running child's watchdog fired.
    constexpr int later = 300;
    std::atomic<int> ran_on_caller{0};
    std::atomic<int> ran{0};
    std::atomic<bool> started{false};
    bool watchdog_fired = false;  // written by the child, read after wait()
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    const std::thread::id caller = std::this_thread::get_id();
    group.run([&] {
        started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the caller naps meanwhile (any timing passes)
        for (int i = 0; i < later; ++i) {
            group.run([&] {
                if (std::this_thread::get_id() == caller) ran_on_caller++;
                ran++;
            });
        }
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (ran.load() < later && std::chrono::steady_clock::now() < end) std::this_thread::yield();
        watchdog_fired = ran.load() < later;
    });
    while (!started.load()) std::this_thread::yield();  // on the worker: the caller is not waiting yet
    group.wait();
    EXPECT_FALSE(watchdog_fired) << "the later children waited for the busy worker";
    EXPECT_EQ(ran_on_caller.load(), later);
}

namespace {

// Tasks that a group's child schedules in one batch on the worker running
// it (stamped with the child's region: the call's, OC2), and the child's
// wait for them that keeps that worker busy: until they have all run, or
// 10 s have passed (gave_up). Meanwhile only the caller's search can run them.
struct BusyWorkersTasks {
    struct Counted : zap::Task {
        std::atomic<int>* ran = nullptr;
        Counted() : zap::Task(&run) {}
        static void run(zap::Task* task) { static_cast<Counted*>(task)->ran->fetch_add(1); }
    };

    explicit BusyWorkersTasks(std::size_t count) : tasks(count) {}

    void schedule(zap::ThreadPool& pool) {
        zap::Batch batch;
        for (Counted& task : tasks) {
            task.ran = &ran;
            batch.push(zap::Batch(task));
        }
        pool.schedule(std::move(batch));
    }
    void wait_for_all() {
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        const int count = static_cast<int>(tasks.size());
        while (ran.load() < count && std::chrono::steady_clock::now() < end) std::this_thread::yield();
        gave_up = ran.load() < count;
    }

    std::vector<Counted> tasks;
    std::atomic<int> ran{0};
    std::atomic<bool> started{false};
    bool gave_up = false;  // written by the child, read after the caller's wait()
};

}  // namespace

TEST(TaskGroup, FromOutsideTheWaitRunsChildrenABusyWorkerPushedPastItsRing) {
    // The same, with the overflow queue certain: the running child schedules
    // 600 tasks in one batch, so its ring's 256 slots fill within one push
    // and at least half of the ring goes into the worker's overflow queue
    // (buffer.hpp push), whatever the caller claimed meanwhile. The child
    // then keeps the only worker busy until all 600 have run: only the
    // caller's search of the overflow queues (OC4a) reaches those tasks. A
    // search that skipped the overflow queues left them there: after 10 s
    // the child gave up and the EXPECT below failed.
    BusyWorkersTasks busy(600);
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    group.run([&] {
        busy.started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the caller naps meanwhile
        busy.schedule(pool);
        busy.wait_for_all();
    });
    while (!busy.started.load()) std::this_thread::yield();
    group.wait();
    EXPECT_FALSE(busy.gave_up) << "tasks in the busy worker's overflow queue waited for it";
}

TEST(TaskGroup, FromOutsideTheWaitSearchesEveryWorkersRing) {
    // Two workers: the first is held by a task of no call, the second runs
    // the group's child, which schedules four tasks into its own ring and
    // then keeps that worker busy until all four have run. Only the caller's
    // search of the second worker's ring (OC4a: every started worker, not
    // just the first) reaches them. A search that stopped after the first
    // worker left them there: after 10 s the child gave up, and the held
    // worker's watchdog had fired.
    BusyWorkersTasks busy(4);
    zap_test::HeldWorker held;
    zap::ThreadPool pool(threads(2));
    held.hold(pool, std::chrono::seconds(20));  // the first worker
    zap::TaskGroup group(pool);
    group.run([&] {  // on the second worker, spawned for it
        busy.schedule(pool);
        busy.started = true;
        busy.wait_for_all();
    });
    while (!busy.started.load()) std::this_thread::yield();
    group.wait();
    EXPECT_FALSE(busy.gave_up) << "tasks in the second worker's ring waited for a worker";
    EXPECT_TRUE(held.release()) << "the held worker's watchdog fired";
}

TEST(TaskGroup, TimedWaitOfAnOutsideCallerRunsNothing) {
    // Inside a call made from outside the pool (a loop's body on its caller),
    // a group's children are the call's (OC2), and wait() runs them; a timed
    // wait does not (OC5: its timeout stays what the caller asked), so
    // wait_for(0) only polls. The only worker is held: nobody else can run
    // the child. A timed wait that helped ran it and returned true.
    zap_test::HeldWorker held;
    std::atomic<bool> polled_done{true};
    std::atomic<bool> ran_on_caller{false};
    {
        zap::ThreadPool pool(threads(1));
        held.hold(pool, std::chrono::seconds(10));
        const std::thread::id caller = std::this_thread::get_id();
        pool.parallel_for(0, 1, [&](int) {
            zap::TaskGroup group(pool);
            group.run([&] { ran_on_caller = std::this_thread::get_id() == caller; });
            polled_done = group.wait_for(std::chrono::nanoseconds(0));
            group.wait();
        });
        EXPECT_TRUE(held.release()) << "the wait waited for the held worker";
    }
    EXPECT_FALSE(polled_done.load()) << "wait_for(0) ran the child";
    EXPECT_TRUE(ran_on_caller.load());
}

TEST(TaskGroup, RecursiveForkJoinOnEveryPoolSizeFromInsideAndOutside) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        EXPECT_EQ(fib(pool, 18), fib_serial(18)) << n << " threads, outside";
        EXPECT_EQ(pool.submit([&] { return fib(pool, 18); }).get(), fib_serial(18)) << n << " threads, inside";
    }
}

TEST(TaskGroup, EveryChildRunsAndTheFirstExceptionIsRethrown) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        std::atomic<int> ran{0};
        zap::TaskGroup group(pool);
        for (int i = 0; i < 100; ++i) group.run([&ran, i] {
            ran++;
            if (i % 7 == 3) throw i;
        });
        try {
            group.wait();
            FAIL() << "no exception";
        } catch (int which) {
            EXPECT_EQ(which % 7, 3);
        }
        EXPECT_EQ(ran.load(), 100);
    }
}

TEST(TaskGroup, ReusableAfterAWaitThatThrew) {
    zap::ThreadPool pool(threads(2));
    zap::TaskGroup group(pool);
    group.run([] { throw std::runtime_error("first round"); });
    EXPECT_THROW(group.wait(), std::runtime_error);
    std::atomic<int> ran{0};
    group.run([&] { ran++; });
    group.wait();  // the first round's exception was reported already
    EXPECT_EQ(ran.load(), 1);
}

TEST(TaskGroup, ChildrenMayRunMoreChildrenOnTheirGroup) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> ran{0};
    zap::TaskGroup group(pool);
    for (int i = 0; i < 10; ++i) group.run([&] {
        ran++;
        for (int j = 0; j < 10; ++j) group.run([&] { ran++; });
    });
    group.wait();
    EXPECT_EQ(ran.load(), 110);
}

TEST(TaskGroup, DestructorWaitsWhenWaitWasNotCalled) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> finished{0};
    {
        zap::TaskGroup group(pool);
        for (int i = 0; i < 4; ++i) group.run([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            finished++;
        });
    }
    EXPECT_EQ(finished.load(), 4);
}

TEST(TaskGroup, DestructorDuringUnwindingWaitsAndKeepsTheExceptionInFlight) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> finished{0};
    try {
        zap::TaskGroup group(pool);
        group.run([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            finished++;
            throw std::runtime_error("child");
        });
        throw std::logic_error("owner");
    } catch (const std::logic_error& error) {
        EXPECT_STREQ(error.what(), "owner");
    }
    EXPECT_EQ(finished.load(), 1);
}

TEST(TaskGroupDeathTest, DestructorTerminatesOnAnExceptionNoWaitReported) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            zap::ThreadPool pool(threads(1));
            zap::TaskGroup group(pool);
            group.run([] { throw std::runtime_error("never reported"); });
        },
        "never reported");
}

TEST(TaskGroup, TwoPoolsWaitingOnEachOthersWork) {
    // A task of pool A waits for a child in pool B, whose child waits for a
    // grandchild back in pool A: A's only worker, waiting, runs it.
    for (int round = 0; round < 50; ++round) {
        zap::ThreadPool a(threads(1)), b(threads(1));
        std::atomic<int> deepest{0};
        a.submit([&] {
             zap::TaskGroup in_b(b);
             in_b.run([&] {
                 zap::TaskGroup back_in_a(a);
                 back_in_a.run([&] { deepest = 3; });
                 back_in_a.wait();
             });
             in_b.wait();
         }).get();
        ASSERT_EQ(deepest.load(), 3) << "round " << round;
    }
}

TEST(TaskGroup, NestedHelpingStopsAtTheDepthBound) {
    // One worker; a task spawns many siblings, each waiting on a child of
    // its own. A wait that helps may pick a sibling, whose wait may pick
    // the next sibling... The bound keeps the nesting of waits on the
    // worker's stack at WaitDepth::max_wait_depth, however many siblings.
    constexpr int siblings = 2000;
    constexpr auto bound = zap::detail::WaitDepth::max_wait_depth;
    zap::ThreadPool pool(threads(1));
    std::atomic<int> ran{0};
    std::atomic<std::uint32_t> deepest{0};
    auto note_depth = [&] {
        const std::uint32_t now = zap::detail::WaitDepth::current();
        std::uint32_t seen = deepest.load();
        while (now > seen && !deepest.compare_exchange_weak(seen, now)) {
        }
    };
    pool.submit([&] {
        zap::TaskGroup all(pool);
        for (int i = 0; i < siblings; ++i) all.run([&] {
            zap::TaskGroup own(pool);
            own.run([&] {
                note_depth();
                ran++;
            });
            own.wait();
        });
        all.wait();
    }).get();
    EXPECT_EQ(ran.load(), siblings);
    EXPECT_LE(deepest.load(), bound);
    std::printf("deepest nesting of waits on the worker: %u (bound %u)\n", deepest.load(), bound);
}

TEST(TaskGroup, ForkJoinDeeperThanTheHelpBoundOnOneThread) {
    // Config::max_help_depth below the layer's own bound (WaitDepth): past
    // it a wait on the only worker would sleep with its child queued behind
    // it, for ever. The layer runs the child on the calling thread there
    // instead (wait_depth.hpp), so recursion deeper than the bound completes.
    for (const std::uint32_t bound : {1u, 4u, 16u}) {
        zap::Config config = threads(1);
        config.max_help_depth = bound;
        zap::ThreadPool pool(config);
        EXPECT_EQ(pool.submit([&] { return fib(pool, 20); }).get(), fib_serial(20)) << "max_help_depth " << bound;
    }
}

TEST(TaskGroup, AWaitMayRunTheTaskThatNeedsTheWaitersLock) {
    // What the pool promises (docs/drop_in.md): a wait on a worker may run
    // any task of the pool on the waiting thread, the awaited child
    // included, while the waiter still holds whatever it locked. On a pool of
    // one thread the child always runs inside its waiter's critical section:
    // with a std::mutex taken by both that is a self-deadlock (and undefined
    // behaviour), with a recursive mutex the child enters a section its
    // waiter has not finished. So never hold, across a wait, a lock that
    // pool tasks take. This test shows the limit with an owner-tracking flag.
    zap::ThreadPool pool(threads(1));
    std::atomic<std::thread::id> holder{};
    bool child_saw_its_waiter_holding = false;
    pool.submit([&] {
        holder = std::this_thread::get_id();  // "lock"
        zap::TaskGroup group(pool);
        group.run([&] { child_saw_its_waiter_holding = holder.load() == std::this_thread::get_id(); });
        group.wait();
        holder = std::thread::id{};  // "unlock"
    }).get();
    EXPECT_TRUE(child_saw_its_waiter_holding);
}
