// SPDX-License-Identifier: MIT
// An isolated wait announces the work its search leaves behind
// (isolation.hpp IS2, pool_core.hpp A4): the tasks of other regions it took
// out of a queue and put back, and the tasks pushed into a queue while its
// search held it. The other worker's search may pass such a task by while
// the wait holds it, and then sleep: the wait's own notify is what wakes
// that worker, since the wait may not run the task itself (or is busy
// running a task of its region that waits for it).
//
// Each case is played, not hoped for: the platform below stops the waiting
// worker in Queue::release_consumer, its consumer lock still held, until
// the other worker has searched, missed the queue and gone to sleep; then
// lets it go. A task that is never announced waits for ever beside the
// sleeping worker; a watchdog far above the microseconds each case takes
// reports it and ends the process.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

namespace {

using namespace std::chrono_literals;

// The production platform with a ring of two slots (a third task overflows
// into the worker's queue), a gate, and a count of the threads asleep in an
// untimed futex_wait: the pool's idle workers (an isolated wait's sleep is
// timed, and the test's own threads never call the platform).
struct GatePlatform : zap::StdPlatform {
    using Loc = zap::SourceLocation;
    static constexpr std::uint32_t ring_capacity = 2;

    // The gate: the thread named in `gated` stops at its next release of a
    // queue's consumer lock (queue.hpp step 4, the one fetch_sub of
    // Queue::release_consumer), before the lock is released, and stays there
    // until `open`. Once: the stop clears `gated`.
    static inline std::atomic<std::thread::id> gated{};
    static inline std::atomic<bool> holding{false};
    static inline std::atomic<bool> open{false};
    static inline std::atomic<int> sleeping{0};

    static void reset() {
        gated = std::thread::id{};
        holding = false;
        open = false;
    }

    static void stop_at(Loc loc) noexcept {
        if (gated.load() != std::this_thread::get_id()) return;
        if (std::strstr(loc.function_name(), "release_consumer") == nullptr) return;
        gated = std::thread::id{};
        holding = true;
        while (!open.load()) std::this_thread::sleep_for(100us);
    }

    // The production atomic with the gate in front of its fetch_sub.
    template <class T>
    struct Atomic : zap::StdPlatform::Atomic<T> {
        using zap::StdPlatform::Atomic<T>::Atomic;
        T fetch_sub(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            stop_at(loc);
            return zap::StdPlatform::Atomic<T>::fetch_sub(value, order, loc);
        }
    };

    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc loc = Loc::current()) noexcept {
        const int counted = timeout == nullptr ? 1 : 0;
        sleeping += counted;
        const bool woke = zap::StdPlatform::futex_wait(word, expected, timeout, loc);
        sleeping -= counted;
        return woke;
    }
};

using Pool = zap::BasicThreadPool<GatePlatform>;
using TaskGroup = zap::BasicTaskGroup<GatePlatform>;
using WaitGroup = zap::BasicWaitGroup<GatePlatform>;

constexpr auto watchdog = 10s;

// Spins (never on the platform: the test counts the pool's sleepers) until
// `ready` says so; false after the watchdog's limit.
bool wait_until(const std::function<bool()>& ready) {
    const auto limit = std::chrono::steady_clock::now() + watchdog;
    while (!ready()) {
        if (std::chrono::steady_clock::now() > limit) return false;
        std::this_thread::sleep_for(100us);
    }
    return true;
}

// Reports and ends the process: the pool cannot be joined with a task
// stranded. exit(), not _Exit(): the process's exit handlers run (a mutant
// run's coverage report is one); the pool's threads are never joined. The
// first report ends it; a second watchdog that fires meanwhile waits.
[[noreturn]] void give_up(const char* what) {
    static std::atomic<bool> reported{false};
    while (reported.exchange(true)) std::this_thread::sleep_for(1s);
    std::fprintf(stderr, "%s (after %lld s)\n", what, static_cast<long long>(watchdog.count()));
    ADD_FAILURE() << what;
    std::fflush(nullptr);
    std::exit(1);
}

void expect(const std::function<bool()>& ready, const char* otherwise) {
    if (!wait_until(ready)) give_up(otherwise);
}

