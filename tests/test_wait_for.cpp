// SPDX-License-Identifier: MIT
// WaitGroup::wait_for and TaskGroup::wait_for (wait_group.hpp step 5,
// task_group.hpp step 8): timed waits, from outside the pool and on its
// workers, where they help as wait() does.
//
// Every wait that a bug could leave asleep has a watchdog: a lost wake-up is
// a failed check after the watchdog's timeout, never a hung test. The
// watchdog is far above any scheduling delay; no check measures speed.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "held_wake_platform.hpp"
#include "rounds.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto watchdog = 10s;

// Blocks its callers until opened. It polls: std::atomic::wait under
// MinGW-w64's libstdc++ (GCC 12, no platform wait: a pool of condition
// variables) missed open()'s notify_all under Wine about once in 10-300 runs
// of FalseKeepsTheExceptionForTheWaitThatEndsTheRound, leaving a worker
// asleep in pass() with the gate open.
class Gate {
public:
    void open() { open_.store(true); }
    void pass() const {
        while (!open_.load()) std::this_thread::sleep_for(50us);
    }

private:
    std::atomic<bool> open_{false};
};

// Waits (sleeping) until `flag` is set, for the watchdog at most.
bool eventually(const std::atomic<bool>& flag) {
    const auto until = Clock::now() + watchdog;
    while (!flag.load()) {
        if (Clock::now() > until) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// A wait that a done() must end: true when it returned true before the
// watchdog (a wait that missed its wake-up returns only at the watchdog).
template <class Group>
bool woken(Group& group) {
    const auto start = Clock::now();
    return group.wait_for(watchdog) && Clock::now() - start < watchdog;
}

// Calls group.done() `n` times from another thread, a little later.
std::thread done_soon(zap::WaitGroup& group, int n = 1) {
    return std::thread([&group, n] {
        std::this_thread::sleep_for(5ms);
        for (int i = 0; i < n; ++i) group.done();
    });
}

// Runs `f` on a worker of `pool` and returns when it has returned (a task
// still running after the watchdog is a failure, and is still waited for:
// it uses this frame).
template <class F>
void on_worker(zap::ThreadPool& pool, F f) {
    std::atomic<bool> finished{false};
    pool.spawn([&] {
        f();
        finished = true;
    });
    EXPECT_TRUE(eventually(finished)) << "the task on the worker did not finish in time";
    while (!finished.load()) std::this_thread::sleep_for(1ms);
}

}  // namespace

// ---- WaitGroup, outside the pool (T2) -----------------------------------------

TEST(WaitGroupWaitFor, OutsideReturnsTrueOnceTheLastDoneCame) {
    zap::WaitGroup group;
    group.add(2);
    std::thread doer = done_soon(group, 2);
    EXPECT_TRUE(group.wait_for(watchdog));
    EXPECT_TRUE(group.is_done());
    doer.join();
}

TEST(WaitGroupWaitFor, OutsideTimesOutWhileTheCountIsNotZero) {
    zap::WaitGroup group;
    group.add(1);
    EXPECT_FALSE(group.wait_for(20ms));
    EXPECT_FALSE(group.is_done());
    group.done();
    EXPECT_TRUE(group.wait_for(0ns));  // done since: a poll says so
    group.wait();
}

TEST(WaitGroupWaitFor, ZeroAndNegativeTimeoutsPoll) {
    zap::WaitGroup group;
    EXPECT_TRUE(group.wait_for(0ns));  // nothing added: done
    group.add(1);
    EXPECT_FALSE(group.wait_for(0ns));
    EXPECT_FALSE(group.wait_for(-5s));
    group.done();
    EXPECT_TRUE(group.wait_for(-5s));
}

TEST(WaitGroupWaitFor, OutsideRepeatedTimeoutsThenSuccess) {
    // Another thread sleeps on the group's word under the WAITERS bit while
    // this one times out again and again: a timeout must leave WAITERS set
    // (T2), or the last done() would not wake the sleeper. Then this thread
    // waits again and is woken too.
    zap::WaitGroup group;
    group.add(2);
    std::atomic<bool> sleeper_woken{false};
    std::thread sleeper([&] { sleeper_woken = woken(group); });
    std::this_thread::sleep_for(10ms);  // it sets WAITERS and sleeps (not needed for the check)
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(group.wait_for(1ms));
    group.done();
    group.done();  // the last: only the WAITERS bit tells it that the sleeper is there
    sleeper.join();
    EXPECT_TRUE(sleeper_woken.load()) << "the other waiter missed the last done()'s wake-up";
    EXPECT_TRUE(group.wait_for(0ns));
    zap::WaitGroup again;  // and a waiter that timed out before is woken in turn
    again.add(1);
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(again.wait_for(1ms));
    std::thread doer = done_soon(again);
    EXPECT_TRUE(woken(again));
    doer.join();
}

TEST(WaitGroupWaitFor, HugeTimeoutsDoNotOverflow) {
    zap::WaitGroup group;
    group.add(1);
    std::thread doer = done_soon(group);
    EXPECT_TRUE(group.wait_for(std::chrono::nanoseconds::max()));
    doer.join();
}

TEST(WaitGroupWaitFor, DestroyedRightAfterATrueWaitForRacingTheLastDone) {
    // Short timeouts, so that many of them end while the last done() runs:
    // wait_for() returns true only after that done() cleared WAKING (W1); a
    // done() still touching the group after it is freed is a use after free
    // under AddressSanitizer.
    const int rounds = zap_test::rounds(1000);
    for (int round = 0; round < rounds; ++round) {
        auto group = std::make_unique<zap::WaitGroup>();
        group->add(1);
        std::thread doer([raw = group.get()] { raw->done(); });
        while (!group->wait_for(std::chrono::microseconds{round % 7})) {
        }
        group.reset();
        doer.join();
    }
}

// ---- WaitGroup on a worker: the helping wait with a deadline (T1, T3) ----------

TEST(WaitGroupWaitFor, OnTheOnlyWorkerItRunsTheChildrenItScheduled) {
    // max_threads 1: nobody but the waiter can run the children, so a
    // wait_for that did not help would time out.
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    const std::thread::id test_thread = std::this_thread::get_id();
    on_worker(pool, [&] {
        zap::WaitGroup group;
        std::atomic<int> ran{0};
        std::atomic<bool> elsewhere{false};
        const std::thread::id waiter = std::this_thread::get_id();
        group.add(16);
        for (int i = 0; i < 16; ++i) pool.spawn([&] {
            if (std::this_thread::get_id() != waiter) elsewhere = true;
            ran++;
            group.done();
        });
        EXPECT_TRUE(group.wait_for(watchdog));
        EXPECT_EQ(ran.load(), 16);
        EXPECT_FALSE(elsewhere.load());
        EXPECT_NE(waiter, test_thread);
    });
}

TEST(WaitGroupWaitFor, ZeroOnAWorkerPollsWithoutRunningAnything) {
    // A poll runs no task: the child queued in the waiter's own ring is
    // still there after wait_for(0), and a later wait_for runs it.
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    on_worker(pool, [&] {
        zap::WaitGroup group;
        std::atomic<bool> ran{false};
        group.add(1);
        pool.spawn([&] {
            ran = true;
            group.done();
        });
        EXPECT_FALSE(group.wait_for(0ns));
        EXPECT_FALSE(ran.load());
        EXPECT_TRUE(group.wait_for(watchdog));
        EXPECT_TRUE(ran.load());
    });
}

TEST(WaitGroupWaitFor, OnAWorkerThatNeverRunsOutOfWorkTheDeadlineStillEndsTheWait) {
    // The helping wait always has a task to run (one that schedules itself
    // again), so it never sleeps, and no futex timeout tells it the time is
    // up: it must read the clock between tasks (deadline.hpp). The task
    // stops on its own after the watchdog, so a wait that missed its
    // deadline still ends, and fails the check.
    struct Churn : zap::Task {
        zap::ThreadPool* pool = nullptr;
        Clock::time_point until{};
        Churn() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<Churn*>(t);
            if (Clock::now() < self->until) self->pool->schedule(*self);
        }
    } churn;  // outlives the pool, whose destructor may run it a last time
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    churn.pool = &pool;
    on_worker(pool, [&] {
        zap::WaitGroup group;
        group.add(1);
        churn.until = Clock::now() + watchdog + 1s;
        pool.schedule(churn);
        const auto start = Clock::now();
        EXPECT_FALSE(group.wait_for(10ms));
        EXPECT_LT(Clock::now() - start, watchdog) << "the wait ran past its deadline while it had work";
        churn.until = Clock::now();  // the next run is its last
        group.done();
    });
}

