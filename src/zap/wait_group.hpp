// SPDX-License-Identifier: MIT
// zap/wait_group.hpp - wait until a counted set of jobs has finished.
//
// One 32-bit word: the count in bits 0..28, HELPERS (bit 29: a worker of a
// pool helps and may sleep on its pool's helper word, named by the helper
// slot), WAITERS (bit 30: a thread sleeps or is about to sleep on this
// word's futex) and WAKING (bit 31: the done() that reached zero is still
// waking them).
//
// Protocol:
//   1. add(n) adds to the count (relaxed: it is ordered before the work it
//      counts by however the caller hands that work out).
//   2. done() subtracts one (CAS, acq_rel). The call that takes the count to
//      zero with WAITERS or HELPERS set swaps them for WAKING in the same
//      CAS, wakes this word's futex (WAITERS) and the helper word the slot
//      names (HELPERS, helping_wait.hpp H7), then clears WAKING (release):
//      its last touch of the group.
//   3. wait() returns once the count is zero and WAKING is clear, so a
//      waiter that destroys the group right after cannot pull the word from
//      under a done() still waking (W1). Nobody wakes it for that last
//      bit: it polls, spinning briefly, then sleeping in short timed futex
//      waits (backoff.hpp), so a done() preempted while waking costs the
//      waiter no CPU.
//   4. On a thread running a task of a zap pool, wait() first helps: it runs
//      that pool's tasks and sleeps where new work and the count both wake
//      it (Protocol H, helping_wait.hpp). When the pool cannot help (not a
//      worker and nothing left to run, the depth bound, a group armed by
//      another pool), or off the pool, wait() first spins, once per call:
//      it watches the count for Platform::wait_spin_rounds rounds (spin.hpp;
//      relaxed loads, the acquire load of step 3 takes what they see), so a
//      last done() within that time finds no WAITERS and makes no system
//      call. Then it sets WAITERS and sleeps on this word until the count is
//      zero: no timeout, no polling.
//   5. wait_for(timeout) is wait() with a deadline (deadline.hpp): it
//      returns true where wait() returns, and false once the deadline has
//      passed while the count is not zero. The children keep running; the
//      group is left as it was before the call, ready for another wait and
//      for the last done(). Its steps:
//      T1. Waiting: on a thread running a task of a pool, the helping wait
//          of step 4, which looks at the deadline between two tasks and
//          sleeps on its helper word for the time left at most (helping_
//          wait.hpp H1, H5); off the pool, or where the pool cannot help,
//          the outside wait of step 4, sleeping on this word for the time
//          left at most. A deadline that has passed already (timeout 0)
//          makes a poll: nothing run, no sleep.
//      T2. An outside wait that reads a non-zero count once the deadline
//          has passed returns false. A WAITERS bit it set stays: other
//          threads may sleep under it, and a stale one costs the last
//          done() one futex wake of a word nobody sleeps on (W2).
//      T3. A helping wait that armed the group (H3: its worker's word in
//          the slot, HELPERS set unless the count was zero) disarms it
//          whatever ended its wait. It reads the word, and
//          a. count not zero: it takes HELPERS back with a CAS that expects
//             the count it read. On the same word as step 2's CAS, so one
//             of the two comes first: if this one, no done() of this round
//             reads the slot any more (only the one that swaps HELPERS
//             does), and it clears the slot (CAS &H -> null) and returns
//             false. If the CAS fails, it reads again;
//          b. count zero: the last done() has happened - it swapped HELPERS
//             for WAKING and is waking this waiter's word, or will not read
//             the slot at all (HELPERS was never set). As in step 3, it
//             waits until WAKING is clear, then clears the slot and returns
//             true, deadline or not.
//      T4. A nested wait of the same worker on a group its outer wait armed
//          (H3: the slot names its word already) leaves the group to that
//          outer wait: it returns as an outside wait does (T2, step 3).
//
// Invariants:
//   W1: no done() touches the group after it reads zero with WAKING clear;
//       so is_done() (count zero, WAKING clear) means the group may go, and
//       so may it after wait() or a wait_for() that returned true: both
//       return only after reading exactly that (step 3, T3b).
//   W2 (a timeout leaves the group as it was): wait_for() returns false
//       only after reading a non-zero count, and only with its arming
//       undone - HELPERS taken back by its own CAS (T3a, which a done()
//       that takes the count to zero cannot pass: the word it expects has
//       changed) and the slot empty - so the last done() touches no helper
//       word for it (HW3: the word's worker may be gone by then, pool and
//       all), and the next wait arms the group afresh. Only WAITERS may
//       stay set (T2).
//
// Reuse: add() after the count reached zero starts a new round; it must come
// after every wait() of the previous round has returned. After wait_for()
// returned false the round goes on: its children still call done() on the
// group, which must live until it is done (wait(), a wait_for() that returns
// true, or is_done()).
#pragma once

