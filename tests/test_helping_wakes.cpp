// SPDX-License-Identifier: MIT
// Who a helping wait's wake-ups reach (helping_wait.hpp H7): a group's last
// done() wakes that group's waiter alone (K2), and new work wakes a helper
// only when no idle worker or new one can take it (K1), one at a time.
// Counted through the platform: every futex_wake call and the number of
// threads the kernel reports it woke (Linux).
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#if defined(__linux__)
#include <zap/linux_platform.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

// The Linux platform, whose futex_wake counts calls and the threads each one
// woke (the system call's answer), and which knows how many threads are
// inside futex_wait.
struct WakeCounting : zap::LinuxPlatform {
    static inline std::atomic<long> calls{0};
    static inline std::atomic<long> woken{0};
    static inline std::atomic<int> sleeping{0};
    static inline std::atomic<long> sleeps{0};  // futex_wait calls, ever
    // A thread held between its wake-up and its return from futex_wait
    // until the test lets it go (none by default).
    static inline std::atomic<std::thread::id> held_after_wake{};
    static inline std::atomic<bool> let_go{false};
    static inline std::atomic<bool> holding{false};  // that thread is held now
    // Timed sleeps: the longest timeout asked for, and the timeout of the
    // first timed sleep after `mark` was set (-1 until then).
    static inline std::atomic<long> longest_timeout_ns{0};
    static inline std::atomic<bool> mark{false};
    static inline std::atomic<long> timeout_after_mark_ns{-1};
    // Timed sleeps on a helper word (a helping wait's after shutdown, H6, or
    // an isolated one's, I4) whose value of the word does not hold exactly
    // the sleeper bit `announced` (not looked at while -1): a sleep that K2
    // could not see. The tests that look have one other timed sleep: the
    // wait's own on its group's word, while the last done() is still waking
    // it (wait_group.hpp W1); the group named in `group_of_word` is skipped.
    using Sleeper = zap::detail::Helpers<zap::LinuxPlatform>::Sleeper;
    static constexpr std::uint32_t sleeper_bits =
        static_cast<std::uint32_t>(Sleeper::helping) | static_cast<std::uint32_t>(Sleeper::isolated);
    static inline std::atomic<long> announced{-1};
    static inline std::atomic<long> misannounced{0};
    static inline std::atomic<const void*> group_of_word{nullptr};
    static inline std::atomic<std::size_t> group_size{0};
    static bool on_group_word(const void* word) noexcept {
        const auto* begin = static_cast<const char*>(group_of_word.load());
        const auto* at = static_cast<const char*>(word);
        return begin != nullptr && at >= begin && at < begin + group_size.load();
    }
    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc loc = Loc::current()) noexcept {
        ++sleeps;
        if (timeout != nullptr && announced.load() >= 0 && !on_group_word(&word) &&
            (expected & sleeper_bits) != announced.load())
            ++misannounced;
        if (timeout != nullptr) {
            const long ns = static_cast<long>(timeout->count());
            if (ns > longest_timeout_ns.load()) longest_timeout_ns = ns;
            if (mark.exchange(false)) timeout_after_mark_ns = ns;
        }
        ++sleeping;
        const bool woke = zap::LinuxPlatform::futex_wait(word, expected, timeout, loc);
        --sleeping;
        if (std::this_thread::get_id() == held_after_wake.load()) {
            holding = true;
            while (!let_go.load()) std::this_thread::yield();
            holding = false;
        }
        return woke;
    }
    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc = Loc::current()) noexcept {
        const int n = static_cast<int>(std::min<std::uint32_t>(count, 1u << 30));
        const long rc = syscall(SYS_futex, &word.underlying(), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
        calls.fetch_add(1);
        if (rc > 0) woken.fetch_add(rc);
    }
    static void reset() {
        calls = 0;
        woken = 0;
    }
};

using Pool = zap::BasicThreadPool<WakeCounting>;
using Group = zap::BasicWaitGroup<WakeCounting>;

// From now on, each timed sleep on a helper word must hold `sleeper`'s bit
// alone (WakeCounting::misannounced); `group`'s own word is no helper word.
void expect_announced(WakeCounting::Sleeper sleeper, const Group& group) {
    WakeCounting::group_size = sizeof(Group);
    WakeCounting::group_of_word = &group;
    WakeCounting::announced = static_cast<long>(sleeper);
}

