// SPDX-License-Identifier: MIT
// Who spins, and how much (pool_core.hpp A8, spin.hpp): only the worker
// holding the waking role spins (S1), so at most one worker of a pool spins
// at any time; and Config::spin_rounds = 0 turns the workers' spin off.
//
// Counted through the platform: every round of a spin is one spin_hint()
// call, and this platform's hint lasts a millisecond and counts how many
// threads are inside one at once. Two workers spinning together would each
// spend nearly all of their spin inside a hint, so their hints overlap. The
// waits' own spins (WaitGroup, Parker) are off (wait_spin_rounds = 0), and
// the scenario makes no other hint: one task at a time from outside leaves
// no ring to steal from or overflow, and the counts are read before the
// pool's destructor (whose waits may back off).
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using namespace std::chrono_literals;

struct SpinCounting : zap::StdPlatform {
    static constexpr std::uint32_t wait_spin_rounds = 0;  // only the workers spin
    static inline std::atomic<int> inside{0};
    static inline std::atomic<int> most_inside{0};
    static inline std::atomic<long> hints{0};
    static void spin_hint() noexcept {
        const int now = inside.fetch_add(1) + 1;  // a counter only
        int most = most_inside.load();
        while (now > most && !most_inside.compare_exchange_weak(most, now)) {
        }
        hints.fetch_add(1);
        std::this_thread::sleep_for(1ms);  // long enough that two spins overlap
        inside.fetch_sub(1);
    }
    static void reset() {
        inside = 0;
        most_inside = 0;
        hints = 0;
    }
};

using Pool = zap::BasicThreadPool<SpinCounting>;

// Four workers go idle together (warm), then `rounds` times one task from
// outside wakes one, which goes idle again. Returns once the last task ran.
void idle_rounds(Pool& pool, int rounds) {
    pool.warm(4);
    std::this_thread::sleep_for(20ms);  // every worker has found no work
    for (int round = 0; round < rounds; ++round) {
        std::atomic<bool> ran{false};
        pool.spawn([&ran] { ran.store(true); });
        while (!ran.load()) std::this_thread::sleep_for(100us);  // no spin hint of ours
        std::this_thread::sleep_for(5ms);  // the worker that ran it spins (or not) before the next
    }
}

zap::Config config(std::uint32_t spin_rounds) {
    zap::Config config;
    config.max_threads = 4;
    config.spin_rounds = spin_rounds;
    return config;
}

TEST(Spin, OnlyTheWakingWorkerSpins) {
    SpinCounting::reset();
    Pool pool(config(8));
    idle_rounds(pool, 20);
    EXPECT_GT(SpinCounting::hints.load(), 0) << "no worker spun: the scenario tests nothing";
    EXPECT_EQ(SpinCounting::most_inside.load(), 1) << "two workers spun at once (S1: only the waking worker spins)";
}

TEST(Spin, ZeroRoundsTurnsTheWorkersSpinOff) {
    SpinCounting::reset();
    Pool pool(config(0));
    idle_rounds(pool, 20);
    EXPECT_EQ(SpinCounting::hints.load(), 0) << "a worker spun with Config::spin_rounds = 0";
}

// A platform whose spin hint only counts (SpinBudget's own arithmetic).
struct HintCounting : zap::StdPlatform {
    static inline long hints = 0;  // one thread only
    static void spin_hint() noexcept { ++hints; }
};

// The rounds a spin of `budget` takes until ready() turns true at round
// `ready_at` (never when 0).
long rounds_of(zap::detail::SpinBudget& budget, std::uint32_t bound, long ready_at) {
    HintCounting::hints = 0;
    long looks = 0;
    budget.spin<HintCounting>(bound, [&] { return ready_at != 0 && ++looks >= ready_at; });
    return HintCounting::hints;
}

TEST(SpinBudget, SpinsThatRunOutHalveTheNextDownToASixteenth) {
    zap::detail::SpinBudget budget;
    EXPECT_EQ(rounds_of(budget, 1600, 0), 1600);  // the first spin: the whole bound
    EXPECT_EQ(rounds_of(budget, 1600, 0), 800);
    EXPECT_EQ(rounds_of(budget, 1600, 0), 400);
    EXPECT_EQ(rounds_of(budget, 1600, 0), 200);
    EXPECT_EQ(rounds_of(budget, 1600, 0), 100);
    EXPECT_EQ(rounds_of(budget, 1600, 0), 100) << "below a sixteenth of the bound";
}

