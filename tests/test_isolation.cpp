// SPDX-License-Identifier: MIT
// ThreadPool::isolate() (isolation.hpp): inside it, a helping wait runs only
// tasks created inside the call, and their descendants.
//
// The hazard it exists for, tried as a user would: task X waits on a
// TaskGroup; an unrelated task T blocks until X's wait has returned (T waits
// on a promise X fulfils after wait()). If X's helping wait picks T up,
// neither finishes. Every blocking wait here has a watchdog: a deadlock is a
// failed check after the watchdog's deadline, never a hung test.
#include "held_wake_platform.hpp"
#include "held_worker.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace std::chrono_literals;

// Far above any scheduling delay (a deadlock waits for ever, a slow round
// for milliseconds).
constexpr auto watchdog = 10s;

enum class Origin { outside, self };

// One round of the program. Returns whether T saw X's promise
// fulfilled (false: the watchdog fired, X's wait had picked T up).
// Origin::self: X creates T itself before it waits - without isolate(),
// right after its children (T is then the newest task of X's ring, the first
// a helping wait takes); with isolate(), before the call (T must come from
// outside the region to be unrelated to it).
bool round_completes(zap::ThreadPool& pool, Origin origin, bool isolated,
                     std::chrono::milliseconds limit = watchdog) {
    std::promise<void> waited;
    std::shared_future<void> after_wait = waited.get_future().share();
    std::atomic<bool> t_saw_it{false};
    std::atomic<bool> x_waiting{false};
    auto blocking_t = [after_wait, &t_saw_it, limit] {
        t_saw_it = after_wait.wait_for(limit) == std::future_status::ready;
    };
    auto x = pool.submit([&] {
        const bool self = origin == Origin::self;
        auto body = [&] {
            zap::TaskGroup group(pool);
            for (int i = 0; i < 4; ++i) group.run([] { std::this_thread::sleep_for(1ms); });
            if (self && !isolated) pool.spawn(blocking_t);  // T: created by X, after its children
            x_waiting = true;
            group.wait();
        };
        if (isolated) {
            if (self) pool.spawn(blocking_t);  // T: created by X, outside the region
            pool.isolate(body);
        } else {
            body();
        }
        waited.set_value();
    });
    if (origin == Origin::outside) {
        while (!x_waiting) std::this_thread::yield();
        pool.spawn(blocking_t);  // T: from a thread outside the pool, while X waits
    }
    x.get();
    pool.shutdown();
    pool.join();  // T has run once join() returns
    return t_saw_it.load();
}

using Shape = std::tuple<std::uint32_t, Origin>;
class Isolation : public ::testing::TestWithParam<Shape> {};

TEST_P(Isolation, AnUnrelatedTaskThatWaitsForTheWaiterIsNotPickedUp) {
    const auto [threads, origin] = GetParam();
    for (int round = 0; round < 20; ++round) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        ASSERT_TRUE(round_completes(pool, origin, true)) << "round " << round;
    }
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
    const auto [threads, origin] = info.param;
    return "Threads" + std::to_string(threads) + (origin == Origin::outside ? "TFromOutside" : "TFromX");
}

INSTANTIATE_TEST_SUITE_P(Shapes, Isolation,
                         ::testing::Combine(::testing::Values(1u, 2u, 4u), ::testing::Values(Origin::outside, Origin::self)),
                         shape_name);

// The hazard itself, without isolate(): on one thread, X's wait takes its
// own ring's newest task first, T, which blocks on X. (This is what the docs
// warn about; it must stay true until helping waits are isolated by default.)
TEST(IsolationHazard, WithoutIsolateTheWaitPicksTheBlockingTaskUp) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    EXPECT_FALSE(round_completes(pool, Origin::self, false, 2s)) << "X's helping wait did not run T: the hazard is gone";
}