void stop_looking_at_announcements() {
    WakeCounting::announced = -1;
    WakeCounting::group_of_word = nullptr;
}

// `n` tasks, each waiting on its own group with nothing to run: every worker
// of the pool ends up asleep in a helping wait. The tasks meet at a barrier
// before they wait, so each holds a worker of its own: a helping wait that
// found another waiting task would run it nested inside its own wait, and
// then only the innermost of them could return.
struct Waiters {
    std::vector<std::unique_ptr<Group>> groups;  // declared first: they outlive the pool's tasks
    Pool pool;
    std::atomic<int> waiting{0};
    std::atomic<int> returned{0};

    explicit Waiters(std::uint32_t n) : pool(zap::Config{.max_threads = n}) {
        pool.warm(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            groups.push_back(std::make_unique<Group>());
            groups.back()->add(1);
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            Group* group = groups[i].get();
            pool.spawn([this, group, n] {
                ++waiting;
                while (waiting.load() < static_cast<int>(n)) std::this_thread::yield();  // the barrier
                group->wait();
                ++returned;
            });
        }
        while (waiting.load() < static_cast<int>(n)) std::this_thread::yield();
        std::this_thread::sleep_for(50ms);  // let every waiter fall asleep (not asserted: only counted)
    }
};

// One round of the sleep tests below, on a pool of one worker: a task calls
// `wait` (a wait on `group` with nothing to run); once the worker sleeps in
// futex_wait - within microseconds; the 10 s only end the look if it never
// sleeps - this thread calls the group's last done() and waits for the task
// to return. What the round saw: whether the worker slept, and the
// futex_wake calls made from that done() on.
struct Round {
    int asleep;
    long wakes;
};
template <class Wait>
Round sleep_then_done(Pool& pool, Group& group, Wait wait) {
    group.add(1);
    std::atomic<bool> started{false}, returned{false};
    pool.spawn([&] {
        started = true;
        wait();
        returned = true;
    });
    while (!started.load()) std::this_thread::yield();
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (WakeCounting::sleeping.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    const int asleep = WakeCounting::sleeping.load();
    WakeCounting::reset();
    group.done();
    while (!returned.load()) std::this_thread::yield();
    return {asleep, WakeCounting::calls.load()};
}

// A helping wait with nothing to run sleeps on its worker's helper word
// (H5) until its group's last done() wakes it (K2): it does not spin for as
// long as the group is not done. Counted through the platform: the only
// worker is the only thread that enters futex_wait here. Eight rounds on
// the one worker: every sleep must leave the word as it found it (H5's
// leave), or a later done() finds no sleeper announced and wakes nobody
// (the hang watchdog reports it).
TEST(HelpingWakes, AHelpingWaitWithNothingToRunSleepsUntilItsGroupIsDone) {
    Pool pool(zap::Config{.max_threads = 1});
    for (int round = 0; round < 8; ++round) {
        Group group;
        const Round seen = sleep_then_done(pool, group, [&] { group.wait(); });
        ASSERT_GT(seen.asleep, 0) << "round " << round
                                  << ": a helping wait with nothing to run never slept: it spun (helping_wait.hpp H5)";
    }
}

// The same inside isolate() (isolation.hpp I4): an isolated wait with
// nothing to run arms its group once and sleeps on its worker's helper word,
// and the group's last done() wakes it (K2); its backoff's timeouts (at most
// 1 ms) only bound a wake it might miss. A round's done() may come while the
// wait is between two sleeps, finding no sleeper to wake: so across five
// rounds, not in each, at least one done() must wake the word. But every
// one of its sleeps must be announced in the word, the isolated bit alone:
// each sleep leaves the word as it found it (I4, as H5).
TEST(HelpingWakes, AnIsolatedWaitWithNothingToRunSleepsAndItsLastDoneWakesIt) {
    Pool pool(zap::Config{.max_threads = 1});
    WakeCounting::misannounced = 0;
    long wakes = 0;
    for (int round = 0; round < 5; ++round) {
        Group group;
        expect_announced(WakeCounting::Sleeper::isolated, group);
        const Round seen = sleep_then_done(pool, group, [&] { pool.isolate([&] { group.wait(); }); });
        wakes += seen.wakes;
        ASSERT_GT(seen.asleep, 0) << "round " << round
                                  << ": an isolated wait with nothing to run never slept: it spun (isolation.hpp I4)";
    }
    stop_looking_at_announcements();
    EXPECT_GE(wakes, 1) << "no last done() woke the isolated wait: its group was never armed (K2), only timeouts "
                           "ended its sleeps";
    EXPECT_EQ(WakeCounting::misannounced.load(), 0)
        << "an isolated wait slept with the helper word not announcing it: an earlier sleep did not leave the word";
}

// Both workers wait, each on its own group, both helpers asleep; two tasks
// come from outside, the first completing worker 0's group, the second
// worker 1's, and then shutdown(). Worker 0's helper is woken for the first
// task (K1 looks at slot 0 first; the second schedule finds the
// notification set and wakes nobody) and held there until shutdown() has
// returned; it then sees the pool shut down, takes no notification (A5
// returns at shutdown), runs the first task, and leaves its wait owing
// nothing, so it posts nothing (H8); its task then waits, without helping,
// for the second task. Only worker 1 can run that one, and it was asleep
// before shutdown(), which wakes idle workers through the idle event and,
// since K3, every helping wait asleep (helping_wait.hpp H7). Before K3 this
// test hung every time: worker 1 slept until its count was zero, worker 0
// waited for it, and the pool's destructor for both.
TEST(HelpingWakes, AHelperAsleepWhenThePoolShutsDownStillRunsWhatIsQueued) {
    std::array<Group, 2> groups;  // outlive the pool's tasks
    for (auto& g : groups) g.add(1);
    Pool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::atomic<int> arrived{0};
    std::atomic<bool> second_done{false};
    auto waiter = [&] {
        ++arrived;
        while (arrived.load() < 2) std::this_thread::yield();
        const std::uint32_t me = *pool.worker_index();
        if (me == 0) WakeCounting::held_after_wake = std::this_thread::get_id();
        groups[me].wait();
        if (me == 0) {
            while (!second_done.load()) std::this_thread::yield();
        } else {
            second_done = true;
        }
    };
    pool.spawn(waiter);
    pool.spawn(waiter);
    while (arrived.load() < 2) std::this_thread::yield();
    while (WakeCounting::sleeping.load() < 2) std::this_thread::yield();
    pool.spawn([&] { groups[0].done(); });
    pool.spawn([&] { groups[1].done(); });
    pool.shutdown();
    WakeCounting::let_go = true;
    pool.join();
    WakeCounting::held_after_wake = std::thread::id{};
    EXPECT_TRUE(second_done.load());
}

// H4-H5: a helping wait leaves a notification meant for a signaled worker
// to that worker, and sleeps meanwhile rather than looking again and again.
// One worker runs a task that will wait; the other is idle. A task from
// outside signals the idle worker, which is held between its wake-up and its
// return from futex_wait, so `notified` stays set with the state signaled;
// only then does the first task wait, with nothing it may run. It must
// sleep: the notification is not its to take.
TEST(HelpingWakes, AHelpingWaitSleepsBesideANotificationMeantForASignaledWorker) {
    Group group;  // outlives the pool's tasks
    group.add(1);
    Pool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::atomic<bool> go{false}, returned{false};
    std::atomic<std::thread::id> other{};
    pool.spawn([&] {
        while (!go.load()) std::this_thread::yield();
        group.wait();
        returned = true;
    });
    pool.spawn([&] { other = std::this_thread::get_id(); });  // the other worker: the first one is busy
    while (other.load() == std::thread::id{}) std::this_thread::yield();
    while (WakeCounting::sleeping.load() < 1) std::this_thread::yield();  // it is idle, asleep
    WakeCounting::let_go = false;
    WakeCounting::held_after_wake = other.load();
    pool.spawn([&] { group.done(); });  // signals it
    while (!WakeCounting::holding.load()) std::this_thread::yield();
    go = true;
    // Within microseconds; the 10 s only end the look if the wait never sleeps.
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (WakeCounting::sleeping.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    const int asleep = WakeCounting::sleeping.load();
    WakeCounting::let_go = true;
    while (!returned.load()) std::this_thread::yield();
    WakeCounting::held_after_wake = std::thread::id{};
    EXPECT_GT(asleep, 0) << "the helping wait looked again and again at a notification meant for the signaled "
                            "worker instead of sleeping (H5)";
}

// H8: a helping wait re-posts a notification it took only while it has not
// found the queues empty since. Worker 0 waits (asleep), worker 1 runs a
// long task; a task from outside wakes the helper (K1), which takes the
// notification, runs the task, finds nothing more and sleeps again. Once
// worker 1 has gone idle, the group's last done() wakes the helper (one
// futex_wake): leaving, it owes nothing, so it wakes nobody else. Were it
// still to owe the notification, its re-post would wake the idle worker for
// nothing (a second futex_wake).
TEST(HelpingWakes, AHelpingWaitThatFoundTheQueuesEmptyLeavesOwingNothing) {
    Group group;  // outlives the pool's tasks
    group.add(1);
    Pool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::atomic<bool> returned{false}, long_started{false}, release{false}, ran{false};
    pool.spawn([&] {
        group.wait();
        returned = true;
    });
    while (WakeCounting::sleeping.load() < 2) std::this_thread::yield();  // the waiter and the idle worker
    pool.spawn([&] {
        long_started = true;
        while (!release.load()) std::this_thread::yield();
    });
    while (!long_started.load()) std::this_thread::yield();
    while (WakeCounting::sleeping.load() < 1) std::this_thread::yield();  // the waiter
    pool.spawn([&] { ran = true; });  // nobody idle, nobody to spawn: K1 wakes the waiter, which runs it
    while (!ran.load()) std::this_thread::yield();
    release = true;
    while (WakeCounting::sleeping.load() < 2) std::this_thread::yield();  // both asleep again
    WakeCounting::reset();
    group.done();
    while (!returned.load()) std::this_thread::yield();
    EXPECT_EQ(WakeCounting::calls.load(), 1) << "the helping wait re-posted a notification it no longer owed (H8)";
}

// After shutdown() too (H6): a helping wait with nothing to run, started
// once shutdown() has returned, sleeps until its group is done rather than
// searching in a loop; its sleeps end at the backoff's timeouts too, and each
// leaves the helper word as it found it, so that every later sleep is
// announced there for K2.
TEST(HelpingWakes, AfterShutdownAHelpingWaitWithNothingToRunStillSleeps) {
    Pool pool(zap::Config{.max_threads = 1});
    Group group;
    group.add(1);
    WakeCounting::misannounced = 0;
    std::atomic<bool> started{false}, shut{false}, returned{false};
    pool.spawn([&] {
        started = true;
        while (!shut.load()) std::this_thread::yield();
        group.wait();
        returned = true;
    });
    while (!started.load()) std::this_thread::yield();
    pool.shutdown();
    const long sleeps_before = WakeCounting::sleeps.load();
    expect_announced(WakeCounting::Sleeper::helping, group);
    shut = true;
    // Three sleeps (the first timeouts are microseconds); the 10 s only end
    // the wait if it never sleeps.
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (WakeCounting::sleeps.load() - sleeps_before < 3 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    const long slept = WakeCounting::sleeps.load() - sleeps_before;
    group.done();
    while (!returned.load()) std::this_thread::yield();
    stop_looking_at_announcements();
    EXPECT_GE(slept, 3) << "after shutdown a helping wait with nothing to run spun instead of sleeping (H6)";
    EXPECT_EQ(WakeCounting::misannounced.load(), 0)
        << "after shutdown a helping wait slept with the helper word not announcing it: an earlier sleep did not "
           "leave the word (H6, as H5)";
}

// H6: after shutdown a helping wait sleeps between searches with a timeout
// that doubles (its backoff), and starts the doubling afresh once it has run
// a task. Worker 0 waits; worker 1, once the pool is shut down and the
// helper's timeouts have grown past 0.5 ms, schedules a task into its own
// ring and waits for it without helping: only the helper can run it, found
// by a search at one of those timeouts (no notify() wakes anyone after
// shutdown). Its next timed sleep must be short again, not at the 1 ms cap.
TEST(HelpingWakes, AfterShutdownAHelpingWaitThatRanATaskSleepsBrieflyAgain) {
    Group group;  // outlives the pool's tasks
    group.add(1);
    WakeCounting::longest_timeout_ns = 0;
    WakeCounting::mark = false;
    WakeCounting::timeout_after_mark_ns = -1;
    Pool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::atomic<bool> other_started{false}, shut{false}, ran{false};
    pool.spawn([&] {
        while (!other_started.load()) std::this_thread::yield();  // so the next task runs on the other worker
        group.wait();
    });
    pool.spawn([&] {
        other_started = true;
        while (!shut.load()) std::this_thread::yield();
        while (WakeCounting::longest_timeout_ns.load() < 500'000) std::this_thread::yield();
        pool.spawn([&] {  // into this worker's ring: allowed from a task after shutdown
            ran = true;
            WakeCounting::mark = true;
        });
        while (!ran.load()) std::this_thread::yield();
    });
    while (WakeCounting::sleeping.load() < 1) std::this_thread::yield();  // the helper, asleep
    pool.shutdown();
    shut = true;
    while (WakeCounting::timeout_after_mark_ns.load() < 0) std::this_thread::yield();
    const long next = WakeCounting::timeout_after_mark_ns.load();
    group.done();
    pool.join();
    EXPECT_LT(next, 100'000) << "after running a task, the helper's next sleep kept the grown timeout (" << next
                             << " ns): its backoff was not started afresh (H6)";
}

// 8 workers, 8 groups, each waited for by a task; each group's last done()
// comes from this thread, one at a time. Before helpers had a word each, every sleeping
// helper slept on one pool-wide word, and each done() woke all of them.
TEST(HelpingWakes, ALastDoneWakesItsOwnWaiterOnly) {
    constexpr std::uint32_t n = 8;
    Waiters w(n);
    WakeCounting::reset();
    for (std::uint32_t i = 0; i < n; ++i) {
        w.groups[i]->done();
        while (w.returned.load() < static_cast<int>(i + 1)) std::this_thread::yield();
    }
    const double calls_per_done = static_cast<double>(WakeCounting::calls.load()) / n;
    const double woken_per_call =
        static_cast<double>(WakeCounting::woken.load()) / std::max(1L, WakeCounting::calls.load());
    RecordProperty("futex_wake calls per done()", std::to_string(calls_per_done));
    RecordProperty("threads woken per call", std::to_string(woken_per_call));
    std::printf("futex_wake calls per done(): %.2f, threads woken per call: %.2f\n", calls_per_done, woken_per_call);
    EXPECT_LE(WakeCounting::calls.load(), static_cast<long>(n)) << "more than one wake call per done()";
    EXPECT_LE(WakeCounting::woken.load(), static_cast<long>(n)) << "a done() woke threads other than its waiter";
}

// With every worker asleep in a helping wait, a task scheduled from outside
// wakes one of them (K1), not all.
TEST(HelpingWakes, NewWorkWakesOneSleepingHelper) {
    constexpr std::uint32_t n = 8;
    Waiters w(n);
    std::atomic<bool> ran{false};
    WakeCounting::reset();
    w.pool.spawn([&] { ran = true; });
    while (!ran.load()) std::this_thread::yield();
    const long woken = WakeCounting::woken.load();
    std::printf("threads woken for one new task: %ld\n", woken);
    EXPECT_LE(woken, 1);
    for (auto& g : w.groups) g->done();
    while (w.returned.load() < static_cast<int>(n)) std::this_thread::yield();
}

// The sleeping helper is found on whichever worker it is: worker 0 is busy
// in a task that cannot end before the new task has run (it waits for it
// without helping), worker 1 is asleep in a helping wait, and the new task
// from outside can only run on worker 1, woken for it (K1). Were it not,
// this thread would wait for ever (the watchdog reports it): it waits here,
// before the pool's destructor, which would run the task itself.
TEST(HelpingWakes, NewWorkWakesTheSleepingHelperWhateverItsWorker) {
    Group group;  // outlives the pool's tasks
    group.add(1);
    Pool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::atomic<int> arrived{0};
    std::atomic<bool> released{false};
    auto role = [&] {
        ++arrived;
        while (arrived.load() < 2) std::this_thread::yield();  // one task on each worker
        if (pool.worker_index() == 0u) {
            while (!released.load()) std::this_thread::yield();
        } else {
            group.wait();
        }
    };
    pool.spawn(role);
    pool.spawn(role);
    while (arrived.load() < 2) std::this_thread::yield();
    // Both workers are in the tasks now: the only futex sleeper can be worker 1's helper.
    while (WakeCounting::sleeping.load() < 1) std::this_thread::yield();
    pool.spawn([&] {
        group.done();
        released = true;
    });
    while (!released.load()) std::this_thread::yield();
}

// A pool of two, one worker asleep in a helping wait with nothing to run
// (on its helper word, H5), and the number of threads that one task
// scheduled from outside wakes (K1: a helper is woken only when nobody
// idle, nobody to spawn and nobody bound to look can take the task).
// warmed: the other worker is spawned and asleep idle; otherwise it is
// still to be spawned.
long woken_for_one_task_beside_a_helper(bool warmed) {
    Group group;  // outlives the pool's tasks
    group.add(1);
    Pool pool(zap::Config{.max_threads = 2});
    if (warmed) pool.warm(2);
    std::atomic<bool> waiting{false};
    pool.spawn([&] {
        waiting = true;
        group.wait();
    });
    while (!waiting.load()) std::this_thread::yield();
    while (WakeCounting::sleeping.load() != (warmed ? 2 : 1)) std::this_thread::yield();
    std::this_thread::sleep_for(20ms);  // past any spin (not asserted: only counted)
    std::atomic<bool> ran{false};
    WakeCounting::reset();
    pool.spawn([&] { ran = true; });
    while (!ran.load()) std::this_thread::yield();
    const long woken = WakeCounting::woken.load();
    group.done();
    return woken;
}

// The other worker idle: the task wakes it, and only it. A notify_slow()
// that also woke the helper (a condition of K1's wake dropped) woke two.
TEST(HelpingWakes, NewWorkWakesAnIdleWorkerRatherThanAHelper) {
    EXPECT_EQ(woken_for_one_task_beside_a_helper(true), 1) << "threads woken for one task with a worker idle";
}

// The other worker still to spawn: the task spawns it and wakes nobody.
TEST(HelpingWakes, NewWorkSpawnsAWorkerRatherThanWakingAHelper) {
    EXPECT_EQ(woken_for_one_task_beside_a_helper(false), 0)
        << "threads woken for one task with a worker still to spawn";
}

// A waiter prefers its own group's tasks: X waits for its child
// C, which another worker runs; a long unrelated task L is scheduled from
// outside while the third worker is asleep, idle. X's wait must not take L
// (it would return only after it): the idle worker does. Asserted on the
// order of events: X's wait returns before L ends. (A worker that is free
// but not yet asleep - between a search that found nothing and its sleep -
// is not counted idle, and then a helping wait may take L: a helper must
// take work that no idle worker is bound to, since the busy workers' tasks
// may block until it runs. So the test waits until the third worker sleeps.)
TEST(HelpingWakes, AWaitLeavesAnUnrelatedTaskToAnIdleWorker) {
    using TaskGroup = zap::BasicTaskGroup<WakeCounting>;
    for (int round = 0; round < 10; ++round) {
        Pool pool(zap::Config{.max_threads = 3});
        pool.warm(3);
        std::atomic<bool> c_started{false};
        std::atomic<bool> l_queued{false};
        std::atomic<bool> release_c{false};
        std::atomic<bool> l_finished{false};
        std::atomic<bool> x_returned_first{false};
        auto x = pool.submit([&] {
            TaskGroup group(pool);
            group.run([&] {
                c_started = true;
                while (!release_c) std::this_thread::yield();
            });
            while (!l_queued) std::this_thread::yield();  // another worker runs C; L is queued
            group.wait();
            x_returned_first = !l_finished.load();
        });
        while (!c_started) std::this_thread::yield();
        // X and C spin on two workers: the one thread in futex_wait is the third worker, idle.
        while (WakeCounting::sleeping.load() != 1) std::this_thread::yield();
        pool.spawn([&] {  // L, from outside the pool: the global queue
            std::this_thread::sleep_for(100ms);
            l_finished = true;
        });
        l_queued = true;
        std::this_thread::sleep_for(5ms);  // X is in its wait by now (not asserted: only the order is)
        release_c = true;
        x.get();
        pool.shutdown();
        pool.join();
        EXPECT_TRUE(x_returned_first.load()) << "round " << round << ": X's wait ran the unrelated task";
    }
}

}  // namespace

#endif  // __linux__
