// SPDX-License-Identifier: MIT
// Platforms for the Parker, Mailbox and ObjectPool tests: the production
// platform with its futex calls counted, or with every futex_wait returning
// at once as a spurious wake-up would.
#pragma once

#include <zap/std_platform.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace zap_test {

// StdPlatform, counting the futex calls made through it.
struct CountingPlatform : zap::StdPlatform {
    static inline std::atomic<int> waits{0};
    static inline std::atomic<int> wakes{0};
    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                           const std::chrono::nanoseconds* timeout, Loc loc = Loc::current()) noexcept {
        waits++;
        return zap::StdPlatform::futex_wait(word, expected, timeout, loc);
    }
    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc loc = Loc::current()) noexcept {
        wakes++;
        zap::StdPlatform::futex_wake(word, count, loc);
    }
};

// A futex that never sleeps: every wait returns at once, reporting a wake-up
// (never a timeout), which futex_wait's contract allows.
struct SpuriousPlatform : zap::StdPlatform {
    static bool futex_wait(Atomic<std::uint32_t>&, std::uint32_t, const std::chrono::nanoseconds*,
                           Loc = Loc::current()) noexcept {
        spin_hint();
        return true;
    }
};

}  // namespace zap_test
