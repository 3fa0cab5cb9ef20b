// SPDX-License-Identifier: MIT
// Spawn failure injected through a test Platform: the first spawn fails,
// every spawn fails, every other spawn fails. Every task still runs exactly
// once: on the workers that exist, or on the joining thread when none do.
#include "call_task.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <utility>
#include <functional>
#include <chrono>
#include <vector>

namespace {

enum class Failure { first, all, every_other };

// The production platform whose spawn() fails by a policy.
struct FlakySpawn : zap::StdPlatform {
    static inline std::atomic<Failure> policy{Failure::first};
    static inline std::atomic<int> attempts{0};
    static inline std::atomic<int> started{0};

    static bool spawn(const zap::ThreadOptions& options, void* (*entry)(void*), void* arg) noexcept {
        const int n = attempts.fetch_add(1);
        const Failure p = policy.load();
        const bool fail = p == Failure::all || (p == Failure::first && n == 0) || (p == Failure::every_other && n % 2 == 0);
        if (fail) return false;
        started.fetch_add(1);
        return StdPlatform::spawn(options, entry, arg);
    }

    static void reset(Failure p) {
        policy = p;
        attempts = 0;
        started = 0;
    }
};

using Task = zap::BasicTask<FlakySpawn>;
using Batch = zap::BasicBatch<FlakySpawn>;
using Pool = zap::BasicThreadPool<FlakySpawn>;
using WaitGroup = zap::BasicWaitGroup<FlakySpawn>;

struct Counted : Task {
    std::atomic<int> runs{0};
    WaitGroup* wg = nullptr;
    Counted() : Task(&run) {}
    static void run(Task* t) {
        auto* self = static_cast<Counted*>(t);
        self->runs.fetch_add(1);
        if (self->wg != nullptr) self->wg->done();
    }
};

void expect_each_ran_once(const std::vector<Counted>& tasks) {
    for (std::size_t i = 0; i < tasks.size(); ++i) ASSERT_EQ(tasks[i].runs.load(), 1) << "task " << i;
}

struct Case {
    Failure failure;
    std::uint32_t max_threads;
};

}  // namespace

class SpawnFailure : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override { FlakySpawn::reset(GetParam().failure); }
    Pool make_pool() { return Pool(zap::Config{.max_threads = GetParam().max_threads}); }
};

TEST_P(SpawnFailure, ScheduleThenJoinRunsEverything) {
    std::vector<Counted> tasks(3000);
    {
        Pool pool(zap::Config{.max_threads = GetParam().max_threads});
        for (std::size_t i = 0; i < tasks.size(); i += 3) {
            Batch batch;
            for (std::size_t j = i; j < i + 3; ++j) batch.push(tasks[j]);
            pool.schedule(std::move(batch));
        }
    }
    expect_each_ran_once(tasks);
    EXPECT_GT(FlakySpawn::attempts.load(), 0);
}

TEST_P(SpawnFailure, WarmAfterFailureThenDrain) {
    std::vector<Counted> tasks(500);
    Pool pool(zap::Config{.max_threads = GetParam().max_threads});
    pool.warm(GetParam().max_threads);
    for (auto& t : tasks) pool.schedule(t);
    pool.shutdown();
    pool.join();
    expect_each_ran_once(tasks);
}

INSTANTIATE_TEST_SUITE_P(Policies, SpawnFailure,
                         ::testing::Values(Case{Failure::first, 1}, Case{Failure::first, 4},
                                           Case{Failure::all, 1}, Case{Failure::all, 4},
                                           Case{Failure::every_other, 1}, Case{Failure::every_other, 4}));

TEST(SpawnFailureRetry, FirstFailureDoesNotStopLaterSpawns) {
    // The seed left `notified` set after a failed spawn with no worker, so
    // every later schedule() took the fast path and nothing ran until join.
    FlakySpawn::reset(Failure::first);
    Pool pool(zap::Config{.max_threads = 2});
    Counted first, second;
    WaitGroup wg;
    wg.add(2);
    first.wg = &wg;
    second.wg = &wg;
    pool.schedule(first);   // its spawn fails: no worker exists
    pool.schedule(second);  // retries the spawn, which succeeds
    wg.wait();              // so this returns without join's drain
    EXPECT_EQ(first.runs.load(), 1);
    EXPECT_EQ(second.runs.load(), 1);
    EXPECT_GE(FlakySpawn::started.load(), 1);
}

TEST(SpawnFailureRetry, AllFailingRunsOnTheJoiningThread) {
    FlakySpawn::reset(Failure::all);
    std::vector<Counted> tasks(10);
    Pool pool(zap::Config{.max_threads = 3});
    for (auto& t : tasks) pool.schedule(t);
    for (auto& t : tasks) EXPECT_EQ(t.runs.load(), 0) << "no worker exists to run it yet";
    pool.shutdown();
    pool.join();
    expect_each_ran_once(tasks);
    EXPECT_EQ(FlakySpawn::started.load(), 0);
}