// Tasks of the region stolen behind unrelated ones: X creates T (which
// blocks until X's wait has returned) and an unrelated task F, then, inside
// isolate(), eight children. Worker B, kept busy until they are queued,
// steals half of X's ring from its oldest end - T, F and the oldest
// children - runs the newest child it took, then T, and blocks in it. The
// children left in B's ring sit behind F: X's isolated wait must still reach
// them (it claims F on the way and sets it aside), since nobody else will.
TEST(Isolation, ChildrenStolenBehindAnUnrelatedTaskAreReached) {
    for (int round = 0; round < 10; ++round) {
        zap::ThreadPool pool(zap::Config{.max_threads = 2});
        pool.warm(2);
        std::promise<void> waited;
        std::shared_future<void> after_wait = waited.get_future().share();
        std::atomic<bool> t_saw_it{false};
        std::atomic<bool> gate_taken{false};
        std::atomic<bool> children_queued{false};
        std::atomic<int> children_ran{0};
        pool.submit([&] {
            pool.spawn([&] {  // the gate: keeps the other worker busy
                gate_taken = true;
                while (!children_queued) std::this_thread::yield();
            });
            while (!gate_taken) std::this_thread::yield();
            pool.spawn([after_wait, &t_saw_it] { t_saw_it = after_wait.wait_for(watchdog) == std::future_status::ready; });
            pool.spawn([] {});  // F
            pool.isolate([&] {
                zap::TaskGroup group(pool);
                for (int i = 0; i < 8; ++i)
                    group.run([&] {
                        std::this_thread::sleep_for(1ms);
                        ++children_ran;
                    });
                children_queued = true;
                group.wait();
            });
            waited.set_value();
        }).get();
        pool.shutdown();
        pool.join();
        EXPECT_EQ(children_ran.load(), 8);
        ASSERT_TRUE(t_saw_it.load()) << "round " << round << ": the isolated wait slept while its children were queued";
    }
}

// Inside isolate(), the wait runs no task scheduled outside it: every task
// created before isolate() runs on another thread, or after the wait.
TEST(Isolation, TheWaitRunsOnlyTasksCreatedInside) {
    for (std::uint32_t threads : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        std::atomic<bool> in_wait{false};
        std::atomic<std::thread::id> waiter{};
        std::atomic<int> outside_ran_in_wait{0};
        std::atomic<int> inside_ran{0};
        pool.submit([&] {
            for (int i = 0; i < 50; ++i)
                pool.spawn([&] {
                    if (in_wait && std::this_thread::get_id() == waiter.load()) ++outside_ran_in_wait;
                });
            pool.isolate([&] {
                zap::TaskGroup group(pool);
                for (int i = 0; i < 50; ++i) group.run([&] { ++inside_ran; });
                waiter = std::this_thread::get_id();
                in_wait = true;
                group.wait();
                in_wait = false;
            });
        }).get();
        EXPECT_EQ(inside_ran.load(), 50);
        EXPECT_EQ(outside_ran_in_wait.load(), 0) << "threads " << threads;
    }
}

