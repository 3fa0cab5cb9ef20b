// SPDX-License-Identifier: MIT
// TaskGroup::cancel(), is_canceled(), stop_token(): children not started
// when cancel() is called never run (their callables are destroyed uncalled)
// and count as done; running ones see the stop request; wait() resets the
// group; misuse (cancel of a finished group, twice, from a child, with
// exceptions, in the destructor); tokens asked for from many children while
// cancel() races them; and the stop_source is made only when asked for.
#include "counting_new.hpp"
#include "sentinel.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

namespace {

zap::Config threads(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

void spin_until(const std::atomic<bool>& flag) {
    while (!flag.load()) std::this_thread::yield();
}

}  // namespace

TEST(TaskGroupCancel, ChildrenQueuedBehindTheCancelerNeverRun) {
    // One worker: child A runs, the owner queues 100 more behind it, A
    // cancels. Each of the 100 starts after the cancel on the same thread:
    // all are skipped, and each one's callable is destroyed uncalled.
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    std::atomic<bool> a_started{false}, all_queued{false};
    std::atomic<int> ran{0};
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    group.run([&] {
        a_started = true;
        spin_until(all_queued);
        group.cancel();
    });
    spin_until(a_started);
    for (int i = 0; i < 100; ++i) group.run([&ran, s = Sentinel(destroyed)] { ran++; });
    all_queued = true;
    group.wait();
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(destroyed->load(), 100) << "every skipped callable destroyed, by the time wait() returned";
    EXPECT_FALSE(group.is_canceled()) << "wait() resets the group";
    group.run([&] { ran++; });
    group.wait();
    EXPECT_EQ(ran.load(), 1) << "the next round runs its children";
}

TEST(TaskGroupCancel, RunningChildrenSeeTheStopRequestAndFinish) {
    for (std::uint32_t n : {1u, 2u, 4u}) {
        zap::ThreadPool pool(threads(n));
        zap::TaskGroup group(pool);
        const std::stop_token before = group.stop_token();  // asked for before the cancel
        EXPECT_TRUE(before.stop_possible());
        EXPECT_FALSE(before.stop_requested());
        std::atomic<bool> started{false};
        std::atomic<int> saw_stop{0};
        group.run([&] {
            const std::stop_token mine = group.stop_token();  // asked for by the child
            started = true;
            while (!mine.stop_requested()) std::this_thread::yield();
            if (group.is_canceled()) saw_stop++;
        });
        spin_until(started);
        group.cancel();
        EXPECT_TRUE(group.is_canceled());
        EXPECT_TRUE(before.stop_requested());
        EXPECT_TRUE(group.stop_token().stop_requested()) << "a token asked for after the cancel is stopped too";
        group.wait();
        EXPECT_EQ(saw_stop.load(), 1) << n << " threads: the running child was not interrupted; it saw the request";
        EXPECT_TRUE(before.stop_requested()) << "an old round's token stays stopped";
        EXPECT_FALSE(group.is_canceled());
        EXPECT_FALSE(group.stop_token().stop_requested()) << "a new round, a new stop_source";
    }
}

TEST(TaskGroupCancel, CancelOfAFinishedGroupCancelsTheNextChildrenUntilWait) {
    zap::ThreadPool pool(threads(2));
    zap::TaskGroup group(pool);
    std::atomic<int> ran{0};
    for (int i = 0; i < 10; ++i) group.run([&] { ran++; });
    group.wait();
    ASSERT_EQ(ran.load(), 10);
    group.cancel();  // nothing left to skip: harmless
    group.cancel();  // twice: the same
    EXPECT_TRUE(group.is_canceled());
    group.run([&] { ran++; });  // still canceled: never runs
    EXPECT_NO_THROW(group.wait());
    EXPECT_EQ(ran.load(), 10);
    EXPECT_FALSE(group.is_canceled());
    group.run([&] { ran++; });
    group.wait();
    EXPECT_EQ(ran.load(), 11);
}

TEST(TaskGroupCancel, ExceptionsStillReachWaitAndTheGroupIsReset) {
    // A child that cancels and then throws: the exception is rethrown
    // whatever was skipped, and the group is reset all the same.
    for (std::uint32_t n : {1u, 2u}) {
        zap::ThreadPool pool(threads(n));
        zap::TaskGroup group(pool);
        std::atomic<int> ran{0};
        group.run([&] {
            group.cancel();
            throw std::runtime_error("after canceling");
        });
        for (int i = 0; i < 50; ++i) group.run([&] { ran++; });
        EXPECT_THROW(group.wait(), std::runtime_error) << n << " threads";
        EXPECT_LE(ran.load(), 50);
        EXPECT_FALSE(group.is_canceled()) << "reset even when wait() throws";
        group.run([&] { ran++; });
        EXPECT_NO_THROW(group.wait());
    }
}

TEST(TaskGroupCancel, AChildCancelingItsOwnGroupSkipsWhatItRunsNext) {
    zap::ThreadPool pool(threads(2));
    zap::TaskGroup group(pool);
    std::atomic<int> grandchildren{0};
    group.run([&] {
        group.cancel();
        for (int i = 0; i < 10; ++i) group.run([&] { grandchildren++; });
    });
    group.wait();
    EXPECT_EQ(grandchildren.load(), 0);
}

TEST(TaskGroupCancel, DestructorOfACanceledGroupWaitsForItsChildren) {
    zap::ThreadPool pool(threads(2));
    std::atomic<int> ran{0}, finished{0};
    std::atomic<bool> canceled{false};
    {
        zap::TaskGroup group(pool);
        std::atomic<bool> started{false};
        group.run([&] {
            started = true;
            spin_until(canceled);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            finished++;
        });
        for (int i = 0; i < 100; ++i) group.run([&] { ran++; });
        spin_until(started);
        group.cancel();
        canceled = true;
    }
    EXPECT_EQ(finished.load(), 1) << "the running child ended before the group did";
    EXPECT_LE(ran.load(), 100);
}

TEST(TaskGroupCancel, TokensFromManyChildrenRacingCancelAreAllStopped) {
    // The stop_source is made by whichever child asks first (Protocol C,
    // C3), while another child cancels: every token handed out is stopped.
    for (int round = 0; round < 50; ++round) {
        zap::ThreadPool pool(threads(4));
        zap::TaskGroup group(pool);
        std::vector<std::stop_token> tokens(8);
        std::atomic<bool> go{false};
        for (auto& token : tokens) group.run([&] {
            spin_until(go);
            token = group.stop_token();
        });
        group.run([&] {
            spin_until(go);
            group.cancel();
        });
        go = true;
        group.wait();
        for (const auto& token : tokens) {
            if (!token.stop_possible()) continue;  // skipped: started after the cancel
            ASSERT_TRUE(token.stop_requested()) << "round " << round;
        }
    }
}

TEST(TaskGroupCancel, TheStopSourceIsMadeOnlyWhenAskedFor) {
    // std::stop_source allocates its shared state; a group that never hands
    // out a token must not pay for one (a TaskGroup per fork is common).
    if (!ZAP_TEST_COUNTS_NEW) GTEST_SKIP() << "ThreadSanitizer owns operator new; counted in the other builds";
    zap::ThreadPool pool(threads(1));
    pool.warm(1);
    long before = heap_allocations.load();
    {
        zap::TaskGroup group(pool);
        group.cancel();
        EXPECT_TRUE(group.is_canceled());
        group.wait();
    }
    EXPECT_EQ(heap_allocations.load() - before, 0) << "construct, cancel, wait: no allocation";
    zap::TaskGroup group(pool);
    before = heap_allocations.load();
    const std::stop_token first = group.stop_token();
    const std::stop_token again = group.stop_token();
    EXPECT_EQ(heap_allocations.load() - before, 1) << "one stop_source per round, made at the first request";
    EXPECT_TRUE(first == again);
}
