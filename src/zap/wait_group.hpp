// zap/wait_group.hpp - wait until a counted set of jobs has finished.
//
// One 32-bit word: the count in bits 0..29, WAITERS (bit 30: someone sleeps
// or is about to sleep on the futex) and WAKING (bit 31: the done() that
// reached zero is still calling the futex).
//
// Protocol:
//   1. add(n) adds to the count (relaxed: it is ordered before the work it
//      counts by however the caller hands that work out).
//   2. done() subtracts one (CAS, acq_rel). The call that takes the count to
//      zero with WAITERS set swaps WAITERS for WAKING in the same CAS, wakes
//      the futex, then clears WAKING (release): its last touch of the word.
//   3. wait() returns once the count is zero and WAKING is clear, so a
//      waiter that destroys the group right after cannot pull the word from
//      under a done() still inside the futex call (W1).
//   4. On a thread running a task of a zap pool, wait() runs other tasks of
//      that pool while it waits, so nested waits cannot starve the pool; with
//      nothing to run it sleeps briefly and looks again.
//
// Invariant W1: no done() touches the word after it reads zero with WAKING
// clear; so is_done() (count zero, WAKING clear) means the group may go.
#pragma once

#include <zap/assert.hpp>
#include <zap/worker.hpp>

#include <chrono>
#include <cstdint>

namespace zap {

template <class Platform>
class BasicWaitGroup {
public:
    BasicWaitGroup() noexcept = default;
    BasicWaitGroup(const BasicWaitGroup&) = delete;
    BasicWaitGroup& operator=(const BasicWaitGroup&) = delete;

    // Step 1.
    void add(std::uint32_t n = 1) noexcept {
        [[maybe_unused]] const std::uint32_t before = state_.fetch_add(n, std::memory_order_relaxed);  // step 1
        ZAP_ASSERT((before & count_mask) + n <= count_mask, "WaitGroup::add overflows the 2^30 - 1 count");
    }

    // Step 2.
    void done() noexcept {
        std::uint32_t state = state_.load(std::memory_order_relaxed);  // a guess for the CAS
        std::uint32_t next;
        do {
            ZAP_ASSERT((state & count_mask) != 0, "WaitGroup::done called more times than add");
            next = state - 1;
            if ((next & count_mask) == 0 && (state & waiters) != 0) next = (next & ~waiters) | waking;
            // Release: the work before done() happens before wait() returns
            // (synchronizes with wait()'s and is_done()'s acquire loads). The
            // acquire half is stronger than needed (docs/orderings.md): every
            // later change of the word is a read-modify-write, so each done()
            // heads a release sequence the waiter's load reads from anyway.
        } while (!state_.compare_exchange_weak(state, next, std::memory_order_acq_rel, std::memory_order_relaxed));
        if ((next & waking) == 0) return;
        Platform::futex_wake(state_, ~0u);
        // Lets wait() return (W1); synchronizes with its acquire load.
        state_.fetch_and(~waking, std::memory_order_release);
    }

    // Step 3 and 4.
    void wait() noexcept {
        auto* context = detail::Context<Platform>::current();
        auto nap = std::chrono::nanoseconds{50'000};
        for (;;) {
            // Synchronizes with the release CAS of every done() (step 2).
            const std::uint32_t state = state_.load(std::memory_order_acquire);
            if ((state & count_mask) == 0) {
                if ((state & waking) == 0) return;
                Platform::spin_hint();  // W1: the last done() is inside the futex call
                continue;
            }
            if (context != nullptr && context->run_one(*context)) {
                nap = std::chrono::nanoseconds{50'000};
                continue;
            }
            if ((state & waiters) == 0) {
                std::uint32_t expected = state;
                // Announces a sleeper to done(); publishes nothing.
                state_.compare_exchange_weak(expected, state | waiters, std::memory_order_relaxed,
                                             std::memory_order_relaxed);
                continue;
            }
            Platform::futex_wait(state_, state, context != nullptr ? &nap : nullptr);
            if (nap < std::chrono::milliseconds{1}) nap *= 2;
        }
    }

    // True once every add() has been matched by a done(), and the group may be destroyed.
    bool is_done() const noexcept {
        return (state_.load(std::memory_order_acquire) & (count_mask | waking)) == 0;  // as in wait()
    }

private:
    static constexpr std::uint32_t count_mask = (1u << 30) - 1;
    static constexpr std::uint32_t waiters = 1u << 30;
    static constexpr std::uint32_t waking = 1u << 31;

    typename Platform::template Atomic<std::uint32_t> state_{0};
};

}  // namespace zap
