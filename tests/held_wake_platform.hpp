// SPDX-License-Identifier: MIT
// tests/held_wake_platform.hpp - a platform that holds a done() between its
// wake-up and its last write, for the tests of W1 (wait_group.hpp).
#pragma once

#include <zap/std_platform.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

// The production platform, except that a futex wake by the thread marked
// `held` stops after waking, before returning, until the test lets it go: a
// done() preempted between its wake and its last write (clearing WAKING).
// Counts the spin hints and the timed futex waits the other threads make.
struct HeldWakePlatform : zap::StdPlatform {
    static inline std::atomic<std::thread::id> held{};
    static inline std::atomic<bool> release{false};
    static inline std::atomic<bool> holding{false};
    static inline std::atomic<long> spins{0};
    static inline std::atomic<long> timed_waits{0};
    static void spin_hint() noexcept {
        spins.fetch_add(1);  // a counter only
        zap::StdPlatform::spin_hint();
    }
    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc loc = Loc::current()) noexcept {
        if (timeout != nullptr) timed_waits.fetch_add(1);  // a counter only
        return zap::StdPlatform::futex_wait(word, expected, timeout, loc);
    }
    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc loc = Loc::current()) noexcept {
        zap::StdPlatform::futex_wake(word, count, loc);
        if (held.load() != std::this_thread::get_id()) return;
        holding = true;
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
};
