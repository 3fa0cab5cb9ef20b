// SPDX-License-Identifier: MIT
// Event: notifications are kept until taken, shutdown wakes every waiter for good.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include "rounds.hpp"

#include <atomic>
#include <thread>
#include <vector>

using Event = zap::detail::Event<zap::StdPlatform>;

TEST(Event, NotifyBeforeWaitIsRemembered) {
    Event event;
    event.notify();
    event.wait();  // returns at once
    SUCCEED();
}

TEST(Event, NotificationsCollapse) {
    Event event;
    event.notify();
    event.notify();
    event.wait();
    std::atomic<bool> returned{false};
    std::thread waiter([&] {
        event.wait();
        returned = true;
    });
    // The second notify did not leave a second token: the waiter blocks
    // until we notify again.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(returned.load());
    event.notify();
    waiter.join();
    EXPECT_TRUE(returned.load());
}

TEST(Event, EachNotifyWakesOneOfManyWaiters) {
    Event event;
    constexpr int waiters = 4;
    std::atomic<int> woken{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < waiters; ++i) threads.emplace_back([&] {
        event.wait();
        woken++;
    });
    for (int i = 0; i < waiters; ++i) {
        // Wait for the previous wake to be taken before posting the next one,
        // since pending notifications collapse.
        while (woken.load() < i) std::this_thread::yield();
        event.notify();
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(woken.load(), waiters);
}

TEST(Event, ShutdownWakesAllAndStays) {
    Event event;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) threads.emplace_back([&] { event.wait(); });
    event.shutdown();
    for (auto& t : threads) t.join();
    event.wait();  // still shut down: returns at once
    event.notify();  // must not replace SHUTDOWN (E2)
    event.wait();
    event.wait();
    SUCCEED();
}

TEST(Event, NotifyThenShutdownWakesEverySleeper) {
    // Two sleepers; notify() wakes one, shutdown() lands before that one has
    // taken the notification. The seed's shutdown saw NOTIFIED, skipped the
    // futex wake, and the other sleeper never woke (E3).
    for (int round = 0; round < zap_test::rounds(20000); ++round) {
        Event event;
        std::atomic<bool> stop{false};
        std::vector<std::thread> threads;
        for (int i = 0; i < 2; ++i) threads.emplace_back([&] {
            while (!stop.load()) event.wait();
        });
        event.notify();
        stop = true;
        event.shutdown();
        for (auto& t : threads) t.join();
    }
    SUCCEED();
}
