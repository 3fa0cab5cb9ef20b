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
// worker inside its search - in Queue::release_consumer, its consumer lock
// still held, or just before it puts tasks it moved back where others look -
// until the other worker has searched, missed them and gone to sleep; then
// lets it go. A task that is never announced waits for ever beside the
// sleeping worker; a watchdog far above the microseconds each case takes
// reports it and ends the process.
//
// The last case counts instead of gating: an isolated search sorts the whole
// of a queue it takes, so a task of its region behind others is found
// without a sleep per task in front of it.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
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

    // The gate: the thread named in `gated` stops at its next load or
    // fetch_sub in function `function` of header `file`, before the
    // operation, and stays there until `open`. Once: the stop clears
    // `gated`. By default the one fetch_sub of Queue::release_consumer
    // (queue.hpp step 4): the consumer lock is still held there.
    static inline std::atomic<std::thread::id> gated{};
    static inline std::atomic<const char*> file{"/queue.hpp"};
    static inline std::atomic<const char*> function{"release_consumer"};
    static inline std::atomic<bool> holding{false};
    static inline std::atomic<bool> open{false};
    static inline std::atomic<int> sleeping{0};

    static void reset() {
        gated = std::thread::id{};
        stop_in("/queue.hpp", "release_consumer");
        holding = false;
        open = false;
        helper_sleeps = 0;
    }

    static void stop_in(const char* header, const char* name) {
        file = header;
        function = name;
    }

    // The count: the sleeps that the thread named in `watched` entered on
    // its helper word (helper_word.hpp, enter()'s fetch_add).
    static inline std::atomic<std::thread::id> watched{};
    static inline std::atomic<int> helper_sleeps{0};

    // g++ names a function in full ("bool zap::detail::Queue<P>::push(...)
    // [with ...]"), clang 14 by its bare name.
    static bool names(std::string_view name, std::string_view wanted) noexcept {
        if (name == wanted) return true;
        for (auto at = name.find(wanted); at != std::string_view::npos; at = name.find(wanted, at + 1)) {
            const bool qualified = at >= 2 && name.substr(at - 2, 2) == "::";
            const bool called = at + wanted.size() < name.size() && name[at + wanted.size()] == '(';
            if (qualified && called) return true;
        }
        return false;
    }

    static bool at(Loc loc, std::string_view header, std::string_view wanted) noexcept {
        return std::string_view(loc.file_name()).ends_with(header) && names(loc.function_name(), wanted);
    }

    static void stop_at(Loc loc) noexcept {
        if (gated.load() != std::this_thread::get_id() || !at(loc, file.load(), function.load())) return;
        gated = std::thread::id{};
        holding = true;
        while (!open.load()) std::this_thread::sleep_for(100us);
    }

    static void count_at(Loc loc) noexcept {
        if (watched.load() == std::this_thread::get_id() && at(loc, "/helper_word.hpp", "enter")) ++helper_sleeps;
    }

    // The production atomic with the gate in front of its loads and
    // fetch_subs, and the count in front of its fetch_adds.
    template <class T>
    struct Atomic : zap::StdPlatform::Atomic<T> {
        using zap::StdPlatform::Atomic<T>::Atomic;
        T fetch_add(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            count_at(loc);
            return zap::StdPlatform::Atomic<T>::fetch_add(value, order, loc);
        }
        T load(std::memory_order order, Loc loc = Loc::current()) const noexcept {
            stop_at(loc);
            return zap::StdPlatform::Atomic<T>::load(order, loc);
        }
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
// Five rounds, each on a pool of its own.
void play(const std::function<void(Pool&)>& x, const char* stranded) {
    for (int round = 0; round < 5; ++round) {
        GatePlatform::reset();
        Pool pool(zap::Config{.max_threads = 2});
        pool.warm(2);
        std::atomic<bool> x_done{false};
        pool.spawn([&] {
            x(pool);
            x_done = true;
        });
        expect([] { return GatePlatform::holding.load(); }, "setup: the isolated wait never reached the gate");
        expect([] { return GatePlatform::sleeping.load() == 1; }, "setup: the other worker did not go to sleep");
        GatePlatform::open = true;
        expect([&] { return x_done.load(); }, stranded);
        pool.shutdown();
        pool.join();
    }
}

// Spawns a task that O takes and runs until the gate holds I: O searches
// only then, while I holds what it moved.
void keep_the_other_busy(Pool& pool) {
    std::atomic<bool> busy{false};
    pool.spawn([&busy] {
        busy = true;
        expect([] { return GatePlatform::holding.load(); }, "setup: the isolated wait never reached the gate");
    });
    expect([&] { return busy.load(); }, "setup: the other worker never took the busy task");
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
    play(
        [](Pool& pool) {
            keep_the_other_busy(pool);
            WaitGroup outside;
            outside.add(3);
            for (int i = 0; i < 3; ++i) pool.spawn([&] { outside.done(); });
            GatePlatform::gated = std::this_thread::get_id();
            pool.isolate([&] { outside.wait(); });
        },
        "stranded: the isolated wait put tasks of another region back into its queue without a notify, "
        "and the other worker slept beside them");
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

// The tasks above the region's newest in the waiter's own ring (worker.hpp,
// take_back_of, I3a). Inside isolate(), X spawns R, then, in a region of
// its own, A on top of it. The wait takes A off the ring to reach R and
// stops at the gate before it pushes A back; O, busy until then, searches,
// finds both rings empty and sleeps. The gate opens: the wait runs R, which
// waits for A. Only O can run A, and only the wait knows it moved A.
TEST(IsolationAnnounces, TasksItTookOffItsRingAndPutBack) {
    play(
        [](Pool& pool) {
            keep_the_other_busy(pool);
            std::atomic<bool> a_ran{false};
            pool.isolate([&] {
                WaitGroup r_done;
                r_done.add(1);
                pool.spawn([&] {  // R
                    expect([&] { return a_ran.load(); },
                           "stranded: the isolated wait took a task off its ring and put it back without a "
                           "notify, and the other worker slept beside it");
                    r_done.done();
                });
                pool.isolate([&] { pool.spawn([&] { a_ran = true; }); });  // A
                GatePlatform::stop_in("/buffer.hpp", "push");  // take_back_of's push of A
                GatePlatform::gated = std::this_thread::get_id();
                r_done.wait();
            });
        },
        "stranded: a task the isolated wait put back on its ring was not announced");
}

// The region's tasks the wait keeps beyond the one it runs (worker.hpp,
// take_queue_of, I3b). Inside isolate(), X forks three members: the ring of
// two overflows, so I's queue gets two and its ring one. The wait runs the
// ring's member first; its next search takes both of the queue's and stops
// at the gate, holding the queue; O, busy until then, finds I's ring empty
// and its queue held, and sleeps. The gate opens: the wait keeps one member
// in its ring and runs the other, which waits for the kept one. Only O can
// run that, and only the wait knows it is there.
TEST(IsolationAnnounces, TasksOfItsRegionItKeptForLater) {
    play(
        [](Pool& pool) {
            keep_the_other_busy(pool);
            const std::thread::id waiter = std::this_thread::get_id();
            std::atomic<int> on_waiter{0};
            std::atomic<bool> ran_on_o{false};
            pool.isolate([&] {
                TaskGroup group(pool);
                for (int i = 0; i < 3; ++i) {
                    group.run([&] {
                        if (std::this_thread::get_id() != waiter) {
                            ran_on_o = true;
                        } else if (on_waiter++ == 1) {  // the queue's member the wait ran
                            expect([&] { return ran_on_o.load(); },
                                   "stranded: the isolated wait kept a task of its region in its ring without "
                                   "a notify, and the other worker slept beside it");
                        }
                    });
                }
                GatePlatform::gated = waiter;
                group.wait();
            });
        },
        "stranded: a task of the region the isolated wait kept for later was not announced");
}

// The tasks of other regions claimed on the way to the region's oldest in
// another worker's ring (worker.hpp, claim_from, I3c). Inside isolate(), X
// forks W, which O takes; W spawns A in a region of its own, then R above
// it, both into O's ring. The wait claims A and R off O's ring and stops at
// the gate before it pushes A into its own queue; W returns and O, finding
// nothing anywhere, sleeps. The gate opens: the wait runs R, which waits
// for A. Only O can run A, and only the wait knows where it went.
TEST(IsolationAnnounces, TasksOfOtherRegionsItClaimedOnTheWay) {
    play(
        [](Pool& pool) {
            std::atomic<bool> w_ready{false};
            std::atomic<bool> a_ran{false};
            pool.isolate([&] {
                TaskGroup group(pool);
                group.run([&] {  // W, on O
                    pool.isolate([&] { pool.spawn([&] { a_ran = true; }); });  // A
                    group.run([&] {  // R
                        expect([&] { return a_ran.load(); },
                               "stranded: the isolated wait moved a task of another region into its queue "
                               "without a notify, and the other worker slept beside it");
                    });
                    w_ready = true;
                    expect([] { return GatePlatform::holding.load(); },
                           "setup: the isolated wait never claimed from the other worker's ring");
                });
                expect([&] { return w_ready.load(); }, "setup: the other worker never took W");
                GatePlatform::stop_in("/queue.hpp", "push");  // claim_from's push of A
                GatePlatform::gated = std::this_thread::get_id();
                group.wait();
            });
        },
        "stranded: a task of another region the isolated wait claimed was not announced");
}

// An isolated search sorts the whole of a queue it takes (worker.hpp,
// take_queue_of): a task of its region behind tasks of other regions is
// found in the same search, not one sleep per task in front of it. With a
// ring of four, W (on O) spawns A1-A4 in a region of its own, then R of
// X's region: the fifth push moves A1, A2 and R, in that order, into O's
// queue. W then waits for R, so that nothing on O moves; X's wait must run
// R without having slept.
struct RingOf4 : GatePlatform {
    static constexpr std::uint32_t ring_capacity = 4;
};

TEST(IsolationSearch, FindsItsTaskBehindOthersInAQueueWithoutSleeping) {
    using Pool4 = zap::BasicThreadPool<RingOf4>;
    {  // the count finds enter() by its name: a renamed enter() must fail here, not count nothing
        GatePlatform::reset();
        zap::detail::Helpers<RingOf4> word;
        GatePlatform::watched = std::this_thread::get_id();
        word.enter(zap::detail::Helpers<RingOf4>::Sleeper::isolated);
        GatePlatform::watched = std::thread::id{};
        ASSERT_EQ(GatePlatform::helper_sleeps.load(), 1) << "the count no longer sees helper_word.hpp's enter()";
    }
    for (int round = 0; round < 5; ++round) {
        GatePlatform::reset();
        Pool4 pool(zap::Config{.max_threads = 2});
        pool.warm(2);
        std::atomic<bool> w_ready{false};
        std::atomic<bool> r_ran{false};
        std::atomic<int> sleeps_before_r{-1};
        std::atomic<bool> x_done{false};
        pool.spawn([&] {  // X
            pool.isolate([&] {
                zap::BasicTaskGroup<RingOf4> group(pool);
                group.run([&] {  // W, on O
                    pool.isolate([&] {
                        for (int i = 0; i < 4; ++i) pool.spawn([] {});  // A1-A4
                    });
                    group.run([&] {  // R
                        sleeps_before_r = GatePlatform::helper_sleeps.load();
                        r_ran = true;
                    });
                    w_ready = true;
                    expect([&] { return r_ran.load(); }, "R never ran");
                });
                expect([&] { return w_ready.load(); }, "setup: the other worker never took W");
                GatePlatform::watched = std::this_thread::get_id();
                group.wait();
            });
            GatePlatform::watched = std::thread::id{};
            x_done = true;
        });
        expect([&] { return x_done.load(); }, "X never finished");
        EXPECT_EQ(sleeps_before_r.load(), 0) << "the isolated wait slept before it found its task in the queue";
    }
}

}  // namespace