#include <zap/assert.hpp>
#include <zap/backoff.hpp>
#include <zap/deadline.hpp>
#include <zap/helper_word.hpp>
#include <zap/spin.hpp>
#include <zap/worker.hpp>

#include <chrono>
#include <cstdint>
#include <limits>

namespace zap {

template <class Platform>
class BasicWaitGroup {
public:
    using Helpers = detail::Helpers<Platform>;
    using Deadline = detail::Deadline<Platform>;

    BasicWaitGroup() noexcept = default;
    BasicWaitGroup(const BasicWaitGroup&) = delete;
    BasicWaitGroup& operator=(const BasicWaitGroup&) = delete;

    // Step 1.
    void add(std::uint32_t n = 1) noexcept {
        [[maybe_unused]] const std::uint32_t before = state_.fetch_add(n, std::memory_order_relaxed);  // step 1
        ZAP_ASSERT((before & count_mask) + n <= count_mask, "WaitGroup::add overflows the 2^29 - 1 count");
    }

    // Step 2.
    void done() noexcept {
        std::uint32_t state = state_.load(std::memory_order_relaxed);  // a guess for the CAS
        std::uint32_t next;
        do {
            ZAP_ASSERT((state & count_mask) != 0, "WaitGroup::done called more times than add");
            next = state - 1;
            if ((next & count_mask) == 0 && (state & (waiters | helpers)) != 0)
                next = (next & ~(waiters | helpers)) | waking;
            // Release: heads a release sequence that every later change of the
            // word continues (all of them are read-modify-writes), so wait()'s
            // and is_done()'s acquire loads see the work done before it.
            // Acquire: synchronizes with arm()'s release CAS that set HELPERS,
            // so the slot read below names that helper's word (HW3).
        } while (!state_.compare_exchange_weak(state, next, std::memory_order_acq_rel, std::memory_order_relaxed));
        if ((next & waking) == 0) return;
        if ((state & waiters) != 0) Platform::futex_wake(state_, std::numeric_limits<std::uint32_t>::max());
        if ((state & helpers) != 0) {
            Helpers* const word = slot_.load(std::memory_order_relaxed);  // ordered by the acquire CAS above
            ZAP_ASSERT(word != nullptr, "internal: HELPERS set with an empty helper slot (HW3)");
            word->wake();
        }
        // Lets wait() return (W1); synchronizes with its acquire load.
        state_.fetch_and(~waking, std::memory_order_release);
    }

    // Steps 3 and 4.
    void wait() noexcept {
        Deadline none;
        wait_until(none);
    }

    // Step 5: true once the count is zero (as wait()), false on timeout.
    [[nodiscard("false: the count is not zero yet")]] bool wait_for(std::chrono::nanoseconds timeout) noexcept {
        Deadline deadline = Deadline::after(timeout);
        return wait_until(deadline);
    }

    // True once every add() has been matched by a done(), and the group may be destroyed.
    bool is_done() const noexcept {
        return (state_.load(std::memory_order_acquire) & (count_mask | waking)) == 0;  // as in wait()
    }

    // ---- for the pool's helping wait (helping_wait.hpp) ----

    // H1: the count is zero (WAKING may still be set).
    bool zero() const noexcept {
        // Relaxed: orders nothing. wait() ends in sleep_until_done()'s acquire
        // load, which orders the counted work; before a helper sleeps, the
        // helper word's acquire orders this read after a done() that woke it (HW1).
        return (state_.load(std::memory_order_relaxed) & count_mask) == 0;
    }

    enum class Arm { armed, nested, foreign };

