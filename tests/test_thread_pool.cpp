// SPDX-License-Identifier: MIT
// The pool end to end, with 1, 2, 4 and 8 workers. A test that hangs
// fails (hang_watchdog.hpp).
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"
#include "os_probe.hpp"
#include "rounds.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

// Counts its own runs, so "exactly once" is checked per task.
struct Counted : zap::Task {
    std::atomic<int> runs{0};
    zap::WaitGroup* wg = nullptr;
    Counted() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Counted*>(t);
        self->runs.fetch_add(1);
        if (self->wg != nullptr) self->wg->done();
    }
};

void expect_each_ran_once(const std::vector<Counted>& tasks) {
    for (std::size_t i = 0; i < tasks.size(); ++i) ASSERT_EQ(tasks[i].runs.load(), 1) << "task " << i;
}

zap::Batch batch_of(std::vector<Counted>& tasks, std::size_t from, std::size_t to, zap::WaitGroup* wg = nullptr) {
    zap::Batch batch;
    for (std::size_t i = from; i < to; ++i) {
        tasks[i].wg = wg;
        batch.push(tasks[i]);
    }
    return batch;
}

// Schedules `fanout` children from inside a task, recursively to `depth`.
struct Tree : zap::Task {
    zap::ThreadPool* pool = nullptr;
    std::atomic<long>* ran = nullptr;
    int depth = 0;
    int fanout = 0;
    std::vector<Tree> children;
    Tree() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Tree*>(t);
        self->ran->fetch_add(1);
        if (self->depth == 0) return;
        self->children.resize(static_cast<std::size_t>(self->fanout));
        zap::Batch batch;
        for (auto& c : self->children) {
            c.pool = self->pool;
            c.ran = self->ran;
            c.depth = self->depth - 1;
            c.fanout = self->fanout;
            batch.push(c);
        }
        self->pool->schedule(std::move(batch));
    }
};

long tree_size(int depth, int fanout) {
    long total = 1, level = 1;
    for (int d = 0; d < depth; ++d) total += (level *= fanout);
    return total;
}

}  // namespace

class Pool : public ::testing::TestWithParam<std::uint32_t> {
protected:
    zap::Config config() const { return zap::Config{.max_threads = GetParam()}; }
};

TEST_P(Pool, MaxThreadsIsTheConfiguredOne) {
    zap::ThreadPool pool(config());
    EXPECT_EQ(pool.max_threads(), GetParam());
}

TEST_P(Pool, SingleTasksFromOutside) {
    std::vector<Counted> tasks(1000);
    zap::WaitGroup wg;
    wg.add(static_cast<std::uint32_t>(tasks.size()));
    zap::ThreadPool pool(config());
    for (auto& t : tasks) {
        t.wg = &wg;
        pool.schedule(t);
    }
    wg.wait();  // runs without join: the workers did it
    expect_each_ran_once(tasks);
}

TEST_P(Pool, BatchesOfManySizes) {
    for (std::size_t size : {1u, 2u, 7u, 255u, 256u, 257u, 1000u, 10000u}) {
        std::vector<Counted> tasks(size);
        zap::WaitGroup wg;
        wg.add(static_cast<std::uint32_t>(size));
        zap::ThreadPool pool(config());
        pool.schedule(batch_of(tasks, 0, size, &wg));
        wg.wait();
        expect_each_ran_once(tasks);
    }
}

TEST_P(Pool, ExternalThreadsScheduleConcurrently) {
    constexpr std::size_t per_thread = 5000;
    std::vector<Counted> tasks(4 * per_thread);
    zap::WaitGroup wg;
    wg.add(static_cast<std::uint32_t>(tasks.size()));
    zap::ThreadPool pool(config());
    std::vector<std::thread> submitters;
    for (std::size_t s = 0; s < 4; ++s)
        submitters.emplace_back([&, s] {
            for (std::size_t i = s * per_thread; i < (s + 1) * per_thread; ++i) {
                tasks[i].wg = &wg;
                pool.schedule(tasks[i]);
            }
        });
    for (auto& t : submitters) t.join();
    wg.wait();
    expect_each_ran_once(tasks);
}

TEST_P(Pool, TasksScheduleTasksAndOverflowTheRing) {
    // Fanout 300 > 256 ring slots: the first level overflows into the queue.
    std::atomic<long> ran{0};
    Tree root;  // outlives the pool, whose destructor runs its children
    {
        zap::ThreadPool pool(config());
        root.pool = &pool;
        root.ran = &ran;
        root.depth = 2;
        root.fanout = 300;
        pool.schedule(root);
    }  // the destructor runs everything, children included
    EXPECT_EQ(ran.load(), tree_size(2, 300));
}

