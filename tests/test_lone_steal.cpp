// SPDX-License-Identifier: MIT
// A ring's lone task (buffer.hpp step 3a, DL1-DL2): a thief leaves it to its
// owner for Platform::steal_delay_rounds spin hints, then claims it if it
// is still there (the delay ends: DL1), or reports the ring empty if its
// owner took it meanwhile (DL2).
//
// On the ring alone the spin hints are counted and the owner's moves are
// made from inside them, so every outcome is decided, none timed. In a
// pool, a task forks one child into its worker's ring and then waits for
// it without helping (as a task that hands its child to a latch would):
// only the other worker can run it, by stealing the lone task. A steal that
// refused it instead would leave that worker asleep and the task waiting
// for ever; the wait gives up at a watchdog deadline (far above any
// scheduling delay) so that the test fails instead of hanging.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

namespace {

using namespace std::chrono_literals;

// The production platform whose spin hint counts, and runs `during_hint`
// (the owner's move, in the single-threaded ring tests) when one is set.
struct Counted : zap::StdPlatform {
    static constexpr std::uint32_t ring_capacity = 4;
    static constexpr std::uint32_t wait_spin_rounds = 0;  // only the thief's delay hints
    static inline std::atomic<long> hints{0};
    static inline void (*during_hint)() = nullptr;
    static void spin_hint() noexcept {
        hints.fetch_add(1);  // a counter only
        if (during_hint != nullptr) during_hint();
    }
};

using Task = zap::BasicTask<Counted>;
using Buffer = zap::detail::Buffer<Counted>;
using List = zap::detail::List<Task>;

void nothing(Task*) {}

List one(Task& task) {
    zap::BasicBatch<Counted> batch;
    batch.push(task);
    return batch.take_list();
}

struct Ring : ::testing::Test {
    Task first{&nothing};
    Task second{&nothing};
    Buffer owner;
    Buffer thief;
    Buffer::Stole stole{};

    void SetUp() override {
        Counted::hints = 0;
        Counted::during_hint = nullptr;
    }
    void TearDown() override { Counted::during_hint = nullptr; }
};

Buffer* owner_of_the_hint = nullptr;
Task* taken_by_the_owner = nullptr;

TEST_F(Ring, LoneTaskLeftAloneThenClaimed) {
    List list = one(first);
    ASSERT_TRUE(owner.push(list));
    ASSERT_TRUE(thief.steal(owner, stole)) << "the thief refused a lone task its owner never took (DL1)";
    EXPECT_EQ(stole.task, &first);
    EXPECT_FALSE(stole.more);
    EXPECT_EQ(Counted::hints.load(), static_cast<long>(Counted::steal_delay_rounds))
        << "the thief did not leave the lone task alone for the whole delay first (step 3a)";
    EXPECT_EQ(owner.pop(), nullptr);
}

TEST_F(Ring, LoneTaskTakenBackByItsOwnerDuringTheDelay) {
    List list = one(first);
    ASSERT_TRUE(owner.push(list));
    owner_of_the_hint = &owner;
    taken_by_the_owner = nullptr;
    Counted::during_hint = [] {
        if (taken_by_the_owner == nullptr) taken_by_the_owner = owner_of_the_hint->pop_back();  // step 6
    };
    EXPECT_FALSE(thief.steal(owner, stole)) << "the thief reported a task its owner had taken back";
    EXPECT_EQ(taken_by_the_owner, &first);
    EXPECT_EQ(Counted::hints.load(), 1) << "the delay went on after the task was gone (DL2)";
}

TEST_F(Ring, TwoTasksAreNotLeftAlone) {
    zap::BasicBatch<Counted> batch;
    batch.push(first);
    batch.push(second);
    List list = batch.take_list();
    ASSERT_TRUE(owner.push(list));
    ASSERT_TRUE(thief.steal(owner, stole));
    EXPECT_EQ(stole.task, &first);  // half of two, rounded up: the oldest
    EXPECT_EQ(Counted::hints.load(), 0) << "the thief waited at a ring of two tasks";
}

// ---- in a pool ---------------------------------------------------------------

using Pool = zap::BasicThreadPool<Counted>;

// A task that forks one child into its worker's ring, then waits (without
// helping) until that child has run on the other worker.
struct Fork : Task {
    struct Child : Task {
        Fork* fork;
        explicit Child(Fork* f) : Task(&run), fork(f) {}
        static void run(Task* task) {
            Fork& fork = *static_cast<Child*>(task)->fork;
            fork.child_ran_on = std::this_thread::get_id();
            fork.child_ran.store(true);  // its last touch of the fork
        }
    };

    Pool& pool;
    const std::chrono::steady_clock::time_point deadline;
    std::thread::id ran_on{};
    std::thread::id child_ran_on{};
    std::atomic<bool> child_ran{false};
    bool gave_up = false;
    std::atomic<bool> done{false};
    Child child{this};

    Fork(Pool& p, std::chrono::steady_clock::duration watchdog)
        : Task(&run), pool(p), deadline(std::chrono::steady_clock::now() + watchdog) {}

    static void run(Task* task) {
        Fork& self = *static_cast<Fork*>(task);
        self.ran_on = std::this_thread::get_id();
        self.pool.schedule(self.child);  // into this worker's ring: its only task
        while (!self.child_ran.load()) {  // the watchdog: a refused child waits for ever
            if (std::chrono::steady_clock::now() > self.deadline) {
                self.gave_up = true;
                break;
            }
            std::this_thread::yield();  // no spin hint of ours
        }
        self.done.store(true);  // its last touch of the fork
    }
};

TEST(LoneSteal, AnIdleWorkerStealsTheLoneChildOfABlockedTask) {
    zap::Config config;
    config.max_threads = 2;
    config.spin_rounds = 0;  // the idle worker sleeps until the fork's notify wakes it
    Pool pool(config);
    pool.warm(2);
    Counted::hints = 0;
    constexpr int rounds = 50;
    for (int round = 0; round < rounds; ++round) {
        auto fork = std::make_unique<Fork>(pool, 20s);
        pool.schedule(*fork);
        while (!fork->done.load()) std::this_thread::sleep_for(100us);
        if (fork->gave_up) {
            static_cast<void>(fork.release());  // its child is still queued: the pool's drain runs it at destruction
            FAIL() << "round " << round << ": the lone child was never stolen while its owner waited for it (DL1)";
        }
        EXPECT_NE(fork->child_ran_on, fork->ran_on);
    }
    EXPECT_GT(Counted::hints.load(), 0) << "no thief left a lone task alone: the scenario tests nothing";
}

}  // namespace
