// SPDX-License-Identifier: MIT
// Batch: push, push(Batch&&), pop, size; stale links of reused tasks are cleared.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {
void nothing(zap::Task*) {}
}  // namespace

TEST(Batch, EmptyByDefault) {
    zap::Batch batch;
    EXPECT_TRUE(batch.empty());
    EXPECT_EQ(batch.size(), 0u);
    EXPECT_EQ(batch.pop(), nullptr);
}

TEST(Batch, PopsInPushOrder) {
    std::vector<zap::Task> tasks(5, zap::Task(&nothing));
    zap::Batch batch;
    for (auto& t : tasks) batch.push(t);
    EXPECT_EQ(batch.size(), 5u);
    for (auto& t : tasks) EXPECT_EQ(batch.pop(), &t);
    EXPECT_TRUE(batch.empty());
    EXPECT_EQ(batch.pop(), nullptr);
}

TEST(Batch, PushBatchTakesEverything) {
    std::vector<zap::Task> tasks(6, zap::Task(&nothing));
    zap::Batch a(tasks[0]);
    zap::Batch b;
    for (std::size_t i = 1; i < tasks.size(); ++i) b.push(tasks[i]);
    a.push(std::move(b));
    EXPECT_TRUE(b.empty());
    EXPECT_EQ(a.size(), 6u);
    for (auto& t : tasks) EXPECT_EQ(a.pop(), &t);
    zap::Batch empty;
    a.push(std::move(empty));
    EXPECT_TRUE(a.empty());
}

TEST(Batch, ReusedTaskCarriesNoStaleLink) {
    std::vector<zap::Task> tasks(3, zap::Task(&nothing));
    zap::Batch first;
    for (auto& t : tasks) first.push(t);
    ASSERT_EQ(first.pop(), &tasks[0]);  // tasks[0] still links to tasks[1]
    zap::Batch again(tasks[0]);
    EXPECT_EQ(again.size(), 1u);
    EXPECT_EQ(again.pop(), &tasks[0]);
    EXPECT_EQ(again.pop(), nullptr) << "the seed's Batch.from kept the stale link";
}
