// WaitGroup: counts, wakes, helps on workers, and may be destroyed right after wait().
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

TEST(WaitGroup, DoneWithoutWaitersAndWaitOnZero) {
    zap::WaitGroup wg;
    EXPECT_TRUE(wg.is_done());
    wg.add(2);
    EXPECT_FALSE(wg.is_done());
    wg.done();
    wg.done();
    EXPECT_TRUE(wg.is_done());
    wg.wait();
}

TEST(WaitGroup, WaitReturnsAfterEveryDone) {
    for (int round = 0; round < 200; ++round) {
        zap::WaitGroup wg;
        constexpr int n = 4;
        std::atomic<int> finished{0};
        wg.add(n);
        std::vector<std::thread> threads;
        for (int i = 0; i < n; ++i) threads.emplace_back([&] {
            finished++;
            wg.done();
        });
        wg.wait();
        EXPECT_EQ(finished.load(), n);
        for (auto& t : threads) t.join();
    }
}

TEST(WaitGroup, DestroyedRightAfterWait) {
    // The waiter frees the group as soon as wait() returns; under ASan a done()
    // touching it afterwards is a use-after-free (W1).
    for (int round = 0; round < 500; ++round) {
        auto wg = std::make_unique<zap::WaitGroup>();
        wg->add(1);
        std::thread t([raw = wg.get()] { raw->done(); });
        wg->wait();
        wg.reset();
        t.join();
    }
}

namespace {
struct Job : zap::Task {
    zap::WaitGroup* wg;
    std::atomic<int>* ran;
    Job() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Job*>(t);
        self->ran->fetch_add(1);
        self->wg->done();
    }
};

// A task that schedules children on its own pool and waits for them.
struct Parent : zap::Task {
    zap::ThreadPool* pool;
    std::atomic<int>* ran;
    Parent() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Parent*>(t);
        zap::WaitGroup wg;
        std::vector<Job> jobs(16);
        wg.add(static_cast<std::uint32_t>(jobs.size()));
        zap::Batch batch;
        for (auto& j : jobs) {
            j.wg = &wg;
            j.ran = self->ran;
            batch.push(j);
        }
        self->pool->schedule(std::move(batch));
        wg.wait();  // helps: with one worker, nobody else could run the jobs
        self->ran->fetch_add(1);
    }
};
}  // namespace

TEST(WaitGroup, WaitOnAWorkerRunsPoolTasks) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    std::atomic<int> ran{0};
    Parent parent;
    parent.pool = &pool;
    parent.ran = &ran;
    pool.schedule(parent);
    pool.shutdown();
    pool.join();
    EXPECT_EQ(ran.load(), 17);
}
