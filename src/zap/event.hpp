// SPDX-License-Identifier: MIT
// zap/event.hpp - a futex-backed event holding at most one notification, that
// can also be shut down for good.
//
// The pool has two: the idle event, on which sleeping workers block, and the
// join event, on which join() waits for the last worker to leave.
//
// Protocol (wait against post):
//   1. A waiter that finds NOTIFIED takes it (CAS, acquire) and returns; a
//      waiter that finds SHUTDOWN returns at once (acquire), leaving it there.
//   2. Otherwise it marks the word WAITING (CAS) and sleeps on the futex for
//      as long as the word is still WAITING.
//   3. notify() CASes NOTIFIED in (release) and calls the futex to wake one
//      sleeper only when the word was WAITING, so a notify with no sleeper
//      costs one CAS. shutdown() CASes SHUTDOWN in (release) and always wakes
//      every sleeper (E3).
//   4. A waiter that slept takes a notification by writing WAITING back, not
//      EMPTY: other sleepers may still be on the futex, and WAITING makes the
//      next notify() call the futex for them.
//
// Invariants:
//   E1: a thread goes to sleep only on a WAITING word. The word may still
//       read EMPTY or NOTIFIED while others sleep: between a notify() that
//       woke one sleeper and that sleeper writing WAITING back, a fresh
//       waiter can take the notification with EMPTY.
//   E2: once SHUTDOWN, always SHUTDOWN. (The seed swapped the new value in
//       unconditionally, so a notify() delayed past shutdown() could replace
//       SHUTDOWN: docs/seed-defects.md.)
//   E3: because of E1, only a futex wake of everyone is sure to reach every
//       sleeper; shutdown() does one whatever the word held. (The seed woke
//       only from WAITING: with two sleepers, notify() then shutdown() before
//       the woken one ran left the other asleep for ever, and join() hung:
//       docs/seed-defects.md.)
//
// Several notify() calls before any waiter runs collapse into one
// notification. The pool tolerates this: its Sync word, not the event, counts
// what must be woken.
#pragma once

#include <cstdint>
#include <limits>

namespace zap::detail {

template <class Platform>
class Event {
public:
    static constexpr std::uint32_t empty = 0;
    static constexpr std::uint32_t waiting = 1;
    static constexpr std::uint32_t notified = 2;
    static constexpr std::uint32_t shut_down = 3;

    // Blocks until it consumes a notification or the event is shut down.
    void wait() noexcept {
        std::uint32_t take_with = empty;
        std::uint32_t state = state_.load(std::memory_order_relaxed);  // a hint; the CASes below decide
        for (;;) {
            if (state == shut_down) {
                // SHUTDOWN is never overwritten (E2), so this re-read sees it again and
                // synchronizes with the release CAS in post() (step 1).
                state_.load(std::memory_order_acquire);
                return;
            }
            if (state == notified) {
                // Synchronizes with the release CAS in post() that put it there (step 1).
                if (state_.compare_exchange_weak(state, take_with, std::memory_order_acquire,
                                                 std::memory_order_relaxed))
                    return;
                continue;
            }
            if (state != waiting) {
                // Announces a sleeper to notify() (step 2); orders nothing else.
                if (!state_.compare_exchange_weak(state, waiting, std::memory_order_relaxed,
                                                  std::memory_order_relaxed))
                    continue;
            }
            Platform::futex_wait(state_, waiting, nullptr);
            state = state_.load(std::memory_order_relaxed);  // a hint again; loop re-checks
            take_with = waiting;  // step 4, E1
        }
    }

    // Posts a notification (unless one is pending) and wakes one sleeper (step 3).
    void notify() noexcept {
        if (post(notified) == waiting) Platform::futex_wake(state_, 1);
    }

    // Makes every current and future wait() return; wakes all sleepers (E3).
    void shutdown() noexcept {
        if (post(shut_down) != shut_down) Platform::futex_wake(state_, std::numeric_limits<std::uint32_t>::max());
    }

private:
    // Writes `value` unless the event is shut down (E2); returns what it replaced.
    std::uint32_t post(std::uint32_t value) noexcept {
        std::uint32_t previous = state_.load(std::memory_order_relaxed);  // a guess for the CAS
        do {
            if (previous == shut_down) return shut_down;
            // Publishes the poster's prior writes to the waiter's acquire in wait() (step 1).
        } while (!state_.compare_exchange_weak(previous, value, std::memory_order_release,
                                               std::memory_order_relaxed));
        return previous;
    }

    typename Platform::template Atomic<std::uint32_t> state_{empty};
};

}  // namespace zap::detail
