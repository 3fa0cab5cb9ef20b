// SPDX-License-Identifier: MIT
// zap/deadline.hpp - when a timed wait gives up: Parker::park_for,
// WaitGroup::wait_for and TaskGroup::wait_for.
//
// A Deadline is a point on std::chrono::steady_clock, or none (a wait
// without a timeout). The waits that take one look at it between their
// steps - a helping wait between two tasks (helping_wait.hpp H1) - and
// sleep in futex waits bounded by the time left, so a wake-up still ends
// the sleep at once and the timeout ends it otherwise.
//
// It has passed once the clock has reached it, or once a futex wait bounded
// by it has reported a timeout. The second condition is the one a model
// Platform uses: Relacy decides by itself when a timed futex_wait times out
// (its executions take no time on the clock the deadline reads), so the
// deadline takes the Platform's word for it. A model test then passes a
// timeout long enough that the clock never reaches it first, and every
// timeout it explores is one the Platform chose.
//
// Passed is for good: once a wait has seen its deadline pass, the rest of
// that wait sees it passed too, so one wait decides once.
#pragma once

#include <chrono>
#include <cstdint>

namespace zap::detail {

using DeadlineClock = std::chrono::steady_clock;

// now + timeout, saturating instead of overflowing for huge timeouts.
inline DeadlineClock::time_point deadline_after(std::chrono::nanoseconds timeout) noexcept {
    const DeadlineClock::time_point now = DeadlineClock::now();
    const auto room = std::chrono::duration_cast<std::chrono::nanoseconds>(DeadlineClock::time_point::max() - now);
    return timeout >= room ? DeadlineClock::time_point::max() : now + timeout;
}

template <class Platform>
class Deadline {
public:
    // No deadline: passed() is false for ever, and sleep() waits until woken.
    Deadline() noexcept = default;

    // `timeout` from now. Zero or less has passed already: the wait polls.
    static Deadline after(std::chrono::nanoseconds timeout) noexcept { return Deadline(timeout); }

    bool timed() const noexcept { return state_ != State::none; }

    // The clock has reached it, or a sleep bounded by it timed out (above).
    bool passed() noexcept {
        if (state_ == State::running && DeadlineClock::now() >= at_) state_ = State::passed;
        return state_ == State::passed;
    }

    // Sleeps while `word` holds `expected`: until woken (or spuriously), and
    // no longer than the time left nor than `cap` when one is given.
    // Returns false only when that sleep timed out (cap or deadline).
    bool sleep(typename Platform::template Atomic<std::uint32_t>& word, std::uint32_t expected,
               const std::chrono::nanoseconds* cap = nullptr) noexcept {
        if (state_ == State::none) return Platform::futex_wait(word, expected, cap);
        if (passed()) return false;
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(at_ - DeadlineClock::now());
        const bool capped = cap != nullptr && *cap < left;
        const std::chrono::nanoseconds limit = capped ? *cap : left;
        const bool woke = Platform::futex_wait(word, expected, &limit);
        if (!woke && !capped) state_ = State::passed;  // the Platform's word on the time (above)
        return woke;
    }

private:
    // One byte, not two flags: GenMC reports the compiler's merged store of
    // two adjacent bools followed by a read of one as a mixed-size access.
    enum class State : unsigned char { none, running, passed };

    explicit Deadline(std::chrono::nanoseconds timeout) noexcept
        : state_(timeout.count() <= 0 ? State::passed : State::running), at_(deadline_after(timeout)) {}

    State state_ = State::none;
    DeadlineClock::time_point at_{};
};

}  // namespace zap::detail
