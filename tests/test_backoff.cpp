// SPDX-License-Identifier: MIT
// Backoff (backoff.hpp), the wait for another thread's last instructions:
// it spins a hundred rounds (about 3 us), then sleeps on the word, each
// sleep bounded by a timeout that starts at 1 us and doubles up to 1 ms,
// and no sleep outlasts a deadline. A recording platform counts the spins
// and keeps each sleep's timeout; its futex_wait returns at once, as a
// timeout would.
#include <zap/backoff.hpp>
#include <zap/deadline.hpp>
#include <zap/std_platform.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using namespace std::chrono_literals;

struct Recording : zap::StdPlatform {
    static inline int spins = 0;
    static inline std::vector<std::chrono::nanoseconds> sleeps;  // each sleep's timeout; -1 ns: none
    static void spin_hint() noexcept { ++spins; }
    static bool futex_wait(Atomic<std::uint32_t>&, std::uint32_t, const std::chrono::nanoseconds* timeout) noexcept {
        sleeps.push_back(timeout != nullptr ? *timeout : -1ns);
        return false;
    }
    static void reset() {
        spins = 0;
        sleeps.clear();
    }
};

using Backoff = zap::detail::Backoff<Recording>;
using Deadline = zap::detail::Deadline<Recording>;

// 1, 2, 4 ... 512 us, then the 1 ms cap.
std::vector<std::chrono::nanoseconds> doubling(int sleeps) {
    std::vector<std::chrono::nanoseconds> timeouts;
    std::chrono::nanoseconds next = 1us;
    for (int i = 0; i < sleeps; ++i) {
        timeouts.push_back(next);
        next = next * 2 < 1ms ? next * 2 : std::chrono::nanoseconds{1ms};
    }
    return timeouts;
}

// `rounds` pauses of a fresh Backoff on a word that never changes.
void pause(int rounds, Deadline* deadline = nullptr) {
    Recording::reset();
    Recording::Atomic<std::uint32_t> word{7};
    Backoff backoff;
    for (int i = 0; i < rounds; ++i) {
        if (deadline != nullptr) {
            backoff.pause(word, 7, *deadline);
        } else {
            backoff.pause(word, 7);
        }
    }
}

TEST(Backoff, SpinsAHundredRoundsThenSleepsDoublingFrom1usTo1ms) {
    pause(100);
    EXPECT_EQ(Recording::spins, 100);
    EXPECT_TRUE(Recording::sleeps.empty()) << "slept before its spins were over";
    pause(113);
    EXPECT_EQ(Recording::spins, 100) << "spun after it had begun to sleep";
    EXPECT_EQ(Recording::sleeps, doubling(13));
}

TEST(Backoff, WithADistantDeadlineSleepsAsWithout) {
    Deadline distant = Deadline::after(1h);
    pause(113, &distant);
    EXPECT_EQ(Recording::spins, 100);
    EXPECT_EQ(Recording::sleeps, doubling(13));
}

TEST(Backoff, APassedDeadlineEndsTheSleeps) {
    Deadline passed = Deadline::after(0ns);
    pause(113, &passed);
    EXPECT_EQ(Recording::spins, 100);
    EXPECT_TRUE(Recording::sleeps.empty()) << "slept past its deadline";
}

}  // namespace
