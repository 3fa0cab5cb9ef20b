// SPDX-License-Identifier: MIT
// zap/helper_word.hpp - a worker's helper word: the futex word its helping
// waits sleep on, and what the wakers of helping_wait.hpp (K1: new work, K2: a
// group's last done()) change before they wake it. Its protocol and
// invariants (H5, H7, HW1) are helping_wait.hpp's; it has a header of its
// own because the worker and the wait group hold one without needing the
// pool's side of the helping wait.
#pragma once

#include <zap/backoff.hpp>
#include <zap/deadline.hpp>

#include <atomic>
#include <cstdint>
#include <limits>

namespace zap::detail {

// A worker's helper word, where its helping waits sleep (H5, H7; only the
// innermost wait of a worker can be asleep).
template <class Platform>
class Helpers {
public:
    // Who sleeps: a helping wait (K1 and K2 wake it), or an isolated one
    // (isolation.hpp I4: K2 and its timeout end the sleep, a notification
    // is not for it).
    enum class Sleeper : std::uint32_t { helping = 1, isolated = 2 };

    // H5: announces a sleeper; returns the value to pass to sleep().
    std::uint32_t enter(Sleeper sleeper) noexcept {
        const auto bit = static_cast<std::uint32_t>(sleeper);
        // Acquire: reads every wake's release fetch_add, so a wake that came
        // first is seen by the caller's re-reads (HW1).
        return word_.fetch_add(bit, std::memory_order_acquire) + bit;
    }

    // H5: sleeps while the word still holds `entered`, until the deadline at most.
    void sleep(std::uint32_t entered, Deadline<Platform>& deadline) noexcept { deadline.sleep(word_, entered); }

    // I4: the same, for the backoff's next timeout at most.
    void sleep(std::uint32_t entered, Backoff<Platform>& backoff, Deadline<Platform>& deadline) noexcept {
        backoff.pause(word_, entered, deadline);
    }

    // H5: withdraws the sleeper entered by enter().
    void leave(Sleeper sleeper) noexcept {
        // A counter only: wake() reads it in the same modification order.
        word_.fetch_sub(static_cast<std::uint32_t>(sleeper), std::memory_order_relaxed);
    }

    // K1's scan (wake_one): a helping wait sleeps here (relaxed: ordered by the fences of HW1).
    bool entered() const noexcept {
        return (word_.load(std::memory_order_relaxed) & static_cast<std::uint32_t>(Sleeper::helping)) != 0;
    }

    // H7 (K1, K2): changes the word, then wakes its sleeper if one entered.
    void wake() noexcept {
        // Release: synchronizes with enter()'s acquire, publishing the caller's
        // Sync CAS (notify) or count CAS (done) to the helper's re-reads (HW1).
        const std::uint32_t before = word_.fetch_add(one_epoch, std::memory_order_release);
        if ((before & sleepers) != 0) Platform::futex_wake(word_, std::numeric_limits<std::uint32_t>::max());
    }

private:
    static constexpr std::uint32_t sleepers = 3;   // the two Sleeper bits
    static constexpr std::uint32_t one_epoch = 4;  // bits 2..31: advanced by every wake

    typename Platform::template Atomic<std::uint32_t> word_{0};
};

}  // namespace zap::detail