TEST_P(Pool, DeepTreeOfSmallFanout) {
    std::atomic<long> ran{0};
    Tree root;
    {
        zap::ThreadPool pool(config());
        root.pool = &pool;
        root.ran = &ran;
        root.depth = 12;
        root.fanout = 2;
        pool.schedule(root);
    }
    EXPECT_EQ(ran.load(), tree_size(12, 2));
}

TEST_P(Pool, WarmSpawnsUpToTheLimit) {
    std::atomic<int> started{0};
    zap::Config cfg = config();
    cfg.on_thread_start = [&] { started++; };
    zap::ThreadPool pool(cfg);
    pool.warm(1);
    pool.warm(3);  // after some workers exist (the seed spawned none here)
    pool.warm(1000);
    pool.shutdown();
    pool.join();
    EXPECT_EQ(started.load(), static_cast<int>(GetParam()));
}

TEST(Schedule, AnEmptyBatchIsANoOpFromOutsideAndFromATask) {
    // schedule() of an empty Batch returns at once (A1): nothing to push,
    // nobody to wake. One that went on pushed a list with no tail into the
    // global queue (a null dereference) from outside the pool.
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.schedule(zap::Batch{});
    Counted last;
    zap::WaitGroup wg;
    wg.add(1);
    last.wg = &wg;
    struct Scheduler : zap::Task {
        zap::ThreadPool* pool = nullptr;
        Counted* then = nullptr;
        Scheduler() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<Scheduler*>(t);
            self->pool->schedule(zap::Batch{});  // on a worker: into its ring
            self->pool->schedule(*self->then);
        }
    } scheduler;
    scheduler.pool = &pool;
    scheduler.then = &last;
    pool.schedule(scheduler);
    wg.wait();
    EXPECT_EQ(last.runs.load(), 1);
}

TEST(Warm, LeavesSleepingWorkersCountedAndSpawnsNothingBelowTheCountOrAfterShutdown) {
    // warm() only ever raises the spawned count, and only that field of
    // Sync: two workers warmed and asleep (counted idle), then warm(1)
    // (fewer than exist: nothing), warm(3) (one more, the last of three).
    // The sleeping workers must still be woken for work, and by shutdown()
    // for join() (B1 wakes the idle count); a warm() after shutdown() spawns
    // nothing. One that skipped its early return lowered the count and
    // spawned past max_threads. (max_threads is 3 so that the batch cannot
    // spawn a fourth worker when all three are busy.)
    std::atomic<int> started{0};
    zap::Config cfg{.max_threads = 3};
    cfg.on_thread_start = [&] { started++; };
    zap::ThreadPool pool(cfg);
    pool.warm(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both past their spin, asleep
    pool.warm(1);
    pool.warm(3);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<Counted> tasks(64);
    zap::WaitGroup wg;
    wg.add(static_cast<std::uint32_t>(tasks.size()));
    pool.schedule(batch_of(tasks, 0, tasks.size(), &wg));
    wg.wait();
    expect_each_ran_once(tasks);
    pool.shutdown();
    pool.warm(4);
    pool.join();
    EXPECT_EQ(started.load(), 3);
}

TEST(Warm, RaisingTheCountRightBeforeShutdownKeepsTheSleeperCounted) {
    // One worker warmed and asleep (counted idle), then warm(2) and at once
    // shutdown(): the sleeper is woken only because shutdown() sees it
    // counted idle (B1), since the new worker has hardly started. A warm()
    // that rebuilt Sync from nothing instead of from the value it read lost
    // that count, and join() waited for the sleeper (the hang watchdog).
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past its spin, asleep
    pool.warm(2);
    pool.shutdown();
    pool.join();  // the check: it returns (else the hang watchdog fails the test)
}

TEST_P(Pool, ThreadHooksRunOncePerWorker) {
    std::atomic<int> started{0}, exited{0};
    zap::Config cfg = config();
    cfg.on_thread_start = [&] { started++; };
    cfg.on_thread_exit = [&] { exited++; };
    std::vector<Counted> tasks(2000);  // outlives the pool, whose destructor runs them
    {
        zap::ThreadPool pool(cfg);
        pool.schedule(batch_of(tasks, 0, tasks.size()));
    }
    EXPECT_GE(started.load(), 1);
    EXPECT_LE(started.load(), static_cast<int>(GetParam()));
    EXPECT_EQ(exited.load(), started.load());
}

TEST_P(Pool, ShutdownAndJoinDrainEverything) {
    std::vector<Counted> tasks(20000);
    zap::ThreadPool pool(config());
    for (std::size_t i = 0; i < tasks.size(); i += 100) pool.schedule(batch_of(tasks, i, i + 100));
    pool.shutdown();  // at once: most tasks are still queued
    pool.join();
    expect_each_ran_once(tasks);
    pool.shutdown();  // idempotent
    pool.join();
}

TEST_P(Pool, JoinBeforeShutdownWaitsForIt) {
    zap::ThreadPool pool(config());
    std::vector<Counted> tasks(100);
    pool.schedule(batch_of(tasks, 0, tasks.size()));
    std::thread closer([&] { pool.shutdown(); });
    pool.join();
    closer.join();
    expect_each_ran_once(tasks);
}

TEST_P(Pool, JoinBeforeShutdownWithNoWorkerEverSpawned) {
    zap::ThreadPool pool(config());
    std::thread closer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        pool.shutdown();  // the seed never woke the joiner here
    });
    pool.join();
    closer.join();
    SUCCEED();
}