TEST(WaitGroupWaitFor, TimeoutOnAWorkerLeavesTheChildRunningAndTheGroupReusable) {
    // The waiter's helping wait arms the group (H3), sleeps on its helper
    // word and times out: it must disarm (T3a), return false with the child
    // still running, and be woken by the child's done() in the waits that
    // follow on the same worker (a slot still naming its word would make the
    // next wait a nested one that no done() wakes: T4).
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    Gate gate;
    std::atomic<bool> child_started{false}, child_finished{false};
    on_worker(pool, [&] {
        zap::WaitGroup group;
        group.add(1);
        pool.spawn([&] {
            child_started = true;
            gate.pass();
            child_finished = true;
            group.done();
        });
        // The other worker steals the child (this one spins, running nothing).
        ASSERT_TRUE(eventually(child_started));
        for (int i = 0; i < 3; ++i) EXPECT_FALSE(group.wait_for(5ms));
        EXPECT_FALSE(child_finished.load());
        EXPECT_FALSE(group.is_done());
        std::thread opener([&] {
            std::this_thread::sleep_for(5ms);
            gate.open();
        });
        EXPECT_TRUE(woken(group));
        EXPECT_TRUE(child_finished.load());
        opener.join();
    });
}

TEST(WaitGroupWaitFor, ATimedOutGroupMayOutliveThePool) {
    // A worker's wait_for times out, its task ends, the pool is destroyed;
    // the group's last done() comes afterwards. The group must not still
    // name the freed worker's helper word (W2): under AddressSanitizer a wake
    // of it is a use after free, elsewhere an assertion (HW3) or a crash.
    for (int round = 0; round < 20; ++round) {
        zap::WaitGroup group;
        group.add(1);
        {
            zap::ThreadPool pool(zap::Config{.max_threads = 1});
            on_worker(pool, [&] { EXPECT_FALSE(group.wait_for(std::chrono::microseconds{50 * round})); });
        }
        group.done();
        EXPECT_TRUE(group.wait_for(0ns));
    }
}

