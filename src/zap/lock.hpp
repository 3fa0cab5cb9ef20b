// SPDX-License-Identifier: MIT
// zap/lock.hpp - a mutual-exclusion lock on one futex word, built on the
// Platform so that the Relacy model checks it with the code that uses it.
//
// The word is UNLOCKED, LOCKED (held, nobody asleep) or CONTENDED (held, and
// somebody may be asleep on the futex).
//
// Protocol:
//   1. lock() tries UNLOCKED -> LOCKED with one CAS (acquire): the
//      uncontended case costs one atomic operation.
//   2. Otherwise it swaps CONTENDED in (acquire) until the swap returns
//      UNLOCKED, sleeping on the futex while the word holds CONTENDED. A
//      thread that took the lock through this swap leaves CONTENDED behind
//      even if it was the last sleeper: one unnecessary wake later, never a
//      missed one (L2).
//   3. unlock() swaps UNLOCKED in (release) and wakes one sleeper only when
//      it swapped CONTENDED out.
//
// Invariants:
//   L1: at most one thread returns from lock() until the holder calls
//       unlock(); the release swap of unlock() and the acquire of the next
//       lock() order everything done under the lock.
//   L2: while a thread sleeps (or is about to sleep) on the futex, the word
//       is CONTENDED or it is UNLOCKED after an unlock() that saw CONTENDED
//       and therefore wakes somebody; so no sleeper is left behind.
//
// Spurious futex returns are harmless: step 2 swaps again and sleeps again.
// Ulrich Drepper's "Futexes Are Tricky" explains why each step is needed.
#pragma once

#include <zap/assert.hpp>

#include <cstdint>

namespace zap::detail {

template <class Platform>
class Lock {
public:
    Lock() noexcept = default;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

    void lock() noexcept {
        std::uint32_t expected = unlocked;
        // Step 1; acquire synchronizes with the release swap of the previous unlock() (L1).
        if (state_.compare_exchange_strong(expected, locked, std::memory_order_acquire, std::memory_order_relaxed))
            return;
        // Step 2; acquire as in step 1 when the swap returns UNLOCKED (L1).
        while (state_.exchange(contended, std::memory_order_acquire) != unlocked)
            Platform::futex_wait(state_, contended, nullptr);
    }

    void unlock() noexcept {
        // Step 3; release: publishes the critical section to the next lock() (L1).
        const std::uint32_t previous = state_.exchange(unlocked, std::memory_order_release);
        ZAP_ASSERT(previous != unlocked, "Lock::unlock of a lock nobody holds");
        if (previous == contended) Platform::futex_wake(state_, 1);  // L2
    }

private:
    static constexpr std::uint32_t unlocked = 0;
    static constexpr std::uint32_t locked = 1;
    static constexpr std::uint32_t contended = 2;

    typename Platform::template Atomic<std::uint32_t> state_{unlocked};
};

// Holds a Lock for the lifetime of a scope.
template <class Platform>
class LockGuard {
public:
    explicit LockGuard(Lock<Platform>& lock) noexcept : lock_(lock) { lock_.lock(); }
    ~LockGuard() { lock_.unlock(); }
    LockGuard(const LockGuard&) = delete;
    LockGuard& operator=(const LockGuard&) = delete;

private:
    Lock<Platform>& lock_;
};

}  // namespace zap::detail