TEST(Isolation, TwoWorkersIsolatedAtOnceDoNotShareARegion) {
    // Each worker opens its first region at the same time as the other (I1:
    // ids carry the worker's number, so they differ though both counts are
    // 1). Worker 1 queues children in its region and holds them; worker 0
    // waits inside its own region with nothing of its own to run. Its wait
    // must not take worker 1's children: they are no tasks of its region.
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::atomic<int> started{0};
    std::atomic<bool> children_queued{false}, release{false};
    std::atomic<std::thread::id> waiter{};
    std::atomic<int> ran{0}, ran_in_the_other_region{0};
    zap::WaitGroup held;
    held.add(1);
    auto body = [&] {
        ++started;
        while (started.load() < 2) std::this_thread::yield();  // one per worker
        const bool queues = pool.worker_index() == std::optional<std::uint32_t>{1};
        pool.isolate([&] {
            if (queues) {
                zap::TaskGroup group(pool);
                for (int i = 0; i < 8; ++i)
                    group.run([&] {
                        if (std::this_thread::get_id() == waiter.load()) ++ran_in_the_other_region;
                        ++ran;
                    });
                children_queued = true;
                while (!release.load()) std::this_thread::yield();
                group.wait();
            } else {
                while (!children_queued.load()) std::this_thread::yield();
                waiter = std::this_thread::get_id();
                held.wait();  // helps: only tasks of this region
                waiter = std::thread::id{};
            }
        });
    };
    auto a = pool.submit(body);
    auto b = pool.submit(body);
    // Time for the waiter's searches; one that takes a child does so at once.
    const auto until = std::chrono::steady_clock::now() + 200ms;
    while (ran_in_the_other_region.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
    held.done();
    release = true;
    a.get();
    b.get();
    EXPECT_EQ(ran.load(), 8);
    EXPECT_EQ(ran_in_the_other_region.load(), 0) << "worker 0's isolated wait ran worker 1's children";
}

// Descendants inherit the region: a child that forks and waits inside an
// isolated region, on any worker, completes (its waits are isolated too).
TEST(Isolation, NestedForkJoinInsideARegion) {
    for (std::uint32_t threads : {1u, 2u, 4u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        std::function<long(int)> fib = [&](int n) -> long {
            if (n < 2) return n;
            long a = 0, b = 0;
            zap::TaskGroup group(pool);
            group.run([&] { a = fib(n - 1); });
            b = fib(n - 2);
            group.wait();
            return a + b;
        };
        EXPECT_EQ(pool.submit([&] { return pool.isolate([&] { return fib(18); }); }).get(), 2584) << threads;
    }
}

// More tasks than a ring holds, created inside a region on one thread: the
// overflow goes to the worker's overflow queue together with tasks of no
// region, and the isolated wait takes its own from there, setting the others
// aside (I3b), which then run too.
TEST(Isolation, OverflowPastTheRingOnOneThread) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    std::atomic<int> outside{0};
    std::atomic<int> inside{0};
    pool.submit([&] {
        for (int i = 0; i < 300; ++i) pool.spawn([&] { ++outside; });
        pool.isolate([&] {
            zap::TaskGroup group(pool);
            for (int i = 0; i < 700; ++i) group.run([&] { ++inside; });
            group.wait();
            EXPECT_EQ(inside.load(), 700);
        });
    }).get();
    pool.shutdown();
    pool.join();
    EXPECT_EQ(outside.load(), 300);
}

// I1: the region ends with the call. A task created before isolate() is of
// the outer region (none here), and a wait after the call must run it again:
// on one worker nobody else can. A thread left in the region after the call
// would wait for it, isolated, until the timeout. (Before the next test,
// which would hang then: its outer wait could not run its own child.)
TEST(Isolation, AWaitAfterTheCallRunsATaskCreatedBeforeIt) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    zap::WaitGroup child;
    bool waited = false;
    pool.submit([&] {
        child.add();
        pool.spawn([&] { child.done(); });  // created before the call, outside any region
        pool.isolate([] {});
        waited = child.wait_for(watchdog);  // a helping wait again: runs the child
    }).get();
    child.wait();  // from outside the pool: the worker runs the child once the task has returned
    EXPECT_TRUE(waited) << "after isolate() returned, a wait did not run a task created before the call (I1)";
}

// I2 for a batch: every task of a batch scheduled inside isolate() is of the
// region, not only the first. One worker, so the isolated wait is the only
// one that can run them before the call returns.
TEST(Isolation, EveryTaskOfABatchScheduledInsideIsOfTheRegion) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    static zap::WaitGroup* group = nullptr;
    zap::WaitGroup ran;
    group = &ran;
    std::vector<zap::Task> tasks(3, zap::Task([](zap::Task*) { group->done(); }));
    bool waited = false;
    pool.submit([&] {
        pool.isolate([&] {
            ran.add(3);
            zap::Batch batch;
            for (zap::Task& task : tasks) batch.push(task);
            pool.schedule(std::move(batch));
            waited = ran.wait_for(watchdog);
        });
        ran.wait();  // outside the region: runs what the isolated wait could not
    }).get();
    EXPECT_TRUE(waited) << "the isolated wait did not run every task of a batch scheduled inside the call (I2)";
}