TEST(WaitGroupWaitFor, ANestedTimedWaitLeavesTheOuterWaitArmed) {
    // max_threads 1. Task A waits on G (wait(): it arms G with its word and
    // sleeps). Task X, scheduled from outside, wakes A's helping wait, which
    // runs it: X waits on G too, nested, and times out. X must leave G armed
    // for A (T4): the last done() from outside then wakes A.
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    zap::WaitGroup group;
    group.add(1);
    std::atomic<bool> a_waiting{false}, a_returned{false}, x_returned{false};
    std::atomic<bool> x_result{true};
    pool.spawn([&] {
        a_waiting = true;
        group.wait();
        a_returned = true;
    });
    ASSERT_TRUE(eventually(a_waiting));
    std::this_thread::sleep_for(20ms);  // A arms G and falls asleep (not needed for the check)
    pool.spawn([&] {
        x_result = group.wait_for(5ms);
        x_returned = true;
    });
    ASSERT_TRUE(eventually(x_returned));
    EXPECT_FALSE(x_result.load());
    EXPECT_FALSE(a_returned.load());
    group.done();
    EXPECT_TRUE(eventually(a_returned)) << "the outer wait was not woken by the last done()";
    if (!a_returned.load()) pool.spawn([] {});  // a notification wakes it (K1), so the test ends
}

TEST(WaitGroupWaitFor, DestroyedRightAfterATrueWaitForOnAWorker) {
    // As DestroyedRightAfterATrueWaitForRacingTheLastDone, on the helping
    // path: the waiter (a worker) armed the group, and its short timeouts
    // race the last done() from the other worker: T3b must wait for WAKING.
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    const int rounds = zap_test::rounds(1000);
    on_worker(pool, [&] {
        for (int round = 0; round < rounds; ++round) {
            auto group = std::make_unique<zap::WaitGroup>();
            group->add(1);
            std::atomic<bool> started{false};
            pool.spawn([&started, raw = group.get(), pause = std::chrono::microseconds{round % 40}] {
                started = true;
                std::this_thread::sleep_for(pause);  // often long enough for the waiter to fall asleep, armed
                raw->done();
            });
            // Until the other worker has taken the child: the waits below
            // then find nothing to run, arm the group and race its done()
            // (its wake of this worker's word, then its clearing of WAKING).
            while (!started.load()) std::this_thread::yield();
            while (!group->wait_for(std::chrono::microseconds{round % 5})) {
            }
            group.reset();
        }
    });
}

TEST(WaitGroupWaitFor, AWorkersTrueWaitsForTheLastDoneToFinishWaking) {
    // The only worker's wait_for arms the group and sleeps on its helper
    // word; the last done() wakes it (K2) and is then held before it clears
    // WAKING, its last touch of the group. wait_for must not return before
    // that (T3b, W1): its caller may free the group the moment it returns.
    using Pool = zap::BasicThreadPool<HeldWakePlatform>;
    HeldWakePlatform::release = false;
    HeldWakePlatform::holding = false;
    HeldWakePlatform::timed_waits = 0;
    Pool pool(zap::Config{.max_threads = 1});
    zap::BasicWaitGroup<HeldWakePlatform> group;
    group.add(1);
    std::atomic<bool> returned{false}, result{false};
    pool.spawn([&] {
        result = group.wait_for(watchdog);
        returned = true;
    });
    // Its timed futex wait on the helper word: armed and asleep.
    const auto until = Clock::now() + watchdog;
    while (HeldWakePlatform::timed_waits.load() == 0 && Clock::now() < until) std::this_thread::sleep_for(1ms);
    ASSERT_GT(HeldWakePlatform::timed_waits.load(), 0) << "the waiter never slept";
    std::thread doer([&] {
        HeldWakePlatform::held = std::this_thread::get_id();
        group.done();
    });
    while (!HeldWakePlatform::holding.load() && Clock::now() < until) std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(HeldWakePlatform::holding.load()) << "the last done() woke no helper word";
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(returned.load()) << "wait_for returned while the last done() was still waking (W1)";
    HeldWakePlatform::release = true;
    doer.join();
    EXPECT_TRUE(eventually(returned));
    EXPECT_TRUE(result.load());
    HeldWakePlatform::held = std::thread::id{};
}