TEST(SpinBudget, SpinsThatSeeWorkEarnTheBoundBack) {
    zap::detail::SpinBudget budget;
    for (int i = 0; i < 8; ++i) rounds_of(budget, 1600, 0);
    EXPECT_EQ(budget.rounds(), 100u);
    EXPECT_EQ(rounds_of(budget, 1600, 10), 9);  // found at the tenth look: nine hints
    EXPECT_EQ(budget.rounds(), 200u);
    rounds_of(budget, 1600, 10);
    rounds_of(budget, 1600, 10);
    rounds_of(budget, 1600, 10);
    EXPECT_EQ(budget.rounds(), 1600u);
    rounds_of(budget, 1600, 10);
    EXPECT_EQ(budget.rounds(), 1600u) << "above the bound";
}

TEST(SpinBudget, ASpinThatSeesWorkDoublesItsRoundsUpToTheBound) {
    // An odd bound, 15: a spin that ran out leaves 7 rounds, and one that
    // then sees work doubles them to 14 - not to the bound, 15, which only
    // a spin of more than half the bound (7.5) earns.
    zap::detail::SpinBudget budget;
    rounds_of(budget, 15, 0);
    EXPECT_EQ(budget.rounds(), 7u);
    rounds_of(budget, 15, 2);
    EXPECT_EQ(budget.rounds(), 14u);
    rounds_of(budget, 15, 2);
    EXPECT_EQ(budget.rounds(), 15u);
}

TEST(SpinBudget, ABoundOfOneStillSpins) {
    zap::detail::SpinBudget budget;
    EXPECT_EQ(rounds_of(budget, 1, 0), 1);
    EXPECT_EQ(rounds_of(budget, 1, 0), 1);
}

TEST(SpinBudget, ABoundBelowSixteenHalvesDownToOneRound) {
    // A sixteenth of 15 is 0: the floor is one round, never none (a spin of
    // no rounds would count as "no spin yet" and start over at the bound).
    zap::detail::SpinBudget budget;
    for (long expected : {15, 7, 3, 1, 1, 1}) EXPECT_EQ(rounds_of(budget, 15, 0), expected);
    zap::detail::SpinBudget five;
    for (long expected : {5, 2, 1, 1}) EXPECT_EQ(rounds_of(five, 5, 0), expected);
}

// A pool whose work has ended: at each idle turn the waking worker's spin
// runs out, so each spins half as long as the one before (down to a
// sixteenth), not the whole bound every time. The hints here are the CPU's
// own, counted: 64 of them end long before the next task, 5 ms later.
struct FastCounting : zap::StdPlatform {
    static constexpr std::uint32_t wait_spin_rounds = 0;  // only the worker spins
    static inline std::atomic<long> hints{0};
    static void spin_hint() noexcept {
        hints.fetch_add(1);  // a counter only
        zap::StdPlatform::spin_hint();
    }
};

TEST(Spin, APoolWithNothingToDoSpinsLessAtEachIdleTurn) {
    zap::Config one = config(64);
    one.max_threads = 1;
    zap::BasicThreadPool<FastCounting> pool(one);
    pool.warm(1);
    std::this_thread::sleep_for(20ms);  // the worker spun once, found nothing, sleeps
    constexpr int turns = 8;
    for (int turn = 0; turn < turns; ++turn) {
        std::atomic<bool> ran{false};
        pool.spawn([&ran] { ran.store(true); });
        while (!ran.load()) std::this_thread::sleep_for(100us);
        std::this_thread::sleep_for(5ms);  // the worker's spin runs out: nothing comes
    }
    // One spin after warm and one per turn: 64 + 32 + 16 + 8 + 4 * 5 with
    // the budget, 9 * 64 = 576 without it.
    const long hints = FastCounting::hints.load();
    EXPECT_GT(hints, 0);
    EXPECT_LE(hints, 64 + 32 + 16 + 8 + 4 * (turns - 3))
        << "idle spins that found nothing did not get shorter (spin.hpp SpinBudget)";
}

}  // namespace