// Two workers: X runs on one of them, I, and stops at the gate in its
// isolated wait; once the other, O, sleeps, the gate opens and X must end.
void play(const std::function<void(Pool&)>& x, const char* stranded) {
    GatePlatform::reset();
    Pool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::atomic<bool> x_done{false};
    pool.spawn([&] {
        x(pool);
        x_done = true;
    });
    expect([] { return GatePlatform::holding.load(); }, "setup: the isolated wait never released a queue it held");
    expect([] { return GatePlatform::sleeping.load() == 1; }, "setup: the other worker did not go to sleep");
    GatePlatform::open = true;
    expect([&] { return x_done.load(); }, stranded);
    pool.shutdown();
    pool.join();
}

// The set-aside tasks (helping_wait.hpp, help_isolated: a search that moved
// tasks of other regions and found none of its own). X, outside any region,
// spawns three tasks that count down a WaitGroup, then waits for it inside
// isolate(): they are not the region's, so the wait only moves them. Two go
// into I's queue (the ring holds two; the third push moves the oldest out
// with it), one stays in I's ring. While the wait holds I's queue, O - kept
// busy until then - takes the ring's task, finds the queue held and sleeps.
// The wait puts the two back and must wake O: nobody else will run them.
TEST(IsolationAnnounces, TasksOfOtherRegionsItPutBack) {
    for (int round = 0; round < 5; ++round) {
        play(
            [](Pool& pool) {
                std::atomic<bool> busy{false};
                pool.spawn([&] {  // keeps O away from I's queue until the wait holds it
                    busy = true;
                    expect([] { return GatePlatform::holding.load(); }, "setup: the isolated wait never held its queue");
                });
                expect([&] { return busy.load(); }, "setup: the other worker never took the busy task");
                WaitGroup outside;
                outside.add(3);
                for (int i = 0; i < 3; ++i) pool.spawn([&] { outside.done(); });
                GatePlatform::gated = std::this_thread::get_id();
                pool.isolate([&] { outside.wait(); });
            },
            "stranded: the isolated wait put tasks of another region back into its queue without a notify, "
            "and the other worker slept beside them");
    }
}

// The tasks pushed while the wait held a queue (worker.hpp, take_queue_of:
// release_consumer's answer). Inside isolate(), X's child D runs on O and
// forks five members there: the ring of two overflows twice, so O's queue
// gets four. O runs the one left in its ring, then takes its queue: one
// member to run (Y), two into its ring, one left in the queue. Y lets X's
// isolated wait start, which takes that last member (C) from O's queue and
// stops at the gate holding it. Y then forks P, which overflows into the
// held queue, and returns; O runs its ring, finds its queue held, sleeps.
// The gate opens: the wait runs C, which waits for P. Only O can run P, and
// only the wait knows that P was pushed while it held the queue.
TEST(IsolationAnnounces, ATaskPushedWhileItHeldTheQueue) {
    for (int round = 0; round < 5; ++round) {
        play(
            [](Pool& pool) {
                const std::thread::id waiter = std::this_thread::get_id();
                std::atomic<bool> d_started{false};
                std::atomic<bool> y_started{false};
                std::atomic<bool> c_taken{false};
                std::atomic<bool> p_ran{false};
                std::atomic<int> started_on_o{0};
                pool.isolate([&] {
                    TaskGroup group(pool);
                    auto member = [&] {
                        if (std::this_thread::get_id() == waiter) {
                            if (c_taken.exchange(true)) return;
                            expect([&] { return p_ran.load(); },
                                   "stranded: a task pushed into a queue while the isolated wait held it was not "
                                   "announced, and the other worker slept beside it");
                        } else if (started_on_o++ == 1) {  // Y: O's first task from its queue
                            y_started = true;
                            expect([] { return GatePlatform::holding.load(); },
                                   "setup: the isolated wait never held the other worker's queue");
                            group.run([&] { p_ran = true; });  // P: into the held queue
                        }
                    };
                    group.run([&] {  // D, stolen by O while X waits for it
                        d_started = true;
                        for (int i = 0; i < 5; ++i) group.run(member);
                    });
                    expect([&] { return d_started.load(); }, "setup: the other worker never took D");
                    expect([&] { return y_started.load(); }, "setup: the other worker never took its queue");
                    GatePlatform::gated = waiter;
                    group.wait();
                });
            },
            "stranded: a task pushed into a queue while the isolated wait held it was not announced");
    }
}

}  // namespace
