// SPDX-License-Identifier: MIT
// Queue: lists in, tasks out once each; the consumer lock; many producers.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

using Queue = zap::detail::Queue<zap::StdPlatform>;
using List = zap::detail::List<zap::Task>;

namespace {
void nothing(zap::Task*) {}

List list_of(std::vector<zap::Task>& tasks, std::size_t from, std::size_t to) {
    zap::Batch batch;
    for (std::size_t i = from; i < to; ++i) batch.push(tasks[i]);
    return batch.take_list();
}

std::vector<zap::Task*> drain(Queue& queue) {
    std::vector<zap::Task*> out;
    zap::Task* cursor = nullptr;
    if (!queue.try_acquire_consumer(cursor)) return out;
    while (zap::Task* t = queue.pop(cursor)) out.push_back(t);
    queue.release_consumer(cursor);
    return out;
}
}  // namespace

TEST(Queue, EmptyQueueCannotBeAcquired) {
    Queue queue;
    zap::Task* cursor = nullptr;
    EXPECT_FALSE(queue.try_acquire_consumer(cursor));
}

TEST(Queue, EveryPushedTaskComesOutOnce) {
    std::vector<zap::Task> tasks(10, zap::Task(&nothing));
    Queue queue;
    queue.push(list_of(tasks, 0, 4));
    queue.push(list_of(tasks, 4, 10));
    auto out = drain(queue);
    ASSERT_EQ(out.size(), 10u);
    std::vector<int> seen(10, 0);
    for (auto* t : out) ++seen[t - tasks.data()];
    for (int s : seen) EXPECT_EQ(s, 1);
    EXPECT_TRUE(drain(queue).empty());
}

TEST(Queue, SecondConsumerIsRefused) {
    std::vector<zap::Task> tasks(2, zap::Task(&nothing));
    Queue queue;
    queue.push(list_of(tasks, 0, 2));
    zap::Task* first = nullptr;
    ASSERT_TRUE(queue.try_acquire_consumer(first));
    zap::Task* second = nullptr;
    EXPECT_FALSE(queue.try_acquire_consumer(second));
    queue.release_consumer(first);
    EXPECT_EQ(drain(queue).size(), 2u);
}

TEST(Queue, UnconsumedTasksWaitInTheCacheForTheNextConsumer) {
    std::vector<zap::Task> tasks(5, zap::Task(&nothing));
    Queue queue;
    queue.push(list_of(tasks, 0, 3));
    zap::Task* cursor = nullptr;
    ASSERT_TRUE(queue.try_acquire_consumer(cursor));
    ASSERT_NE(queue.pop(cursor), nullptr);
    queue.release_consumer(cursor);  // two tasks left in the cache
    queue.push(list_of(tasks, 3, 5));
    EXPECT_EQ(drain(queue).size(), 4u);
}

TEST(Queue, ManyProducersOneConsumerAtATime) {
    constexpr int producers = 3, per_producer = 20000;
    std::vector<zap::Task> tasks(producers * per_producer, zap::Task(&nothing));
    Queue queue;
    std::atomic<int> producing{producers};
    std::vector<int> seen(tasks.size(), 0);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            for (int i = 0; i < per_producer; i += 2) {
                const std::size_t at = static_cast<std::size_t>(p * per_producer + i);
                queue.push(list_of(tasks, at, at + 2));
            }
            producing.fetch_sub(1);
        });
    std::atomic<std::size_t> consumed{0};
    std::vector<std::thread> consumers;
    std::mutex seen_lock;
    for (int c = 0; c < 2; ++c)
        consumers.emplace_back([&] {
            while (producing.load() > 0 || consumed.load() < tasks.size()) {
                auto out = drain(queue);
                std::lock_guard guard(seen_lock);
                for (auto* t : out) ++seen[t - tasks.data()];
                consumed += out.size();
            }
        });
    for (auto& t : threads) t.join();
    for (auto& t : consumers) t.join();
    for (int s : seen) ASSERT_EQ(s, 1);
}

// A push while a consumer holds the queue keeps the consumer's flags, and
// its tasks wait for the next consumer (step 4's report).
TEST(Queue, PushIntoAHeldQueueKeepsItsFlagsAndTasks) {
    std::vector<zap::Task> tasks(3, zap::Task(&nothing));
    Queue queue;
    zap::Task* held = nullptr;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        queue.push(list_of(tasks, i, i + 1));
        zap::Task* cursor = nullptr;
        const bool acquired = queue.try_acquire_consumer(cursor);
        if (i == 0) held = cursor;  // the first push's consumer holds on
        EXPECT_EQ(acquired, i == 0) << "push " << i << " dropped the consumer's flags";
    }
    EXPECT_EQ(queue.pop(held), &tasks[0]);
    EXPECT_TRUE(queue.release_consumer(held)) << "the lists pushed while held are not reported";
    EXPECT_EQ(drain(queue).size(), 2u);
}

// The lines of a Worker: every other worker's search reads its run_queue,
// so nothing the owner writes as it searches, spins or runs tasks shares
// that line (a write there would make each of those reads miss).
TEST(Queue, AWorkersRunQueueSharesNoLineWithWhatItsOwnerWrites) {
    using Worker = zap::detail::Worker<zap::StdPlatform>;
    auto worker = std::make_unique<Worker>();
    const auto line = [](const void* field) { return reinterpret_cast<std::uintptr_t>(field) / 64; };
    const auto shared = line(&worker->run_queue);
    EXPECT_NE(line(&worker->steal_cursor), shared);
    EXPECT_NE(line(&worker->spin_budget), shared);
    EXPECT_NE(line(&worker->context), shared);
    EXPECT_NE(line(&worker->helper), shared);
}
