// SPDX-License-Identifier: MIT
// Buffer: the ring alone and with a thief; overflow migrates half; indices
// wrap; the owner takes its newest task back (step 5) against thieves.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <utility>
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

using Index = zap::detail::Buffer<zap::StdPlatform>::Index;
constexpr Index near_wrap = std::numeric_limits<Index>::max() - 2;

// Two threads stealing from `owner` into rings of their own until stop(),
// counting every task they run in `seen`.
template <class F>
class Thieves {
public:
    Thieves(F& f, typename F::Buffer& owner, std::vector<std::atomic<int>>& seen)
        : f_(f), owner_(owner), seen_(seen), one_([this] { loop(); }), two_([this] { loop(); }) {}
    void stop() {
        done_ = true;
        one_.join();
        two_.join();
    }

private:
    void loop() {
        typename F::Buffer mine;
        typename F::Buffer::Stole stole{};
        while (!done_.load()) {
            if (!mine.steal(owner_, stole)) continue;
            seen_[f_.index(stole.task)]++;
            while (auto* t = mine.pop()) seen_[f_.index(t)]++;
        }
    }
    F& f_;
    typename F::Buffer& owner_;
    std::vector<std::atomic<int>>& seen_;
    std::atomic<bool> done_{false};
    std::thread one_, two_;
};

}  // namespace

class BufferStart : public ::testing::TestWithParam<Index> {};

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
    EXPECT_TRUE(stole.more);
    EXPECT_EQ(thief.pop(), &f.tasks[0]);
    EXPECT_EQ(victim.pop(), &f.tasks[2]);
    EXPECT_FALSE(thief.steal(victim, stole)) << "nothing left to steal";
}

// One steal from a ring of P holding n tasks: how many the thief took (the
// one it runs and those in its ring), and how many it left.
template <class P>
std::pair<std::size_t, std::size_t> one_steal(std::size_t n, Index start) {
    Fixture<P> f(n);
    typename Fixture<P>::Buffer victim(start), thief(start + 1);
    auto list = f.list(0, n);
    EXPECT_TRUE(victim.push(list));
    typename Fixture<P>::Buffer::Stole stole{};
    if (!thief.steal(victim, stole)) return {0, victim.size()};
    return {thief.size() + 1, victim.size()};
}

// Half of every size, with the production ring: a thief that recomputed
// its share from the shrinking size it sees after each claim would stop
// short from five tasks up (2 of 5), which a ring of four cannot hold. And
// a full ring (its size equals the capacity, the largest a thief trusts).
TEST_P(BufferStart, StealTakesHalfOfEverySizeRoundedUp) {
    for (std::size_t n = 2; n <= 16; ++n) {
        const auto [taken, left] = one_steal<zap::StdPlatform>(n, GetParam());
        EXPECT_EQ(taken, (n + 1) / 2) << "taken of " << n << " tasks";
        EXPECT_EQ(left, n / 2) << "left of " << n << " tasks";
    }
    EXPECT_EQ(one_steal<SmallRing>(4, GetParam()).first, 2u) << "taken of a full ring of 4";
}