// Tasks of another region above the region's newest task in the waiter's own
// ring: a nested isolate() leaves two tasks of its region there, after the
// outer region's child. The outer wait takes both back to reach its child
// (I3a) and must put them back before it runs it (IS2). One worker, so
// nobody else takes them: a task dropped there never runs, and join()
// returns without it (no hang to wait for).
TEST(Isolation, TasksAboveTheRegionsNewestTaskInTheRingStillRun) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    std::atomic<bool> child_ran{false};
    std::atomic<int> inner_ran{0};
    pool.submit([&] {
        pool.isolate([&] {
            zap::TaskGroup group(pool);
            group.run([&] { child_ran = true; });  // the outer region's task, in the ring
            pool.isolate([&] {                      // the inner region's: above it, foreign to the outer wait
                for (int i = 0; i < 2; ++i) pool.spawn([&] { ++inner_ran; });
            });
            group.wait();
        });
    }).get();
    pool.shutdown();
    pool.join();
    EXPECT_TRUE(child_ran.load());
    EXPECT_EQ(inner_ran.load(), 2) << "the isolated wait lost the tasks it took back from above its region's task";
}

TEST(Isolation, ReturnsTheValueAndPropagatesExceptions) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    EXPECT_EQ(pool.isolate([] { return 7; }), 7);  // outside a worker: just calls f
    EXPECT_EQ(pool.submit([&] { return pool.isolate([] { return 8; }); }).get(), 8);
    EXPECT_THROW(pool.submit([&] { pool.isolate([] { throw std::runtime_error("x"); }); }).get(), std::runtime_error);
    // The region ends with the call, exception or not: a later wait helps again.
    EXPECT_EQ(pool.submit([&] {
                  try {
                      pool.isolate([] { throw 1; });
                  } catch (int) {
                  }
                  long sum = 0;
                  pool.parallel_for(0, 100, [&](int) {});
                  return sum;
              }).get(),
              0);
}

TEST(Isolation, OnAnOutsideCallerInsideACallTheWaitRunsOnlyTasksCreatedInside) {
    // A thread outside the pool, inside a call of it (here the first half of
    // a parallel_invoke, whose other half waits in the global queue: the only
    // worker is held), waits on a WaitGroup inside isolate(): that wait may
    // run only tasks created inside isolate() (outside_wait.hpp OC7), not b.
    // Without OC7 it ran b there, inside the isolated section.
    zap_test::HeldWorker held;
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    held.hold(pool, watchdog);
    bool isolated = false;  // C's own: the held worker runs none of this
    bool b_ran_isolated = false;
    bool b_ran = false;
    pool.parallel_invoke(
        [&] {
            pool.isolate([&] {
                isolated = true;
                zap::WaitGroup group;
                group.add();
                std::thread other([&] {
                    std::this_thread::sleep_for(50ms);
                    group.done();
                });
                group.wait();
                other.join();
                isolated = false;
            });
        },
        [&] {
            b_ran_isolated = isolated;
            b_ran = true;
        });
    EXPECT_TRUE(held.release()) << "the call waited for the held worker";
    EXPECT_TRUE(b_ran);
    EXPECT_FALSE(b_ran_isolated) << "a wait inside isolate() ran a task of the call made outside it";
}

}  // namespace

// ---- what isolate() does not promise (docs/helping_wait.md, "The rule, exactly") ----

TEST(IsolationLimits, AWaitInsideIsolateForAChildCreatedOutsideIsNotHelped) {
    // A task runs a child, then waits for it inside isolate(): the child was
    // created outside the region, so the isolated wait may not run it, and on
    // one worker nobody else can - the wait sleeps, the task never returns.
    // (Here the wait is timed, and the task then waits outside the region,
    // where its helping wait runs the child.)
    zap::ThreadPool pool(1);
    bool isolated_wait_returned_true = true;
    std::atomic<int> ran{0};
    pool.submit([&] {
        zap::TaskGroup group(pool);
        group.run([&] { ran++; });  // created outside the region
        isolated_wait_returned_true = pool.isolate([&] { return group.wait_for(50ms); });
        group.wait();  // not isolated: helps, runs the child
    }).get();
    EXPECT_FALSE(isolated_wait_returned_true) << "the isolated wait ran a task created outside its region";
    EXPECT_EQ(ran.load(), 1);
}

