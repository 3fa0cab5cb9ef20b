// SPDX-License-Identifier: MIT
// zap/spin.hpp - spin, then sleep; and a thief's bounded wait.
//
// A thread about to sleep on a futex word first watches for what it waits
// for, a bounded number of rounds of the CPU's spin hint (x86 `pause`: about
// 18 ns each on this project's 2-vCPU AMD EPYC). What arrives within
// that time is taken without a futex wake on either side: the waker finds no
// sleeper announced, so it makes no system call, and the waiter never enters
// the kernel. A round trip between two threads (bench/run's pingpong) then
// costs cache-line transfers, not two futex wakes.
//
// Three waits spin, each once per wait, before it announces itself:
//   - a worker out of work (pool_core.hpp A8), holding the waking role,
//     so that at most one worker of a pool spins, for at most
//     Config::spin_rounds rounds: as many as its past spins earned
//     (SpinBudget, below);
//   - WaitGroup's outside wait (wait_group.hpp step 4) and Parker::park
//     (parker.hpp step 1), for Platform::wait_spin_rounds rounds: each
//     waiting thread spins once, then sleeps as before.
// The spins read and write nothing the protocols order (relaxed loads of the
// word the wait would sleep on): what the spin sees, the wait's own
// acquiring step takes afterwards, so every wait keeps its proofs.
//
// One more bounded watch uses it: a thief that finds a ring holding one task
// leaves it to its owner for Platform::steal_delay_rounds rounds, watching
// the ring's head (buffer.hpp step 3a), then claims it as before if it is
// still there.
#pragma once

#include <cstdint>

namespace zap::detail {

// Spins until ready() or for `rounds` rounds; true when ready() was.
template <class Platform, class Ready>
bool spin_until(std::uint32_t rounds, Ready ready) noexcept {
    for (std::uint32_t round = 0; round < rounds; ++round) {
        if (ready()) return true;
        Platform::spin_hint();
    }
    return false;
}

// A worker's A8 rounds, learned from its own past spins, as an adaptive
// mutex learns from the spins before: a spin that saw work doubles the
// next one's rounds, up to the bound (Config::spin_rounds); a spin that
// ran out halves them, down to a sixteenth of the bound. Spinning pays
// while what the worker waits for arrives within the spin (a round trip
// between two threads, a producer feeding the pool): it keeps the whole
// bound then. It does not when nothing comes - a pool whose work has
// ended, which now spins 36 us, then 18, 9, 4.5 and 2.3 us at each idle
// turn, not 36 each time - or when the thread that would send the work
// cannot run because the spinner holds the CPU it needs (a machine with
// no CPU to spare): then most spins run out, and the pool spins less.
// Only the rounds change, never who spins nor how it leaves the role, so
// A8's S1-S2 and the proofs that rest on them hold for any number of
// rounds (tla/Pool.tla's spin step stands for any number, zero included).
class SpinBudget {
public:
    template <class Platform, class Ready>
    bool spin(std::uint32_t bound, Ready ready) noexcept {
        const std::uint32_t least = bound / 16 > 0 ? bound / 16 : 1;
        if (rounds_ == 0 || rounds_ > bound) rounds_ = bound;  // the first spin gets the whole bound
        const bool found = spin_until<Platform>(rounds_, ready);
        if (found) {
            rounds_ = rounds_ > bound / 2 ? bound : rounds_ * 2;
        } else {
            rounds_ = rounds_ / 2 > least ? rounds_ / 2 : least;
        }
        return found;
    }

    std::uint32_t rounds() const noexcept { return rounds_; }

private:
    std::uint32_t rounds_ = 0;  // 0: no spin yet
};

}  // namespace zap::detail
