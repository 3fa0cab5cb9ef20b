// SPDX-License-Identifier: MIT
// ObjectPool: put/try_get/get/get_for, the newest object first, close()
// wakes every getter and returns every object still held.
#include "test_platforms.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

TEST(ObjectPool, PutThenGetNewestFirst) {
    zap::ObjectPool<int> pool;
    EXPECT_EQ(pool.size(), 0u);
    EXPECT_EQ(pool.try_get(), std::nullopt);
    pool.put(1);
    pool.put(2);
    EXPECT_EQ(pool.size(), 2u);
    EXPECT_EQ(pool.try_get(), 2);
    EXPECT_EQ(pool.get(), 1);
    EXPECT_EQ(pool.size(), 0u);
}

TEST(ObjectPool, MoveOnlyObjects) {
    zap::ObjectPool<std::unique_ptr<int>> pool;
    pool.put(std::make_unique<int>(5));
    auto p = pool.get();
    ASSERT_TRUE(p && *p);
    EXPECT_EQ(**p, 5);
}

TEST(ObjectPool, GetForTimesOutOnAnEmptyPool) {
    zap::ObjectPool<int> pool;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(pool.get_for(5ms), std::nullopt);
    EXPECT_GE(std::chrono::steady_clock::now() - start, 5ms);
    pool.put(4);
    EXPECT_EQ(pool.size(), 1u);  // nobody took it on the timed-out getter's behalf
}

TEST(ObjectPool, GetWaitsForAPut) {
    zap::ObjectPool<int> pool;
    std::optional<int> got;
    std::thread getter([&] { got = pool.get(); });
    std::this_thread::sleep_for(5ms);
    pool.put(8);
    getter.join();
    EXPECT_EQ(got, 8);
    EXPECT_EQ(pool.size(), 0u);
}

TEST(ObjectPool, GetForGetsAnObjectPutWhileItWaits) {
    zap::ObjectPool<int> pool;
    std::thread putter([&] {
        std::this_thread::sleep_for(5ms);
        pool.put(4);
    });
    EXPECT_EQ(pool.get_for(10s), 4);
    putter.join();
    EXPECT_EQ(pool.size(), 0u);
}

TEST(ObjectPool, AnObjectGoesToExactlyOneOfTwoWaiters) {
    // put() hands its object to one waiter; the other keeps waiting until
    // close() wakes it with nothing.
    zap::ObjectPool<int> pool;
    std::atomic<int> returned{0};
    std::optional<int> got[2];
    std::vector<std::thread> getters;
    for (int i = 0; i < 2; ++i) getters.emplace_back([&, i] {
        got[i] = pool.get();
        returned++;
    });
    std::this_thread::sleep_for(5ms);  // most likely both asleep by now; the outcome is the same if not
    pool.put(9);
    while (returned.load() == 0) std::this_thread::yield();
    std::this_thread::sleep_for(5ms);
    EXPECT_EQ(returned.load(), 1) << "one object, one getter";
    EXPECT_TRUE(pool.close().empty());
    for (std::thread& getter : getters) getter.join();
    EXPECT_EQ((got[0] == 9) + (got[1] == 9), 1);
    EXPECT_EQ(!got[0].has_value() + !got[1].has_value(), 1);
}

TEST(ObjectPool, CloseWakesEveryGetterAndReturnsEveryObject) {
    zap::ObjectPool<int> pool;
    std::atomic<int> woke_empty{0};
    std::vector<std::thread> getters;
    for (int i = 0; i < 3; ++i) getters.emplace_back([&] {
        if (!pool.get()) woke_empty++;
    });
    std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(pool.close().empty());
    for (auto& t : getters) t.join();
    EXPECT_EQ(woke_empty.load(), 3);
    EXPECT_EQ(pool.get(), std::nullopt);
    EXPECT_EQ(pool.get_for(1s), std::nullopt);
    EXPECT_EQ(pool.try_get(), std::nullopt);
}

TEST(ObjectPool, CloseReturnsHeldObjects) {
    zap::ObjectPool<int> pool;
    pool.put(1);
    pool.put(2);
    std::vector<int> left = pool.close();
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<int>{1, 2}));
    EXPECT_TRUE(pool.close().empty());
}

// N objects gate N-at-a-time work: never more than N out at once, and all
// N come back.
TEST(ObjectPool, GatesConcurrency) {
    constexpr int objects = 2, threads_count = 4, rounds = 2000;
    zap::ObjectPool<int> pool;
    for (int i = 0; i < objects; ++i) pool.put(i);
    std::atomic<int> out{0}, most{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_count; ++t) threads.emplace_back([&, t] {
        for (int i = 0; i < rounds; ++i) {
            auto item = t % 2 == 0 ? pool.get() : pool.get_for(1ms);
            if (!item) continue;  // timed out: try again
            const int now = ++out;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            --out;
            pool.put(*item);
        }
    });
    for (auto& t : threads) t.join();
    EXPECT_LE(most.load(), objects);
    std::vector<int> left = pool.close();
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<int>{0, 1}));
}

TEST(ObjectPool, SpuriousFutexReturnsLoseNothing) {
    zap::BasicObjectPool<zap_test::SpuriousPlatform, int> pool;
    std::atomic<int> got{0};
    std::vector<std::thread> getters;
    for (int i = 0; i < 3; ++i) getters.emplace_back([&] {
        while (pool.get()) got++;
    });
    for (int i = 0; i < 1000; ++i) pool.put(i);
    const auto left = static_cast<int>(pool.close().size());
    for (auto& t : getters) t.join();
    EXPECT_EQ(got.load() + left, 1000);
}

#ifndef NDEBUG
TEST(ObjectPoolDeathTest, PutAfterCloseAsserts) {
    zap::ObjectPool<int> pool;
    EXPECT_TRUE(pool.close().empty());
    EXPECT_DEATH(pool.put(1), "ObjectPool::put after close");
}
#endif