// shutdown() on one thread while another joins and destroys the pool at
// once (P5): the pool may be freed while shutdown() is still returning, so
// shutdown() must be done with it by then. Under ASan (the asan preset) a
// late touch is a heap-use-after-free report. Every other cycle warms the
// workers first, so shutdown() finds them idle and wakes them.
TEST_P(Pool, ShutdownOnOneThreadJoinAndDestroyOnAnother) {
    for (int cycle = 0; cycle < zap_test::rounds(500); ++cycle) {
        auto pool = std::make_unique<zap::ThreadPool>(config());
        if (cycle % 2 == 1) pool->warm(GetParam());
        std::thread closer([p = pool.get()] { p->shutdown(); });
        pool->join();
        pool.reset();
        closer.join();
    }
}

// Several threads join at once: every one returns, and each sees
// every task run (join() returning means the pool is joined).
TEST_P(Pool, ConcurrentJoinsAllReturn) {
    for (int cycle = 0; cycle < 100; ++cycle) {
        zap::ThreadPool pool(config());
        std::vector<Counted> tasks(64);
        pool.schedule(batch_of(tasks, 0, tasks.size()));
        std::atomic<int> saw_all{0};
        std::vector<std::thread> joiners;
        for (int j = 0; j < 3; ++j)
            joiners.emplace_back([&] {
                pool.join();
                int ran = 0;
                for (const auto& t : tasks) ran += t.runs.load(std::memory_order_relaxed);
                if (ran == static_cast<int>(tasks.size())) saw_all.fetch_add(1);
            });
        pool.shutdown();
        for (auto& t : joiners) t.join();
        ASSERT_EQ(saw_all.load(), 3) << "cycle " << cycle;
        expect_each_ran_once(tasks);
    }
}

TEST_P(Pool, ShutdownFromInsideATask) {
    struct Closer : zap::Task {
        zap::ThreadPool* pool;
        Closer() : zap::Task(&run) {}
        static void run(zap::Task* t) { static_cast<Closer*>(t)->pool->shutdown(); }
    };
    zap::ThreadPool pool(config());
    std::vector<Counted> tasks(500);
    Closer closer;
    closer.pool = &pool;
    pool.schedule(batch_of(tasks, 0, tasks.size()));
    pool.schedule(closer);
    pool.join();
    expect_each_ran_once(tasks);
}

TEST_P(Pool, ThousandCreateScheduleDestroyCycles) {
    for (int cycle = 0; cycle < zap_test::rounds(1000); ++cycle) {
        std::vector<Counted> tasks(8);
        {
            zap::ThreadPool pool(config());
            pool.schedule(batch_of(tasks, 0, 4));
            for (std::size_t i = 4; i < 8; ++i) pool.schedule(tasks[i]);
        }
        expect_each_ran_once(tasks);
    }
}

