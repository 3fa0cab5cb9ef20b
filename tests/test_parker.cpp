// SPDX-License-Identifier: MIT
// Parker: one token, remembered before park, taken in the spin before
// sleeping, no syscall for a waker of a thread that is not parked, park_for
// times out, spurious returns tolerated.
#include "test_platforms.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;
using zap_test::CountingPlatform;
using zap_test::SpuriousPlatform;

TEST(Parker, UnparkBeforeParkIsRemembered) {
    zap::Parker parker;
    parker.unpark();
    parker.park();  // returns at once: the token was kept
    SUCCEED();
}

TEST(Parker, UnparksCollapseIntoOneToken) {
    zap::Parker parker;
    parker.unpark();
    parker.unpark();
    EXPECT_TRUE(parker.park_for(1s));
    EXPECT_FALSE(parker.park_for(1ms));  // the second unpark left no second token
}

TEST(Parker, ParkForTimesOutWithoutUnpark) {
    zap::Parker parker;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(parker.park_for(5ms));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 5ms);  // it did wait, not return early
}

TEST(Parker, ParkForWithNoTimeLeftTakesOnlyAPendingToken) {
    zap::Parker parker;
    EXPECT_FALSE(parker.park_for(0ns));
    EXPECT_FALSE(parker.park_for(-1s));
    parker.unpark();
    EXPECT_TRUE(parker.park_for(0ns));
}

TEST(Parker, UnparkAfterTimeoutIsKeptForTheNextPark) {
    zap::Parker parker;
    EXPECT_FALSE(parker.park_for(1ms));
    parker.unpark();
    EXPECT_TRUE(parker.park_for(0ns));
}

TEST(Parker, HugeTimeoutDoesNotOverflow) {
    zap::Parker parker;
    std::thread waker([&] {
        std::this_thread::sleep_for(2ms);
        parker.unpark();
    });
    EXPECT_TRUE(parker.park_for(std::chrono::nanoseconds::max()));
    waker.join();
}

TEST(Parker, UnparkWakesAParkedOwnerAndPublishesWrites) {
    zap::Parker parker;
    int data = 0;  // plain: park()'s acquire must order it (PK2)
    std::thread waker([&] {
        std::this_thread::sleep_for(5ms);
        data = 42;
        parker.unpark();
    });
    parker.park();
    EXPECT_EQ(data, 42);
    waker.join();
}

TEST(Parker, UnparkOfAnOwnerNotParkedMakesNoSyscall) {
    zap::BasicParker<CountingPlatform> parker;
    CountingPlatform::wakes = 0;
    CountingPlatform::waits = 0;
    parker.unpark();
    parker.unpark();
    parker.park();
    parker.unpark();
    EXPECT_TRUE(parker.park_for(1s));  // takes the token without sleeping
    EXPECT_EQ(CountingPlatform::wakes.load(), 0);
    EXPECT_EQ(CountingPlatform::waits.load(), 0);
}

namespace {

// Lets the waker in during the owner's spin (step 0): the first spin hint
// unparks. A futex wait, had the owner gone to sleep, unparks too (so the
// test ends either way) and is counted.
struct UnparkInTheSpin : zap::StdPlatform {
    static inline zap::BasicParker<UnparkInTheSpin>* parker = nullptr;
    static inline int hints = 0;
    static inline int waits = 0;
    static void spin_hint() noexcept {
        if (++hints == 1) parker->unpark();
    }
    static bool futex_wait(Atomic<std::uint32_t>&, std::uint32_t, const std::chrono::nanoseconds*,
                           Loc = Loc::current()) noexcept {
        ++waits;
        parker->unpark();
        return true;
    }
};

}  // namespace

TEST(Parker, AnUnparkDuringTheSpinIsTakenWithoutSleeping) {
    zap::BasicParker<UnparkInTheSpin> parker;
    UnparkInTheSpin::parker = &parker;
    parker.park();
    EXPECT_EQ(UnparkInTheSpin::hints, 1) << "the spin saw the token at its next look";
    EXPECT_EQ(UnparkInTheSpin::waits, 0) << "the owner slept though the token came while it spun";
}

TEST(Parker, UnparkOfAParkedOwnerWakesIt) {
    zap::BasicParker<CountingPlatform> parker;
    CountingPlatform::wakes = 0;
    CountingPlatform::waits = 0;
    std::atomic<bool> returned{false};
    std::thread owner([&] {
        parker.park();
        returned = true;
    });
    while (CountingPlatform::waits.load() == 0) std::this_thread::yield();  // the owner reached the futex
    EXPECT_FALSE(returned.load());
    parker.unpark();
    owner.join();
    EXPECT_TRUE(returned.load());
    EXPECT_EQ(CountingPlatform::wakes.load(), 1);
}

TEST(Parker, SpuriousFutexReturnsDoNotEndPark) {
    zap::BasicParker<SpuriousPlatform> parker;
    std::atomic<bool> returned{false};
    std::thread owner([&] {
        parker.park();
        returned = true;
    });
    std::this_thread::sleep_for(20ms);  // thousands of spurious returns meanwhile
    EXPECT_FALSE(returned.load());
    parker.unpark();
    owner.join();
    EXPECT_TRUE(returned.load());
}

TEST(Parker, SpuriousFutexReturnsDoNotEndParkForEarly) {
    zap::BasicParker<SpuriousPlatform> parker;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(parker.park_for(10ms));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 10ms);
}

// Two threads hand a turn back and forth; a lost unpark hangs the test.
TEST(Parker, PingPongLosesNoUnpark) {
    zap::Parker ping, pong;
    constexpr int rounds = 20000;
    int turns = 0;  // plain: each handoff orders it
    std::thread other([&] {
        for (int i = 0; i < rounds; ++i) {
            pong.park();
            ++turns;
            ping.unpark();
        }
    });
    for (int i = 0; i < rounds; ++i) {
        ++turns;
        pong.unpark();
        ping.park();
    }
    other.join();
    EXPECT_EQ(turns, 2 * rounds);
}

#ifndef NDEBUG
TEST(ParkerDeathTest, TwoOwnersParkingAtOnceAsserts) {
    EXPECT_DEATH(
        {
            zap::BasicParker<SpuriousPlatform> parker;
            std::thread first([&] { parker.park(); });
            std::this_thread::sleep_for(20ms);
            parker.park();
        },
        "one owner");
}
#endif