    // H3: the last done() will wake `word`. `armed`: this call named the word
    // in the slot (and set HELPERS unless the count was zero), so the caller
    // disarms (T3). `nested`: an outer wait of the same worker did (T4).
    // `foreign`: the slot names another worker's word; the caller then waits
    // as an outside thread.
    Arm arm(Helpers& word) noexcept {
        Helpers* named = nullptr;
        // Only the helper's own word goes in; ordered for done() by the release CAS below.
        if (!slot_.compare_exchange_strong(named, &word, std::memory_order_relaxed, std::memory_order_relaxed))
            return named == &word ? Arm::nested : Arm::foreign;
        std::uint32_t state = state_.load(std::memory_order_relaxed);  // a guess for the CAS
        for (;;) {
            if ((state & count_mask) == 0) return Arm::armed;  // H1 sees the zero; T3b disarms
            if ((state & helpers) != 0) return Arm::armed;  // the CAS that set it ordered the slot (HW3)
            // Release: synchronizes with the last done()'s acquire CAS, which
            // then reads &word from the slot (HW3).
            if (state_.compare_exchange_weak(state, state | helpers, std::memory_order_release,
                                             std::memory_order_relaxed))
                return Arm::armed;
        }
    }

private:
    // Steps 3-5: helps on a thread of a pool (T1), then disarms (T3) or
    // waits as an outside thread (T2).
    bool wait_until(Deadline& deadline) noexcept {
        auto* context = detail::Context<Platform>::current();
        Helpers* const armed = context != nullptr ? context->help(*context, *this, deadline) : nullptr;
        return armed != nullptr ? disarm(*armed, deadline) : sleep_until_done(deadline);
    }

    // Step 3, and step 4's outside wait: sleeps on the word until the count is
    // zero, then waits for WAKING to clear (W1) and returns true; false once
    // the deadline has passed with the count not zero (T2).
    bool sleep_until_done(Deadline& deadline) noexcept {
        detail::Backoff<Platform> backoff;
        bool spun = false;  // step 4's spin, once per call
        for (;;) {
            // Synchronizes with the release CAS of every done() (step 2).
            const std::uint32_t state = state_.load(std::memory_order_acquire);
            if ((state & count_mask) == 0) {
                if ((state & waking) == 0) return true;
                backoff.pause(state_, state);  // W1: the last done() is still waking (it may be preempted)
                continue;
            }
            if (deadline.passed()) return false;  // T2 (W2)
            if (!spun) {
                spun = true;
                detail::spin_until<Platform>(Platform::wait_spin_rounds, [&] {
                    // A look only: the acquire load above takes what it sees (step 3).
                    return (state_.load(std::memory_order_relaxed) & count_mask) == 0 || deadline.passed();
                });
                continue;
            }
            if ((state & waiters) == 0) {
                std::uint32_t expected = state;
                // Announces a sleeper to done(); publishes nothing.
                state_.compare_exchange_weak(expected, state | waiters, std::memory_order_relaxed,
                                             std::memory_order_relaxed);
                continue;
            }
            deadline.sleep(state_, state);
        }
    }

    // H8 and T3: the helper whose arm() named `word` takes it back, once the
    // count is zero (true) or the deadline has passed (false).
    bool disarm(Helpers& word, Deadline& deadline) noexcept {
        std::uint32_t state = state_.load(std::memory_order_relaxed);  // a guess for the CAS
        bool completed = false;
        for (;;) {
            if ((state & count_mask) == 0) {
                completed = sleep_until_done(deadline);  // T3b: true, once WAKING is clear (W1)
                break;
            }
            ZAP_ASSERT((state & helpers) != 0, "internal: a wait that armed the group finds HELPERS clear (T3)");
            // T3a: against the CAS of step 2 on this word: if this one comes
            // first, no done() reads the slot; publishes nothing (W2).
            if (state_.compare_exchange_weak(state, state & ~helpers, std::memory_order_relaxed,
                                             std::memory_order_relaxed))
                break;
        }
        Helpers* named = &word;
        // Orders nothing: no done() of this round reads the slot any more (W1, W2, HW3).
        slot_.compare_exchange_strong(named, nullptr, std::memory_order_relaxed, std::memory_order_relaxed);
        return completed;
    }

    static constexpr std::uint32_t count_mask = (1u << 29) - 1;
    static constexpr std::uint32_t helpers = 1u << 29;
    static constexpr std::uint32_t waiters = 1u << 30;
    static constexpr std::uint32_t waking = 1u << 31;

    typename Platform::template Atomic<std::uint32_t> state_{0};
    typename Platform::template Atomic<Helpers*> slot_{nullptr};
};

}  // namespace zap