TEST_P(Pool, TaskMayFreeItself) {
    struct Owned : zap::Task {
        std::atomic<int>* ran;
        Owned() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<Owned*>(t);
            self->ran->fetch_add(1);
            delete self;  // the pool never touches a task after calling it
        }
    };
    std::atomic<int> ran{0};
    {
        zap::ThreadPool pool(config());
        for (int i = 0; i < 1000; ++i) {
            auto* t = new Owned;
            t->ran = &ran;
            pool.schedule(*t);
        }
    }
    EXPECT_EQ(ran.load(), 1000);
}

TEST_P(Pool, IdleTasksRunBeforeTheWorkerSleeps) {
    struct Idle : zap::Task {
        std::atomic<int>* ran;
        Idle() : zap::Task(&run) {}
        static void run(zap::Task* t) { static_cast<Idle*>(t)->ran->fetch_add(1); }
    };
    struct Queuer : zap::Task {
        zap::ThreadPool* pool;
        Idle* idle;
        Queuer() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<Queuer*>(t);
            self->pool->schedule_idle(*self->idle);
        }
    };
    std::atomic<int> ran{0};
    Idle idle;
    idle.ran = &ran;
    zap::ThreadPool pool(config());
    Queuer queuer;
    queuer.pool = &pool;
    queuer.idle = &idle;
    pool.schedule(queuer);
    while (ran.load() == 0) std::this_thread::yield();  // the worker runs it before sleeping
    EXPECT_EQ(ran.load(), 1);
}

TEST_P(Pool, TaskOfOnePoolSchedulesOntoAnother) {
    // The seed's thread-local "current worker" ignored which pool it belonged
    // to, so this child went into pool A's ring and ran on A; pool B's join
    // did not wait for it.
    struct Child : zap::Task {
        const void* ran_on = nullptr;  // the pool's core (detail::PoolCore) whose thread ran it
        Child() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* context = zap::detail::Context<zap::StdPlatform>::current();
            static_cast<Child*>(t)->ran_on = context->pool;
        }
    };
    struct Parent : zap::Task {
        zap::ThreadPool* other;
        Child* child;
        Parent() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<Parent*>(t);
            self->other->schedule(*self->child);
        }
    };
    Child child;
    zap::ThreadPool b(config());
    {
        zap::ThreadPool a(config());
        Parent parent;
        parent.other = &b;
        parent.child = &child;
        a.schedule(parent);
    }
    b.shutdown();
    b.join();
    const zap::detail::PoolCore<zap::StdPlatform>& b_core = b;
    EXPECT_EQ(child.ran_on, &b_core);
}

INSTANTIATE_TEST_SUITE_P(Workers, Pool, ::testing::Values(1u, 2u, 4u, 8u));

TEST(PoolConfig, DefaultsAreTheContracts) {
    const zap::Config config;
    EXPECT_EQ(config.max_threads, zap::available_parallelism());
    EXPECT_EQ(config.stack_size, std::size_t{4} << 20);
    EXPECT_EQ(config.name, "zap");
    EXPECT_FALSE(config.on_thread_start);
    EXPECT_FALSE(config.on_thread_exit);
}

#if !defined(__linux__)
// Where zap reads no affinity mask and no CPU quota (everywhere but Linux),
// the threads available are the hardware's (test_available_parallelism.cpp
// holds Linux to its mask and quotas).
TEST(PoolConfig, WithoutAMaskOrAQuotaTheDefaultIsTheHardwaresThreads) {
    EXPECT_EQ(zap::available_parallelism(), std::max(1u, std::thread::hardware_concurrency()));
}
#endif

TEST(PoolConfig, ZeroMaxThreadsMeansTheDefault) {
    zap::ThreadPool pool(zap::Config{.max_threads = 0});
    EXPECT_EQ(pool.max_threads(), zap::available_parallelism());
}