TEST_P(BufferStart, ConsumeFillsTheRingFromAQueue) {
    Fixture<SmallRing> f(7);
    typename Fixture<SmallRing>::Buffer ring(GetParam());
    typename Fixture<SmallRing>::Queue queue;
    queue.push(f.list(0, 7));
    typename Fixture<SmallRing>::Buffer::Stole stole{};
    ASSERT_TRUE(ring.consume(queue, stole));
    EXPECT_TRUE(stole.more);
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

TEST_P(BufferStart, TakeBackIsLifoAndOnlyForTheNewest) {
    Fixture<SmallRing> f(3);
    typename Fixture<SmallRing>::Buffer ring(GetParam());
    for (std::size_t i = 0; i < 3; ++i) {
        auto one = f.list(i, i + 1);
        ASSERT_TRUE(ring.push(one));
    }
    EXPECT_FALSE(ring.take_back(f.tasks[1])) << "task 1 is not the newest";
    EXPECT_EQ(ring.size(), 3u) << "a refused take-back leaves the ring alone";
    EXPECT_TRUE(ring.take_back(f.tasks[2]));
    EXPECT_TRUE(ring.take_back(f.tasks[1])) << "now task 1 is the newest";
    EXPECT_FALSE(ring.take_back(f.tasks[1])) << "taken back already";
    EXPECT_EQ(ring.size(), 1u);
    EXPECT_TRUE(ring.take_back(f.tasks[0])) << "the last task, through the CAS of step 5f";
    EXPECT_EQ(ring.size(), 0u);
    EXPECT_EQ(ring.pop(), nullptr);
    auto again = f.list(2, 3);
    ASSERT_TRUE(ring.push(again)) << "the ring is usable after emptying by take-back";
    EXPECT_EQ(ring.pop(), &f.tasks[2]);
}

TEST_P(BufferStart, TakeBackAfterATheftIsRefused) {
    Fixture<SmallRing> f(2);
    typename Fixture<SmallRing>::Buffer victim(GetParam()), thief(GetParam() + 7);
    auto one = f.list(0, 1);
    ASSERT_TRUE(victim.push(one));
    typename Fixture<SmallRing>::Buffer::Stole stole{};
    ASSERT_TRUE(thief.steal(victim, stole));
    EXPECT_EQ(stole.task, &f.tasks[0]);
    EXPECT_FALSE(victim.take_back(f.tasks[0])) << "a thief won it: take_back refuses (5f or 5g)";
    EXPECT_EQ(victim.size(), 0u) << "tail restored: the ring is empty, not at -1";
    EXPECT_EQ(victim.pop(), nullptr);
    EXPECT_FALSE(thief.steal(victim, stole));
    auto next = f.list(1, 2);
    ASSERT_TRUE(victim.push(next));
    EXPECT_TRUE(victim.take_back(f.tasks[1]));
}

TEST_P(BufferStart, TakeBackAfterOwnPopIsRefused) {
    Fixture<SmallRing> f(2);
    typename Fixture<SmallRing>::Buffer ring(GetParam());
    auto list = f.list(0, 2);
    ASSERT_TRUE(ring.push(list));
    EXPECT_EQ(ring.pop(), &f.tasks[0]);
    EXPECT_EQ(ring.pop(), &f.tasks[1]);
    EXPECT_FALSE(ring.take_back(f.tasks[1])) << "the owner's FIFO pop took it";
    EXPECT_EQ(ring.size(), 0u);
}

TEST_P(BufferStart, TakeBackOfAnOverflowedTaskIsRefused) {
    Fixture<SmallRing> f(5);
    typename Fixture<SmallRing>::Buffer ring(GetParam());
    auto four = f.list(0, 4);
    ASSERT_TRUE(ring.push(four));
    auto fifth = f.list(4, 5);
    ASSERT_FALSE(ring.push(fifth)) << "the ring is full: half migrates with the new task";
    EXPECT_FALSE(ring.take_back(f.tasks[4])) << "task 4 went to the overflow list, not the ring";
    EXPECT_EQ(ring.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Indices, BufferStart, ::testing::Values(Index{0}, near_wrap));

TEST(Buffer, OwnerAndThievesTakeEveryTaskOnce) {
    using F = Fixture<zap::StdPlatform>;
    constexpr std::size_t total = 200000;
    F f(total);
    F::Buffer owner;
    F::Queue overflow;
    std::vector<std::atomic<int>> seen(total);
    Thieves<F> thieves(f, owner, seen);
    for (std::size_t i = 0; i < total; i += 10) {
        auto list = f.list(i, i + 10);
        if (!owner.push(list)) overflow.push(list);
        if (auto* t = owner.pop()) seen[f.index(t)]++;
    }
    while (auto* t = owner.pop()) seen[f.index(t)]++;
    thieves.stop();
    F::Buffer::Stole stole{};
    while (owner.consume(overflow, stole)) {
        seen[f.index(stole.task)]++;
        while (auto* t = owner.pop()) seen[f.index(t)]++;
    }
    for (std::size_t i = 0; i < total; ++i) ASSERT_EQ(seen[i].load(), 1) << "task " << i;
}

// The fork/join pattern of nested parallel_invoke against two thieves: the
// owner pushes three tasks one by one (outer, middle, inner), then takes them
// back newest first: take-backs in a row, while a thief may hold a view of
// the ring from before the first (the case RB4 is about). Whatever a
// take-back refuses was stolen; every task must be run exactly once.
TEST(Buffer, TakeBackAgainstThievesRunsEveryTaskOnce) {
    using F = Fixture<SmallRing>;
    constexpr std::size_t depth = 3;
    constexpr std::size_t rounds = 100000;
    F f(depth * rounds);
    F::Buffer owner;
    std::vector<std::atomic<int>> seen(f.tasks.size());
    Thieves<F> thieves(f, owner, seen);
    for (std::size_t base = 0; base < f.tasks.size(); base += depth) {
        for (std::size_t i = base; i < base + depth; ++i) {
            auto one = f.list(i, i + 1);
            ASSERT_TRUE(owner.push(one));
        }
        for (std::size_t i = base + depth; i-- > base;)
            if (owner.take_back(f.tasks[i])) seen[i]++;
    }
    while (auto* t = owner.pop()) seen[f.index(t)]++;
    thieves.stop();
    for (std::size_t i = 0; i < f.tasks.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "task " << i;
}

// The isolated wait's searches of a ring on their own (buffer.hpp steps 7
// and 8; isolation.hpp): tasks of region R are the wait's, the others are
// passed on the way and taken by the caller (IS2).
namespace {
using RegionFixture = Fixture<zap::StdPlatform>;
using RegionTask = RegionFixture::Task;
constexpr std::uint64_t region_r = 7;  // any id but 0

template <class Task = RegionTask>
struct Passed {
    std::vector<Task*> tasks;
    auto into() {
        return [this](Task& t) { tasks.push_back(&t); };
    }
};
}  // namespace

// Step 7: the owner takes back its newest task of R, passing every task
// above it, newest first. A ring with no task of R is left alone, whatever
// region a slot below head held once.
TEST(BufferRegions, PopBackOfPassesTheTasksAboveAndLeavesARingWithoutTheRegion) {
    RegionFixture f(4);
    RegionFixture::Buffer ring;
    zap::detail::Region::set(f.tasks[0], region_r);
    zap::detail::Region::set(f.tasks[1], region_r);
    auto first = f.list(0, 1);
    ASSERT_TRUE(ring.push(first));
    ASSERT_EQ(ring.pop(), &f.tasks[0]);  // its slot, below head now, still says R
    auto rest = f.list(1, 4);
    ASSERT_TRUE(ring.push(rest));  // 1 (R), 2, 3
    Passed<> passed;
    EXPECT_EQ(ring.pop_back_of(region_r, passed.into()), &f.tasks[1]);
    EXPECT_EQ(passed.tasks, (std::vector<RegionTask*>{&f.tasks[3], &f.tasks[2]}));
    passed.tasks.clear();
    auto again = f.list(2, 4);
    ASSERT_TRUE(ring.push(again));  // 2, 3 over the slots of 1 and 2; the slot below head says R
    EXPECT_EQ(ring.pop_back_of(region_r, passed.into()), nullptr);
    EXPECT_TRUE(passed.tasks.empty()) << "a ring without a task of R gave up " << passed.tasks.size();
    EXPECT_EQ(ring.size(), 2u);
}

// Step 8: a thief claims from the oldest up to the first task of R, passing
// the others, and takes nothing above it.
TEST(BufferRegions, ClaimOfPassesTheOlderTasksAndTakesNothingAbove) {
    RegionFixture f(3);
    RegionFixture::Buffer victim;
    zap::detail::Region::set(f.tasks[1], region_r);
    auto all = f.list(0, 3);
    ASSERT_TRUE(victim.push(all));  // 0, 1 (R), 2
    Passed<> passed;
    EXPECT_EQ(RegionFixture::Buffer::claim_of(victim, region_r, passed.into()), &f.tasks[1]);
    EXPECT_EQ(passed.tasks, (std::vector<RegionTask*>{&f.tasks[0]}));
    EXPECT_EQ(victim.size(), 1u) << "the task above R stays with its owner";
    // A ring with no task of R: nothing is claimed or passed.
    passed.tasks.clear();
    EXPECT_EQ(RegionFixture::Buffer::claim_of(victim, region_r, passed.into()), nullptr);
    EXPECT_TRUE(passed.tasks.empty()) << "a thief took " << passed.tasks.size() << " tasks from a ring without R";
    EXPECT_EQ(victim.size(), 1u);
}

// Step 8 in a full ring (its size equals the capacity: the read-ahead
// trusts it, as a thief's claim does).
TEST(BufferRegions, ClaimOfFindsItsTaskInAFullRing) {
    using F = Fixture<SmallRing>;
    F f(4);
    F::Buffer victim;
    zap::detail::Region::set(f.tasks[1], region_r);
    auto all = f.list(0, 4);
    ASSERT_TRUE(victim.push(all));
    Passed<F::Task> passed;
    EXPECT_EQ(F::Buffer::claim_of(victim, region_r, passed.into()), &f.tasks[1]);
    EXPECT_EQ(passed.tasks, (std::vector<F::Task*>{&f.tasks[0]}));
}

// Step 8 when the task its read-ahead chose is gone by the time the thief
// gets there (the owner took R's task back and pushed others): the thief
// stops at its first claim at or past the target, and claims nothing above.
TEST(BufferRegions, ClaimOfStopsPastItsTargetWhenTheOwnerTookItBack) {
    RegionFixture f(4);
    RegionFixture::Buffer victim;
    zap::detail::Region::set(f.tasks[1], region_r);
    auto two = f.list(0, 2);
    ASSERT_TRUE(victim.push(two));  // 0, 1 (R): the read-ahead's target is 1's slot
    Passed<> passed;
    bool reused = false;
    auto pass = [&](RegionTask& t) {
        passed.tasks.push_back(&t);
        if (reused) return;
        reused = true;  // the owner, between the thief's claims:
        ASSERT_EQ(victim.pop_back(), &f.tasks[1]);
        auto others = f.list(2, 4);
        ASSERT_TRUE(victim.push(others));  // 2 and 3, above the target
    };
    EXPECT_EQ(RegionFixture::Buffer::claim_of(victim, region_r, pass), nullptr);
    EXPECT_EQ(passed.tasks, (std::vector<RegionTask*>{&f.tasks[0], &f.tasks[2]}));
    EXPECT_EQ(victim.size(), 1u) << "the second task past the target stays with its owner";
}
