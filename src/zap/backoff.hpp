// SPDX-License-Identifier: MIT
// zap/backoff.hpp - waiting out another thread's last few instructions.
//
// Three waits in zap are for a thread that has done its part and has only
// its last instructions left: wait() for the done() that is still waking (W1
// of wait_group.hpp), join() for a closer (P5 of pool_core.hpp), and the
// pool's destructor for a shutdown() or join() still returning (B7). Nobody
// wakes such a waiter: the thread it waits for must not touch the word
// after its last write, which is the very thing being waited for. So the
// waiter polls, and the wait is normally a few hundred nanoseconds: the rest
// of one futex call.
//
// Pure spinning is not enough. The thread waited for may be preempted -
// typically by the very thread it just woke, onto its own CPU - and a
// spinner then burns its whole time slice before that thread runs again
// (measured: 3 to 4 ms of CPU in one wait on this 2-vCPU machine, 100,000
// and more `pause` rounds, docs/helping_wait.md); under a real-time policy a
// spinner of higher priority would never let it run at all. So Backoff spins
// briefly, then sleeps on the word with a short timeout that doubles up to
// a cap: every sleep hands the CPU to whoever needs it, a change of the word
// ends the sleep at once (futex: the kernel compares it first), and the
// timeout ends it otherwise.
//
// A timed wait (deadline.hpp) passes its deadline, and no sleep then lasts
// past it: the isolated helping wait's sleep (isolation.hpp I4) under
// WaitGroup::wait_for.
#pragma once

#include <zap/deadline.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace zap::detail {

template <class Platform>
class Backoff {
public:
    // One round of the wait: call it each time `word` still reads `seen` and
    // the waited-for thread has not finished. `word` must stay alive for the
    // call (the caller waits precisely because its owner cannot go yet).
    void pause(typename Platform::template Atomic<std::uint32_t>& word, std::uint32_t seen) noexcept {
        Deadline<Platform> none;
        pause(word, seen, none);
    }

    // The same, sleeping no longer than `deadline` allows.
    void pause(typename Platform::template Atomic<std::uint32_t>& word, std::uint32_t seen,
               Deadline<Platform>& deadline) noexcept {
        if (spins_ < spin_limit) {
            ++spins_;
            Platform::spin_hint();
            return;
        }
        deadline.sleep(word, seen, &sleep_);  // returns at the timeout, or at once if the word changed
        sleep_ = sleep_ < max_sleep / 2 ? sleep_ * 2 : max_sleep;  // not std::min: GenMC cannot run llvm.smin
    }

private:
    // About 3 us of `pause` on this machine (31 ns each): longer than the
    // usual wait, far shorter than a time slice.
    static constexpr std::uint32_t spin_limit = 100;
    static constexpr std::chrono::nanoseconds max_sleep{std::chrono::milliseconds{1}};

    std::uint32_t spins_ = 0;
    std::chrono::nanoseconds sleep_{std::chrono::microseconds{1}};
};

}  // namespace zap::detail