TEST(IsolationLimits, AnIsolatedWaiterSleepsWhileATaskOfAnotherRegionIsQueued) {
    // The README's work conservation excludes isolate(): on one worker, a
    // task queued outside the region waits while the only worker sleeps in
    // an isolated wait.
    zap::ThreadPool pool(1);
    std::atomic<bool> outside_ran{false};
    bool ran_during_the_wait = true;
    pool.submit([&] {
        pool.spawn([&] { outside_ran = true; });  // another region's task, queued on this worker
        pool.isolate([&] {
            zap::WaitGroup never;
            never.add();
            (void)never.wait_for(50ms);  // sleeps: the queued task is not its region's
            ran_during_the_wait = outside_ran.load();
            never.done();
        });
    }).get();
    EXPECT_FALSE(ran_during_the_wait);
    while (!outside_ran.load()) std::this_thread::yield();  // it runs once the worker is free
}

TEST(IsolationLimits, AProgressLoopOfWaitForInsideIsolateLetsAChildWaitOnTheWaiter) {
    // The child C waits until its waiter X has made progress (after X's first
    // timeout). Without isolate(), X's helping wait_for may pick C up on X's
    // own thread, where it waits for X for ever, idle workers or not. With
    // the progress loop inside isolate() and C created before it, X's waits
    // never run C: the other worker does.
    zap::ThreadPool pool(2);
    for (int round = 0; round < 20; ++round) {
        std::atomic<bool> progressed{false};
        std::atomic<bool> saw_progress{false};
        int timeouts = 0;
        pool.submit([&] {
            zap::TaskGroup group(pool);
            group.run([&] {  // C
                const auto until = std::chrono::steady_clock::now() + watchdog;
                while (!progressed.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
                saw_progress = progressed.load();
            });
            pool.isolate([&] {
                while (!group.wait_for(1ms)) {
                    ++timeouts;
                    progressed = true;
                }
            });
        }).get();
        ASSERT_TRUE(saw_progress.load()) << "round " << round << ": the waiter ran the child that waited for it";
        EXPECT_GT(timeouts, 0);
    }
}

TEST(IsolationLimits, AnIsolatedWaitSleepsInsteadOfSpinning) {
    // I4: an isolated wait that finds nothing of its region sleeps on its
    // helper word (a short spin, then timed futex waits: backoff.hpp) until
    // the group's last done() or the next timeout; it does not spin for as
    // long as the group is not done. Here the group is done by a thread
    // outside the pool once the wait has slept (HeldWakePlatform counts the
    // timed futex waits; the only worker is the only thread that makes any).
    using Pool = zap::BasicThreadPool<HeldWakePlatform>;
    Pool pool(zap::Config{.max_threads = 1});
    zap::BasicWaitGroup<HeldWakePlatform> outside;
    outside.add();
    std::atomic<bool> started{false}, returned{false};
    pool.spawn([&] {
        started = true;
        pool.isolate([&] { outside.wait(); });
        returned = true;
    });
    while (!started.load()) std::this_thread::yield();
    HeldWakePlatform::timed_waits = 0;
    // Within microseconds; the 10 s only end the test if it never sleeps.
    const auto until = std::chrono::steady_clock::now() + watchdog;
    while (HeldWakePlatform::timed_waits.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    const long slept = HeldWakePlatform::timed_waits.load();
    outside.done();
    while (!returned.load()) std::this_thread::yield();
    pool.shutdown();
    pool.join();
    EXPECT_GT(slept, 0) << "the isolated wait never slept while its group was not done: it spun (isolation.hpp I4)";
}
