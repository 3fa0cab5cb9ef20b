// SPDX-License-Identifier: MIT
// zap/parker.hpp - put one thread to sleep until another wakes it, with no
// system call for the waker unless the owner really sleeps (seed 003).
//
// A Parker has one owner thread, the only one that calls park()/park_for();
// any thread may call unpark(). It holds at most one token: an unpark()
// before park() is remembered, several unparks before one park() collapse
// into one token.
//
// One 32-bit futex word with three states:
//   EMPTY    (0)    no token, owner not parked
//   NOTIFIED (1)    a token is waiting for the owner
//   PARKED   (2^32 - 1, i.e. EMPTY - 1)  the owner sleeps or is about to
//
// Protocol:
//   0. park() and park_for() first spin (spin.hpp): they watch the word for
//      NOTIFIED, Platform::wait_spin_rounds rounds at most (park_for() no
//      longer than its deadline), so an unpark() within that time finds the
//      word EMPTY and makes no system call. The looks are relaxed and write
//      nothing: step 1 takes the token either way.
//   1. park() subtracts one from the word (acquire): NOTIFIED becomes EMPTY
//      and park() returns at once, having taken the token; EMPTY becomes
//      PARKED. One read-modify-write both takes a pending token and
//      announces the sleeper, so an unpark() cannot slip between the two.
//   2. While the word is PARKED the owner sleeps on the futex. After every
//      return from the futex (a wake, or a spurious return) it tries
//      NOTIFIED -> EMPTY (CAS, acquire); on failure the word is still PARKED
//      and it sleeps again (PK2).
//   3. park_for() does the same, with a deadline. When the futex reports a
//      timeout, or the deadline has passed, the owner swaps EMPTY in
//      (acquire) and returns whether it swapped NOTIFIED out: an unpark()
//      that arrived after the timeout still counts, and no token is left
//      behind for the next park (PK3).
//   4. unpark() swaps NOTIFIED in (release) and calls futex_wake only when
//      it swapped PARKED out (PK1).
//
// Invariants:
//   PK1: only the owner writes EMPTY or PARKED; unpark() only writes NOTIFIED.
//       So the word is PARKED exactly while the owner is between step 1 and
//       its return, and an unpark() that does not see PARKED makes no
//       system call.
//   PK2: park() returns only by taking NOTIFIED (acquire, step 1 or 2), so it
//       never returns without an unpark(), spurious futex returns included;
//       and everything the waker wrote before unpark() is visible after
//       park() returns, because the taking read-modify-write reads the
//       NOTIFIED of the last unpark() (all writes to the word are
//       read-modify-writes, so the latest one is the one taken).
//   PK3: every return from park()/park_for() leaves the word EMPTY.
//
// Lifetime: unpark() may touch the word until it returns, also after the
// owner has woken; the Parker must outlive every unpark() call (a Parker
// that lives as long as its thread, or one the waker reaches under a lock
// that the owner takes before destroying it, as BasicMailbox does).
//
// Deadlines are measured on std::chrono::steady_clock, and a timed
// futex_wait that reports a timeout ends one too (deadline.hpp: that is how
// a model Platform's timeouts reach park_for).
#pragma once

#include <zap/assert.hpp>
#include <zap/deadline.hpp>
#include <zap/spin.hpp>

#include <chrono>
#include <cstdint>

namespace zap {

template <class Platform>
class BasicParker {
public:
    BasicParker() noexcept = default;
    BasicParker(const BasicParker&) = delete;
    BasicParker& operator=(const BasicParker&) = delete;

    // Steps 0 to 2: returns once a token is taken.
    void park() noexcept {
        detail::Deadline<Platform> none;
        if (announce(none)) return;
        for (;;) {
            Platform::futex_wait(state_, parked, nullptr);
            if (take()) return;  // else a spurious return: the word is still PARKED (PK1)
        }
    }

    // Steps 0 to 3: true when a token was taken, false on timeout.
    [[nodiscard("false: the timeout expired without a token")]] bool park_for(std::chrono::nanoseconds timeout) noexcept {
        detail::Deadline<Platform> deadline = detail::Deadline<Platform>::after(timeout);
        if (announce(deadline)) return true;
        for (;;) {
            deadline.sleep(state_, parked);
            if (deadline.passed()) {
                // Step 3; acquire synchronizes with the release swap of a late unpark() (PK2, PK3).
                return state_.exchange(empty, std::memory_order_acquire) == notified;
            }
            if (take()) return true;
        }
    }

    // Step 4.
    void unpark() noexcept {
        // Release: publishes the waker's writes to the owner's acquire in step 1, 2 or 3 (PK2).
        if (state_.exchange(notified, std::memory_order_release) == parked) Platform::futex_wake(state_, 1);
    }

private:
    static constexpr std::uint32_t empty = 0;
    static constexpr std::uint32_t notified = 1;
    static constexpr std::uint32_t parked = empty - 1;

    // Steps 0 and 1: true when a pending token was taken; otherwise the word is now PARKED.
    bool announce(detail::Deadline<Platform>& deadline) noexcept {
        detail::spin_until<Platform>(Platform::wait_spin_rounds, [&] {
            // A look only: the acquire fetch_sub below takes the token (PK2).
            return state_.load(std::memory_order_relaxed) == notified || deadline.passed();
        });
        // Acquire synchronizes with the release swap of the unpark() whose token it takes (PK2).
        const std::uint32_t previous = state_.fetch_sub(1, std::memory_order_acquire);
        ZAP_ASSERT(previous != parked, "Parker: park() called by two threads at once (a Parker has one owner)");
        return previous == notified;
    }

    // Step 2: NOTIFIED -> EMPTY.
    bool take() noexcept {
        std::uint32_t expected = notified;
        // Acquire synchronizes with the release swap of the unpark() that woke us (PK2).
        return state_.compare_exchange_strong(expected, empty, std::memory_order_acquire, std::memory_order_relaxed);
    }

    typename Platform::template Atomic<std::uint32_t> state_{empty};
};

}  // namespace zap
