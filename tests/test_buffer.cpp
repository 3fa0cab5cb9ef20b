// Buffer: the ring alone and with a thief; overflow migrates half; indices wrap.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

namespace {

// The production platform with a 4-slot ring, so overflow is a few pushes away.
struct SmallRing : zap::StdPlatform {
    static constexpr std::uint32_t ring_capacity = 4;
};

template <class P>
struct Fixture {
    using Task = zap::BasicTask<P>;
    using Buffer = zap::detail::Buffer<P>;
    using Queue = zap::detail::Queue<P>;
    using List = zap::detail::List<Task>;

    static void nothing(Task*) {}
    std::vector<Task> tasks;
    explicit Fixture(std::size_t n) : tasks(n, Task(&nothing)) {}

    List list(std::size_t from, std::size_t to) {
        zap::BasicBatch<P> batch;
        for (std::size_t i = from; i < to; ++i) batch.push(tasks[i]);
        return batch.take_list();
    }
    std::size_t index(Task* t) const { return static_cast<std::size_t>(t - tasks.data()); }
};

constexpr std::uint32_t near_wrap = std::numeric_limits<std::uint32_t>::max() - 2;

}  // namespace

class BufferStart : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(BufferStart, PushThenPopIsFifo) {
    Fixture<SmallRing> f(4);
    typename Fixture<SmallRing>::Buffer ring(GetParam());
    auto list = f.list(0, 4);
    ASSERT_TRUE(ring.push(list));
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(ring.pop(), &f.tasks[i]);
    EXPECT_EQ(ring.pop(), nullptr);
}

TEST_P(BufferStart, OverflowMigratesHalfAndKeepsEveryTask) {
    Fixture<SmallRing> f(7);
    typename Fixture<SmallRing>::Buffer ring(GetParam());
    auto list = f.list(0, 7);
    ASSERT_FALSE(ring.push(list)) << "7 tasks cannot fit in 4 slots";
    // The ring was filled with 0..3; half (0, 1) migrated, followed by 4, 5, 6.
    std::vector<std::size_t> overflow;
    for (auto* t = list.head; t != nullptr; t = zap::detail::Link::next(*t)) overflow.push_back(f.index(t));
    EXPECT_EQ(overflow, (std::vector<std::size_t>{0, 1, 4, 5, 6}));
    EXPECT_EQ(list.tail, &f.tasks[6]);
    EXPECT_EQ(ring.pop(), &f.tasks[2]);
    EXPECT_EQ(ring.pop(), &f.tasks[3]);
    EXPECT_EQ(ring.pop(), nullptr);
}

TEST_P(BufferStart, StealTakesHalfRoundedUp) {
    Fixture<SmallRing> f(3);
    typename Fixture<SmallRing>::Buffer victim(GetParam()), thief(GetParam() + 1);
    auto list = f.list(0, 3);
    ASSERT_TRUE(victim.push(list));
    typename Fixture<SmallRing>::Buffer::Stole stole{};
    ASSERT_TRUE(thief.steal(victim, stole));
    EXPECT_EQ(stole.task, &f.tasks[1]) << "the thief runs the last task it took";
    EXPECT_TRUE(stole.pushed);
    EXPECT_EQ(thief.pop(), &f.tasks[0]);
    EXPECT_EQ(victim.pop(), &f.tasks[2]);
    EXPECT_FALSE(thief.steal(victim, stole)) << "nothing left to steal";
}

TEST_P(BufferStart, ConsumeFillsTheRingFromAQueue) {
    Fixture<SmallRing> f(7);
    typename Fixture<SmallRing>::Buffer ring(GetParam());
    typename Fixture<SmallRing>::Queue queue;
    queue.push(f.list(0, 7));
    typename Fixture<SmallRing>::Buffer::Stole stole{};
    ASSERT_TRUE(ring.consume(queue, stole));
    EXPECT_TRUE(stole.pushed);
    std::vector<int> seen(7, 0);
    ++seen[f.index(stole.task)];
    while (auto* t = ring.pop()) ++seen[f.index(t)];
    EXPECT_EQ(ring.size(), 0u);
    // 4 went to the ring, 1 to run: 2 are left in the queue's cache.
    ASSERT_TRUE(ring.consume(queue, stole));
    ++seen[f.index(stole.task)];
    while (auto* t = ring.pop()) ++seen[f.index(t)];
    EXPECT_FALSE(ring.consume(queue, stole));
    for (int s : seen) EXPECT_EQ(s, 1);
}

INSTANTIATE_TEST_SUITE_P(Indices, BufferStart, ::testing::Values(0u, near_wrap));

TEST(Buffer, OwnerAndThievesTakeEveryTaskOnce) {
    using F = Fixture<zap::StdPlatform>;
    constexpr std::size_t total = 200000;
    F f(total);
    F::Buffer owner;
    F::Queue overflow;
    std::vector<std::atomic<int>> seen(total);
    std::atomic<bool> done{false};
    auto thief_loop = [&] {
        F::Buffer mine;
        F::Buffer::Stole stole{};
        while (!done.load()) {
            if (!mine.steal(owner, stole)) continue;
            seen[f.index(stole.task)]++;
            while (auto* t = mine.pop()) seen[f.index(t)]++;
        }
    };
    std::thread thief1(thief_loop), thief2(thief_loop);
    for (std::size_t i = 0; i < total; i += 10) {
        auto list = f.list(i, i + 10);
        if (!owner.push(list)) overflow.push(list);
        if (auto* t = owner.pop()) seen[f.index(t)]++;
    }
    while (auto* t = owner.pop()) seen[f.index(t)]++;
    done = true;
    thief1.join();
    thief2.join();
    F::Buffer::Stole stole{};
    while (owner.consume(overflow, stole)) {
        seen[f.index(stole.task)]++;
        while (auto* t = owner.pop()) seen[f.index(t)]++;
    }
    for (std::size_t i = 0; i < total; ++i) ASSERT_EQ(seen[i].load(), 1) << "task " << i;
}
