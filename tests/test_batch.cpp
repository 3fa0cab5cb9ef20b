// SPDX-License-Identifier: MIT
// Batch: push, push(Batch&&), move assignment, pop, size, take_list; a
// batch pushed into another, or whose list was taken, is empty and reusable;
// stale links of reused tasks are cleared; scheduling caller-owned tasks and
// batches allocates nothing.
#include <zap/zap.hpp>

#include "counting_new.hpp"
#include "counting_platform.hpp"

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

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

TEST(Batch, PushesAndPopsInterleavedKeepTheOrder) {
    std::vector<zap::Task> tasks(4, zap::Task(&nothing));
    zap::Batch batch;
    batch.push(tasks[0]);
    batch.push(tasks[1]);
    EXPECT_EQ(batch.pop(), &tasks[0]);
    batch.push(tasks[2]);  // behind tasks[1], which is still queued
    EXPECT_EQ(batch.pop(), &tasks[1]);
    EXPECT_EQ(batch.pop(), &tasks[2]);
    EXPECT_EQ(batch.pop(), nullptr);
    batch.push(tasks[3]);  // into a batch that was emptied by pops
    EXPECT_EQ(batch.size(), 1u);
    EXPECT_EQ(batch.pop(), &tasks[3]);
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

TEST(Batch, PushingAnEmptyBatchChangesNothing) {
    std::vector<zap::Task> tasks(3, zap::Task(&nothing));
    zap::Batch batch;
    batch.push(tasks[0]);
    batch.push(tasks[1]);
    zap::Batch empty;
    batch.push(std::move(empty));
    EXPECT_EQ(batch.size(), 2u);
    batch.push(tasks[2]);  // still behind tasks[1]
    for (auto& t : tasks) EXPECT_EQ(batch.pop(), &t);
    EXPECT_EQ(batch.pop(), nullptr);
}

TEST(Batch, ABatchPushedIntoAnotherIsEmptyAndReusable) {
    std::vector<zap::Task> tasks(4, zap::Task(&nothing));
    zap::Batch a(tasks[0]);
    zap::Batch b;
    b.push(tasks[1]);
    b.push(tasks[2]);
    a.push(std::move(b));
    EXPECT_EQ(b.pop(), nullptr) << "the moved-from batch still had a head";
    b.push(tasks[3]);  // must start a chain of its own, not extend a's
    EXPECT_EQ(b.size(), 1u);
    EXPECT_EQ(b.pop(), &tasks[3]);
    EXPECT_EQ(b.pop(), nullptr);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(a.pop(), &tasks[i]);
    EXPECT_EQ(a.pop(), nullptr) << "the moved-from batch's push extended this one";
}

TEST(Batch, MoveAssignmentTakesTheTasksAndEmptiesTheSource) {
    std::vector<zap::Task> tasks(5, zap::Task(&nothing));
    zap::Batch from, to;
    for (int i = 0; i < 2; ++i) from.push(tasks[i]);
    for (int i = 2; i < 5; ++i) to.push(tasks[i]);
    to = std::move(from);
    EXPECT_TRUE(from.empty());
    EXPECT_EQ(from.size(), 0u);
    EXPECT_EQ(from.pop(), nullptr);
    ASSERT_EQ(to.size(), 2u);
    EXPECT_EQ(to.pop(), &tasks[0]);
    EXPECT_EQ(to.pop(), &tasks[1]);
    EXPECT_EQ(to.pop(), nullptr);
}

TEST(Batch, TakeListHandsOverTheChainAndLeavesTheBatchEmpty) {
    std::vector<zap::Task> tasks(3, zap::Task(&nothing));
    zap::Batch batch;
    for (auto& t : tasks) batch.push(t);
    const auto list = batch.take_list();
    EXPECT_EQ(list.head, &tasks[0]);
    EXPECT_EQ(list.tail, &tasks[2]);
    EXPECT_TRUE(batch.empty());
    EXPECT_EQ(batch.size(), 0u);
    EXPECT_EQ(batch.pop(), nullptr);
    zap::Task again(&nothing);
    batch.push(again);  // a chain of its own, not behind the one handed over
    EXPECT_EQ(batch.pop(), &again);
    EXPECT_EQ(batch.pop(), nullptr);
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

namespace {

// A caller-owned task of the counting platform that counts itself done.
struct Counted : zap::BasicTask<CountingPlatform> {
    zap::BasicWaitGroup<CountingPlatform>* group = nullptr;
    Counted() : zap::BasicTask<CountingPlatform>(&run) {}
    static void run(zap::BasicTask<CountingPlatform>* task) { static_cast<Counted*>(task)->group->done(); }
};

}  // namespace

TEST(Batch, SchedulingTasksAndBatchesAllocatesNothing) {
    // The low level's promise: once the workers exist, schedule() of a task
    // or of a batch allocates nothing, through the Platform or operator new
    // (the pool links the caller's tasks; its rings and queues are fixed).
    zap::BasicThreadPool<CountingPlatform> pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    std::vector<Counted> tasks(8);
    zap::BasicWaitGroup<CountingPlatform> group;
    for (auto& task : tasks) task.group = &group;
    auto round = [&] {
        group.add(static_cast<std::uint32_t>(tasks.size()));
        pool.schedule(tasks[0]);  // one task
        zap::BasicBatch<CountingPlatform> batch;
        for (std::size_t i = 1; i < tasks.size(); ++i) batch.push(tasks[i]);
        pool.schedule(std::move(batch));  // and a batch of the rest
        group.wait();
    };
    round();
    const int platform_before = CountingPlatform::allocations.load();
    const long news_before = heap_allocations.load();
    for (int i = 0; i < 2000; ++i) round();
    EXPECT_EQ(CountingPlatform::allocations.load() - platform_before, 0) << "over 2000 rounds of 8 tasks";
    if (ZAP_TEST_COUNTS_NEW) {
        EXPECT_EQ(heap_allocations.load() - news_before, 0) << "over 2000 rounds of 8 tasks";
    }
}
