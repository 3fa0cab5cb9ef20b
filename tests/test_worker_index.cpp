// SPDX-License-Identifier: MIT
// ThreadPool::worker_index(): 0 .. max_threads-1 on the pool's own workers
// (hooks included), one index per worker and always the same one, nullopt
// everywhere else: outside threads, another pool's workers, join()'s
// draining thread, a worker's thread once the worker has left. And what it
// is for: per-worker scratch without atomics (ThreadSanitizer checks that no
// two workers ever share an index while they run).
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

// The production platform whose thread spawns always fail: every task runs
// in join()'s drain, on the joining thread.
struct NoThreads : zap::StdPlatform {
    static bool spawn(const zap::ThreadOptions&, void* (*)(void*), void*) noexcept { return false; }
};

// What a thread_local's destructor on a worker's thread sees: it runs when
// the thread ends, after the worker has left its pool (armed by a task).
std::atomic<zap::ThreadPool*> leaving_pool{nullptr};
std::atomic<int> seen_at_thread_end{-2};  // -2: never ran; -1: nullopt
struct AtThreadEnd {
    bool armed = false;
    ~AtThreadEnd() {
        if (!armed) return;
        const std::optional<std::uint32_t> index = leaving_pool.load()->worker_index();
        seen_at_thread_end.store(index ? static_cast<int>(*index) : -1);
    }
};
thread_local AtThreadEnd at_thread_end;

}  // namespace

TEST(WorkerIndex, NulloptOutsideThePool) {
    zap::ThreadPool pool(threads(2));
    EXPECT_EQ(pool.worker_index(), std::nullopt);
    pool.warm(2);
    EXPECT_EQ(pool.worker_index(), std::nullopt) << "workers exist, but this thread is not one";
}

TEST(WorkerIndex, EachWorkerKeepsItsOwnIndex) {
    // Each worker notes its index and thread at start (on_thread_start);
    // every task then sees the index noted for the thread it runs on.
    constexpr std::uint32_t k = 4;
    std::mutex mutex;
    std::map<std::thread::id, std::uint32_t> index_of;
    zap::ThreadPool* self = nullptr;
    zap::Config config = threads(k);
    config.on_thread_start = [&] {
        std::lock_guard lock(mutex);
        index_of[std::this_thread::get_id()] = self->worker_index().value();
    };
    std::atomic<int> mismatches{0}, checked{0};
    {
        zap::ThreadPool pool(config);
        self = &pool;
        pool.warm(k);
        // From a task: every piece runs on a worker. (Called from outside,
        // the caller runs pieces itself while it waits, outside_wait.hpp, and
        // with pieces this short it may run them all before a worker wakes.)
        pool.submit([&] {
            pool.parallel_for(0, 20'000, [&](int) {
                const std::uint32_t index = pool.worker_index().value();
                std::lock_guard lock(mutex);
                if (index_of.at(std::this_thread::get_id()) != index) mismatches++;
                checked++;
            }, zap::Grain{16});
        }).get();
    }  // every worker has started (and exited) by now
    EXPECT_GT(checked.load(), 0);
    EXPECT_EQ(mismatches.load(), 0);
    std::set<std::uint32_t> indices;
    for (const auto& [thread, index] : index_of) indices.insert(index);
    EXPECT_EQ(indices, (std::set<std::uint32_t>{0, 1, 2, 3})) << "four workers, four indices, 0 to 3";
}

TEST(WorkerIndex, KnownInsideTheThreadHooks) {
    std::mutex mutex;
    std::vector<std::optional<std::uint32_t>> at_start, at_exit;
    zap::ThreadPool* self = nullptr;
    {
        zap::Config config = threads(3);
        config.on_thread_start = [&] {
            std::lock_guard lock(mutex);
            at_start.push_back(self->worker_index());
        };
        config.on_thread_exit = [&] {
            std::lock_guard lock(mutex);
            at_exit.push_back(self->worker_index());
        };
        zap::ThreadPool pool(config);
        self = &pool;
        pool.warm(3);
    }
    ASSERT_EQ(at_start.size(), 3u);
    ASSERT_EQ(at_exit.size(), 3u);
    std::set<std::uint32_t> starts, exits;
    for (auto& i : at_start) {
        ASSERT_TRUE(i.has_value());
        starts.insert(*i);
    }
    for (auto& i : at_exit) {
        ASSERT_TRUE(i.has_value());
        exits.insert(*i);
    }
    EXPECT_EQ(starts, (std::set<std::uint32_t>{0, 1, 2}));
    EXPECT_EQ(exits, starts);
}

TEST(WorkerIndex, NulloptOnceTheWorkerHasLeft) {
    // After on_thread_exit the thread is no worker of the pool any more: a
    // thread_local destroyed at the thread's end sees nullopt, not the index
    // it had (join() joins the thread, so the pool is still there for it).
    {
        zap::ThreadPool pool(threads(1));
        leaving_pool.store(&pool);
        pool.submit([] { at_thread_end.armed = true; }).get();
    }
    EXPECT_EQ(seen_at_thread_end.load(), -1) << "-2: the destructor never ran; 0: the worker still answered";
}

TEST(WorkerIndex, NulloptOnAnotherPoolsWorker) {
    zap::ThreadPool a(threads(1));
    zap::ThreadPool b(threads(1));
    const auto [mine, theirs] =
        a.submit([&] { return std::pair{a.worker_index(), b.worker_index()}; }).get();
    EXPECT_EQ(mine, std::optional<std::uint32_t>{0});
    EXPECT_EQ(theirs, std::nullopt);
}

TEST(WorkerIndex, NulloptInJoinsDrain) {
    // No worker ever starts: join() runs the task on this thread, which is not a worker.
    zap::BasicThreadPool<NoThreads> pool(threads(2));
    std::optional<std::uint32_t> seen = 99;
    bool ran = false;
    struct Probe : zap::BasicTask<NoThreads> {
        zap::BasicThreadPool<NoThreads>* pool;
        std::optional<std::uint32_t>* seen;
        bool* ran;
        Probe() : zap::BasicTask<NoThreads>(&run) {}
        static void run(zap::BasicTask<NoThreads>* t) {
            auto* self = static_cast<Probe*>(t);
            *self->seen = self->pool->worker_index();
            *self->ran = true;
        }
    } probe;
    probe.pool = &pool;
    probe.seen = &seen;
    probe.ran = &ran;
    pool.schedule(probe);
    pool.shutdown();
    pool.join();
    ASSERT_TRUE(ran);
    EXPECT_EQ(seen, std::nullopt);
}

TEST(WorkerIndex, PerWorkerScratchNeedsNoAtomics) {
    // The use it exists for: each worker adds into its own slot, plainly.
    // Two workers sharing an index while running would be a data race
    // (ThreadSanitizer) and, often, a lost update (the sum below).
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        struct alignas(64) Slot {
            std::uint64_t sum = 0;
        };
        std::vector<Slot> scratch(n);
        std::uint64_t outside = 0;  // the calling thread's own pieces
        pool.parallel_for(0, 200'000, [&](int i) {
            if (const auto index = pool.worker_index()) {
                scratch[*index].sum += static_cast<std::uint64_t>(i);
            } else {
                outside += static_cast<std::uint64_t>(i);
            }
        }, zap::Grain{64});
        std::uint64_t total = outside;
        for (const Slot& s : scratch) total += s.sum;
        EXPECT_EQ(total, 199'999ull * 200'000 / 2) << n << " threads";
    }
}