TEST(SpawnFailureRetry, ChildrenBeyondTheRingRunInTheDrain) {
    // No worker: the parent runs in join()'s drain, which works as worker 0,
    // so its children go into worker 0's ring, and those beyond the ring's
    // 256 slots into worker 0's overflow queue. The drain must take both.
    FlakySpawn::reset(Failure::all);
    struct Parent : Task {
        std::vector<Counted>* children = nullptr;
        Pool* pool = nullptr;
        Parent() : Task(&run) {}
        static void run(Task* t) {
            auto* self = static_cast<Parent*>(t);
            for (auto& child : *self->children) self->pool->schedule(child);
        }
    };
    std::vector<Counted> children(1000);
    Parent parent;
    parent.children = &children;
    {
        Pool pool(zap::Config{.max_threads = 1});
        parent.pool = &pool;
        pool.schedule(parent);
    }
    expect_each_ran_once(children);
}

TEST(SpawnFailureRetry, AnIdleTaskQueuedInTheDrainRuns) {
    // No worker: the parent runs in join()'s drain, whose schedule_idle()
    // queues on worker 0's slot; the drain runs it at its end.
    FlakySpawn::reset(Failure::all);
    struct Parent : Task {
        Counted* idle = nullptr;
        Pool* pool = nullptr;
        Parent() : Task(&run) {}
        static void run(Task* t) {
            auto* self = static_cast<Parent*>(t);
            self->pool->schedule_idle(*self->idle);
        }
    };
    Counted idle;
    Parent parent;
    parent.idle = &idle;
    {
        Pool pool(zap::Config{.max_threads = 1});
        parent.pool = &pool;
        pool.schedule(parent);
    }
    EXPECT_EQ(idle.runs.load(), 1);
}

using Fn = BasicCall<FlakySpawn>;

TEST(SpawnFailureRetry, JoinsDrainIsolatesInRegionsOfItsOwn) {
    // No worker. A call from outside isolates and schedules `parent` in its
    // region, whose id comes from the outside callers' count (1, 2, ...). In
    // the drain, `parent` schedules `sibling` (of that region too), then
    // isolates and waits, four times. The drain's regions must have ids of
    // their own (I1: it numbers from max_threads + 1, outside callers from
    // 0), or a wait would run `sibling`, created outside its isolate() call.
    using namespace std::chrono_literals;
    FlakySpawn::reset(Failure::all);
    Pool pool(zap::Config{.max_threads = 1});
    std::atomic<bool> isolated{false};
    std::atomic<int> ran_inside{0};
    Fn sibling([&] {
        if (isolated.load()) ++ran_inside;
    });
    Fn parent([&] {
        pool.schedule(sibling);
        for (int i = 0; i < 4; ++i)  // the drain's first four regions, whatever the outside's numbering
            pool.isolate([&] {
                WaitGroup never_done;
                never_done.add(1);
                isolated = true;
                EXPECT_FALSE(never_done.wait_for(5ms));  // helps: only tasks created inside
                isolated = false;
                never_done.done();
            });
    });
    pool.parallel_for(0, 1, [&](int) { pool.isolate([&] { pool.schedule(parent); }); });
    pool.shutdown();
    pool.join();
    EXPECT_EQ(parent.runs.load(), 1);
    EXPECT_EQ(sibling.runs.load(), 1);
    EXPECT_EQ(ran_inside.load(), 0) << "the drain's isolated wait ran a task created before the call";
}

// With no worker, join()'s drain runs every task on the joining thread, and a
// task that waits helps there. Before the work-conservation look such a wait took any leftover
// task, oldest first, which waited and helped in turn: one stack level per
// queued task (40,000 queued waiting tasks overflowed the stack, 92,484
// frames). The drain now works as worker 0: a task's children go into that
// ring and its wait takes its own newest child first (as on a worker), under
// a depth bound. Each kind of waiting task, 50,000 of them queued.
enum class Waits { parallel_invoke, wait_group, task_group };

struct Waiter : Task {
    Pool* pool = nullptr;
    Waits how = Waits::parallel_invoke;
    std::atomic<int>* children = nullptr;
    Waiter() : Task(&run) {}
    static void run(Task* t) {
        auto* self = static_cast<Waiter*>(t);
        auto child = [c = self->children] { c->fetch_add(1); };
        switch (self->how) {
            case Waits::parallel_invoke:
                self->pool->parallel_invoke(child, child);
                break;
            case Waits::wait_group: {
                Counted leaf;
                WaitGroup group;
                group.add(1);
                leaf.wg = &group;
                self->pool->schedule(leaf);
                group.wait();
                self->children->fetch_add(2 * leaf.runs.load());
                break;
            }
            case Waits::task_group: {
                zap::BasicTaskGroup<FlakySpawn> group(*self->pool);
                group.run(child);
                group.run(child);
                group.wait();
                break;
            }
        }
    }
};

class DrainDepth : public ::testing::TestWithParam<Waits> {};

TEST_P(DrainDepth, QueuedWaitingTasksDoNotPileUpOnTheJoiningThread) {
    FlakySpawn::reset(Failure::all);
    constexpr int queued = 50000;
    std::vector<Waiter> waiters(queued);
    std::atomic<int> children{0};
    {
        Pool pool(zap::Config{.max_threads = 2});
        for (auto& w : waiters) {
            w.pool = &pool;
            w.how = GetParam();
            w.children = &children;
            pool.schedule(w);
        }
    }  // the destructor's join() drains: every waiter runs (and waits) on this thread
    EXPECT_EQ(children.load(), 2 * queued);
    EXPECT_EQ(FlakySpawn::started.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Waits, DrainDepth,
                         ::testing::Values(Waits::parallel_invoke, Waits::wait_group, Waits::task_group));
