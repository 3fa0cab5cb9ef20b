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
//      another pool), or off the pool, wait() sets WAITERS and sleeps on
//      this word until the count is zero: no timeout, no polling.
//
// Invariant W1: no done() touches the group after it reads zero with WAKING
// clear; so is_done() (count zero, WAKING clear) means the group may go.
//
// Reuse: add() after the count reached zero starts a new round; it must come
// after every wait() of the previous round has returned.
#pragma once

#include <zap/assert.hpp>
#include <zap/backoff.hpp>
#include <zap/helper_word.hpp>
#include <zap/worker.hpp>

#include <cstdint>
#include <limits>

namespace zap {

template <class Platform>
class BasicWaitGroup {
public:
    using Helpers = detail::Helpers<Platform>;

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
        auto* context = detail::Context<Platform>::current();
        Helpers* const armed = context != nullptr ? context->help(*context, *this) : nullptr;
        sleep_until_done();
        if (armed != nullptr) disarm(*armed);
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

    enum class Arm { armed, zero, foreign };

    // H3: the last done() will wake `word`. `foreign`: the slot names another
    // pool's word; the caller then waits as an outside thread.
    Arm arm(Helpers& word) noexcept {
        Helpers* named = nullptr;
        // Only the helper's own word goes in; ordered for done() by the release CAS below.
        if (!slot_.compare_exchange_strong(named, &word, std::memory_order_relaxed, std::memory_order_relaxed) &&
            named != &word)
            return Arm::foreign;
        std::uint32_t state = state_.load(std::memory_order_relaxed);  // a guess for the CAS
        for (;;) {
            if ((state & count_mask) == 0) return Arm::zero;
            if ((state & helpers) != 0) return Arm::armed;  // the CAS that set it ordered the slot (HW3)
            // Release: synchronizes with the last done()'s acquire CAS, which
            // then reads &word from the slot (HW3).
            if (state_.compare_exchange_weak(state, state | helpers, std::memory_order_release,
                                             std::memory_order_relaxed))
                return Arm::armed;
        }
    }

private:
    // Step 3, and step 4's outside wait: sleeps on the word until the count is
    // zero, then waits for WAKING to clear (W1).
    void sleep_until_done() noexcept {
        detail::Backoff<Platform> backoff;
        for (;;) {
            // Synchronizes with the release CAS of every done() (step 2).
            const std::uint32_t state = state_.load(std::memory_order_acquire);
            if ((state & count_mask) == 0) {
                if ((state & waking) == 0) return;
                backoff.pause(state_, state);  // W1: the last done() is still waking (it may be preempted)
                continue;
            }
            if ((state & waiters) == 0) {
                std::uint32_t expected = state;
                // Announces a sleeper to done(); publishes nothing.
                state_.compare_exchange_weak(expected, state | waiters, std::memory_order_relaxed,
                                             std::memory_order_relaxed);
                continue;
            }
            Platform::futex_wait(state_, state, nullptr);
        }
    }

    // H8: called by a helper that called arm(), once the count is zero and WAKING clear.
    void disarm(Helpers& word) noexcept {
        Helpers* named = &word;
        // Orders nothing: no done() of this round reads the slot any more (W1, HW3).
        slot_.compare_exchange_strong(named, nullptr, std::memory_order_relaxed, std::memory_order_relaxed);
    }

    static constexpr std::uint32_t count_mask = (1u << 29) - 1;
    static constexpr std::uint32_t helpers = 1u << 29;
    static constexpr std::uint32_t waiters = 1u << 30;
    static constexpr std::uint32_t waking = 1u << 31;

    typename Platform::template Atomic<std::uint32_t> state_{0};
    typename Platform::template Atomic<Helpers*> slot_{nullptr};
};

}  // namespace zap
