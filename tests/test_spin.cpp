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

}  // namespace