TEST(PoolConfig, HooksBracketEveryTaskOfAWorkerAndWorkersAreNamed) {
    // on_thread_start runs on a worker before its first task, on_thread_exit
    // after its last; workers are named "<name> <n>". (join()'s drain may
    // run leftovers on the joining thread, which has neither hook nor name:
    // those are not checked.)
    static thread_local int phase = 0;  // 0 before start, 1 between the hooks, 2 after exit
    std::atomic<int> out_of_order{0}, started{0}, exited{0};
    std::mutex names_lock;
    std::set<std::string> names;
    zap::Config config;
    config.max_threads = 2;
    config.name = "hooked";
    config.on_thread_start = [&] {
        if (phase != 0) out_of_order++;
        phase = 1;
        started++;
    };
    config.on_thread_exit = [&] {
        if (phase != 1) out_of_order++;
        phase = 2;
        exited++;
    };
    const std::thread::id joiner = std::this_thread::get_id();
    {
        zap::ThreadPool pool(config);
        pool.warm(2);
        for (int i = 0; i < 200; ++i) pool.spawn([&] {
            if (std::this_thread::get_id() == joiner) return;
            if (phase != 1) out_of_order++;
            const std::optional<std::string> name = zap_test::thread_name();
            const std::lock_guard<std::mutex> hold(names_lock);
            names.insert(name.value_or("(the system reports no name)"));
        });
    }
    EXPECT_EQ(out_of_order.load(), 0);
    EXPECT_EQ(started.load(), 2);
    EXPECT_EQ(exited.load(), 2);
    if (!zap_test::platform_names_threads_and_sizes_stacks) GTEST_SKIP() << "hooks checked; names: std::thread has none";
    EXPECT_FALSE(names.empty());
    for (const std::string& name : names) EXPECT_TRUE(name == "hooked 0" || name == "hooked 1") << name;
}

// Not copyable, not movable: a pool's workers point back at it.
static_assert(!std::is_copy_constructible_v<zap::ThreadPool> && !std::is_copy_assignable_v<zap::ThreadPool>);
static_assert(!std::is_move_constructible_v<zap::ThreadPool> && !std::is_move_assignable_v<zap::ThreadPool>);

TEST(PoolConfig, PositionalInitialisationFollowsTheContractsOrder) {
    // Outside programs may write Config{threads, stack, name, start, exit}:
    // members beyond the contract's (max_help_depth) come after its five.
    int started = 0, exited = 0;
    {
        zap::ThreadPool pool(zap::Config{1, 1u << 20, "positional", [&] { ++started; }, [&] { ++exited; }});
        EXPECT_EQ(pool.max_threads(), 1u);
        pool.submit([] {}).get();
    }  // join() orders the hooks' writes before these reads
    EXPECT_EQ(started, 1);
    EXPECT_EQ(exited, 1);
}

TEST(PoolConfig, TooManyThreadsIsRejected) {
    EXPECT_THROW(zap::ThreadPool(zap::Config{.max_threads = 20000}), std::invalid_argument);
    // The limit itself is accepted (the Sync word's 14-bit counters), one more is not.
    EXPECT_EQ(zap::ThreadPool(zap::Config{.max_threads = 16383}).max_threads(), 16383u);
    EXPECT_THROW(zap::ThreadPool(zap::Config{.max_threads = 16384}), std::invalid_argument);
}

TEST(PoolConfig, StackSizeIsUsed) {
    // The worker reads its own stack size; the seed spawned every worker with
    // its 4 MiB default whatever was configured.
    if (!zap_test::platform_names_threads_and_sizes_stacks) GTEST_SKIP() << "std::thread cannot size a stack";
    if (!zap_test::stack_size()) GTEST_SKIP() << "this system reports no stack size";
    struct StackProbe : zap::Task {
        std::size_t bytes = 0;
        zap::WaitGroup* wg;
        StackProbe() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<StackProbe*>(t);
            self->bytes = zap_test::stack_size().value_or(0);
            self->wg->done();
        }
    };
    zap::WaitGroup wg;
    wg.add();
    StackProbe probe;
    probe.wg = &wg;
    zap::ThreadPool pool(zap::Config{.max_threads = 1, .stack_size = 64u << 20});
    pool.schedule(probe);
    wg.wait();  // run by the worker, not by a drain on this thread
    EXPECT_GE(probe.bytes, std::size_t{64} << 20);
    EXPECT_LT(probe.bytes, std::size_t{65} << 20);
}

TEST(ThreadPoolConstructor, TakesAThreadCountAsConfigDoes) {
    zap::ThreadPool three(3);  // as zap::Config{.max_threads = 3}
    EXPECT_EQ(three.max_threads(), 3u);
    zap::ThreadPool defaulted(0);  // 0: the default
    EXPECT_EQ(defaulted.max_threads(), zap::ThreadPool(zap::Config{}).max_threads());
    EXPECT_THROW(zap::ThreadPool(16384), std::invalid_argument);  // the Sync word's limit, as for Config
    static_assert(!std::is_convertible_v<std::uint32_t, zap::ThreadPool>, "explicit, as ThreadPool(Config) is");
    std::atomic<int> ran{0};
    three.parallel_for(0, 300, [&](int) { ran++; });
    EXPECT_EQ(ran.load(), 300);
}
