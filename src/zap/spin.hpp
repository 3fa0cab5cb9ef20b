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
//   - a worker out of work (thread_pool.hpp A8), for Config::spin_rounds
//     rounds, holding the waking role: at most one worker of a pool spins;
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

}  // namespace zap::detail
