// SPDX-License-Identifier: MIT
// The contract's "Work-conserving" rule, tried as a user would: k tasks
// (2 <= k <= max_threads) that each wait until all k have started. They
// all complete only if no worker sleeps (or stays unspawned) while one of
// them waits in a queue behind the others. Scheduled from outside or from a
// running task; one schedule() each, one Batch, or spawn(); with and without
// warm(); a fresh pool every round, so that lazy spawning is part of it.
//
// A rendezvous that never completes is a stranded task: the waiting tasks
// give up after a watchdog deadline (far above any scheduling delay: a
// stranded task waits for ever, a slow one for milliseconds), the round is
// reported, and the test stops there instead of hanging CI.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

enum class From { outside, task };
enum class How { one_by_one, batch, spawn };

const char* name_of(From from) { return from == From::outside ? "Outside" : "FromTask"; }
const char* name_of(How how) {
    switch (how) {
        case How::one_by_one: return "OneByOne";
        case How::batch: return "Batch";
        case How::spawn: return "Spawn";
    }
    return "?";
}

// Rounds per shape: each round starts a pool and its threads, which the
// sanitizers make slow; the stress suite's `rendezvous` scenario plays more.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int default_rounds = 30;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr int default_rounds = 30;
#else
constexpr int default_rounds = 100;
#endif
#else
constexpr int default_rounds = 100;
#endif

// ZAP_WC_ROUNDS and ZAP_WC_DEADLINE_MS override the defaults (a longer soak,
// or the 50 ms to count stranded rounds quickly); ZAP_WC_COUNT=1
// plays every round and reports how many were stranded instead of stopping
// at the first.
int env_or(const char* name, int fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::atoi(value) : fallback;
}

// The test thread's wait for the round's k tasks. Not std::latch: where
// the system has no Linux futex, libstdc++ 12's latch can sleep through its
// last count_down (a notify between its read of the count and its sleep;
// portable_platform.hpp says more), which hung this test under Wine with
// every task done.
class Countdown {
public:
    explicit Countdown(std::uint32_t count) : left_(count) {}
    void count_down() {
        const std::lock_guard hold(lock_);
        if (--left_ == 0) zero_.notify_all();
    }
    // False if the count is still above zero at `until`.
    bool wait_until(Clock::time_point until) {
        std::unique_lock hold(lock_);
        return zero_.wait_until(hold, until, [this] { return left_ == 0; });
    }

private:
    std::mutex lock_;
    std::condition_variable zero_;
    std::uint32_t left_;
};

// One round's k tasks and their meeting point.
struct Rendezvous {
    std::uint32_t k;
    Clock::time_point deadline;
    std::atomic<std::uint32_t> started{0};
    std::atomic<std::uint32_t> seen_by_deadline{0};  // 0: nobody gave up
    Countdown finished;

    Rendezvous(std::uint32_t k, std::chrono::milliseconds watchdog)
        : k(k), deadline(Clock::now() + watchdog), finished(k) {}

    // The body of every task: arrive, wait (spinning, yielding the CPU) for
    // the other k - 1, give up at the deadline.
    void meet() {
        started.fetch_add(1);
        while (started.load() < k) {
            if (Clock::now() > deadline) {
                seen_by_deadline.store(started.load());
                break;
            }
            std::this_thread::yield();
        }
        finished.count_down();
    }
};

struct Member : zap::Task {
    Rendezvous* rendezvous = nullptr;
    Member() : zap::Task(&run) {}
    static void run(zap::Task* t) { static_cast<Member*>(t)->rendezvous->meet(); }
};

// Schedules the k members the way the round asks.
struct Scheduler {
    zap::ThreadPool& pool;
    Rendezvous& rendezvous;
    How how;
    std::deque<Member> members{};

    void schedule_all() {
        if (how == How::spawn) {
            for (std::uint32_t i = 0; i < rendezvous.k; ++i) pool.spawn([r = &rendezvous] { r->meet(); });
            return;
        }
        members.resize(rendezvous.k);
        zap::Batch batch;
        for (Member& m : members) {
            m.rendezvous = &rendezvous;
            if (how == How::batch) {
                batch.push(m);
            } else {
                pool.schedule(m);
            }
        }
        if (how == How::batch) pool.schedule(std::move(batch));
    }
};

// A task that schedules the k members and returns.
struct Driver : zap::Task {
    Scheduler* scheduler = nullptr;
    Driver() : zap::Task(&run) {}
    static void run(zap::Task* t) { static_cast<Driver*>(t)->scheduler->schedule_all(); }
};

// max_threads, k, from, how, warm
using Params = std::tuple<std::uint32_t, std::uint32_t, From, How, bool>;

class WorkConserving : public ::testing::TestWithParam<Params> {};

TEST_P(WorkConserving, KTasksThatWaitForEachOtherAllStart) {
    const auto [max_threads, k, from, how, warm] = GetParam();
    const int rounds = env_or("ZAP_WC_ROUNDS", default_rounds);
    const std::chrono::milliseconds watchdog{env_or("ZAP_WC_DEADLINE_MS", 10000)};
    const bool count_all = env_or("ZAP_WC_COUNT", 0) != 0;
    int stranded = 0;
    for (int round = 0; round < rounds; ++round) {
        Rendezvous rendezvous(k, watchdog);
        {
            zap::ThreadPool pool(zap::Config{.max_threads = max_threads});
            if (warm) pool.warm(max_threads);
            Scheduler scheduler{pool, rendezvous, how};
            Driver driver;
            driver.scheduler = &scheduler;
            if (from == From::task) {
                pool.schedule(driver);
            } else {
                scheduler.schedule_all();
            }
            // A task that never runs cannot give up at the deadline: past it
            // (and as long again), the round is reported instead of waited
            // for. The process ends there: the pool still holds tasks that
            // live in this frame, so it cannot be destroyed safely.
            if (!rendezvous.finished.wait_until(rendezvous.deadline + watchdog)) {
                std::fprintf(stderr, "round %d: %u of %u tasks ran; the others never ran (twice the watchdog)\n",
                             round, rendezvous.started.load(), k);
                std::fflush(stderr);
                std::_Exit(1);
            }
        }
        const std::uint32_t seen = rendezvous.seen_by_deadline.load();
        if (seen == 0) continue;
        ++stranded;
        ASSERT_TRUE(count_all) << "round " << round << ": " << seen << " of " << k
                               << " tasks started within the watchdog; the others waited in a queue while a "
                                  "worker slept or was never spawned";
    }
    EXPECT_EQ(stranded, 0) << stranded << " of " << rounds << " rounds stranded a task";
}

std::string param_name(const ::testing::TestParamInfo<Params>& info) {
    const auto [max_threads, k, from, how, warm] = info.param;
    return "Threads" + std::to_string(max_threads) + "K" + std::to_string(k) + name_of(from) + name_of(how) +
           (warm ? "Warm" : "Lazy");
}

// Every k from 2 to max_threads (k == max_threads needs every worker), both
// origins, the three ways to schedule, lazy and warmed pools.
std::vector<Params> all_shapes() {
    std::vector<Params> shapes;
    for (std::uint32_t max_threads : {2u, 3u, 4u})
        for (std::uint32_t k = 2; k <= max_threads; ++k)
            for (From from : {From::outside, From::task})
                for (How how : {How::one_by_one, How::batch, How::spawn})
                    for (bool warm : {false, true}) shapes.emplace_back(max_threads, k, from, how, warm);
    return shapes;
}

INSTANTIATE_TEST_SUITE_P(Rendezvous, WorkConserving, ::testing::ValuesIn(all_shapes()), param_name);

}  // namespace