// ---- TaskGroup::wait_for (task_group.hpp step 8) --------------------------------

TEST(TaskGroupWaitFor, TrueRethrowsTheFirstExceptionAndEndsTheRound) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    zap::TaskGroup group(pool);
    std::atomic<int> ran{0};
    for (int i = 0; i < 8; ++i) group.run([&, i] {
        ran++;
        if (i == 3) throw std::runtime_error("child 3");
    });
    EXPECT_THROW((void)group.wait_for(watchdog), std::runtime_error);
    EXPECT_EQ(ran.load(), 8);
    EXPECT_TRUE(group.wait_for(0ns));  // a new round: nothing left to report
}

TEST(TaskGroupWaitFor, FalseKeepsTheExceptionForTheWaitThatEndsTheRound) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    zap::TaskGroup group(pool);
    Gate gate;
    group.run([] { throw std::runtime_error("early"); });
    group.run([&] { gate.pass(); });
    bool threw = false;
    try {
        for (int i = 0; i < 3; ++i) EXPECT_FALSE(group.wait_for(2ms));
    } catch (...) {
        threw = true;
    }
    EXPECT_FALSE(threw) << "a wait_for that timed out rethrew";
    gate.open();
    EXPECT_THROW(group.wait(), std::runtime_error);
}

TEST(TaskGroupWaitFor, OnAWorkerItHelpsAndRethrows) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    on_worker(pool, [&] {
        zap::TaskGroup group(pool);
        std::atomic<int> ran{0};
        for (int i = 0; i < 8; ++i) group.run([&] { ran++; });
        group.run([] { throw std::logic_error("child"); });
        EXPECT_THROW((void)group.wait_for(watchdog), std::logic_error);
        EXPECT_EQ(ran.load(), 8);
    });
}

TEST(TaskGroupWaitFor, CancelThenWaitForKeepsTheGroupCanceledUntilTheRoundEnds) {
    // A running child holds the round open: wait_for times out and the group
    // stays canceled (the children not started are skipped); the wait_for
    // that ends the round resets it (step 7).
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    zap::TaskGroup group(pool);
    Gate gate;
    std::atomic<bool> started{false};
    std::atomic<int> ran{0};
    group.run([&] {
        started = true;
        gate.pass();
    });
    ASSERT_TRUE(eventually(started));
    group.cancel();
    for (int i = 0; i < 4; ++i) group.run([&] { ran++; });  // canceled: never scheduled
    EXPECT_FALSE(group.wait_for(5ms));
    EXPECT_TRUE(group.is_canceled());
    gate.open();
    EXPECT_TRUE(woken(group));
    EXPECT_FALSE(group.is_canceled());
    EXPECT_EQ(ran.load(), 0);
    group.run([&] { ran++; });
    group.wait();
    EXPECT_EQ(ran.load(), 1);
}

TEST(TaskGroupWaitFor, InsideIsolateOnTheOnlyWorker) {
    // The isolated helping wait (isolation.hpp I3-I4) with a deadline runs
    // its region's children: nobody else can.
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    on_worker(pool, [&] {
        pool.isolate([&] {
            zap::TaskGroup group(pool);
            std::atomic<int> ran{0};
            for (int i = 0; i < 8; ++i) group.run([&] { ran++; });
            EXPECT_TRUE(group.wait_for(watchdog));
            EXPECT_EQ(ran.load(), 8);
        });
    });
}

TEST(TaskGroupWaitFor, InsideIsolateTimesOutAndIsWokenLater) {
    // Two workers: the region's child runs on the other worker, blocked; the
    // isolated wait sleeps on its helper word with the deadline's bound,
    // times out, disarms, and a later wait is woken by the child's done().
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    Gate gate;
    on_worker(pool, [&] {
        pool.isolate([&] {
            zap::TaskGroup group(pool);
            std::atomic<bool> started{false};
            group.run([&] {
                started = true;
                gate.pass();
            });
            ASSERT_TRUE(eventually(started));  // stolen by the other worker
            EXPECT_FALSE(group.wait_for(5ms));
            EXPECT_FALSE(group.wait_for(0ns));
            std::thread opener([&] {
                std::this_thread::sleep_for(5ms);
                gate.open();
            });
            EXPECT_TRUE(woken(group));
            opener.join();
        });
    });
}
