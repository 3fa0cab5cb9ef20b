// SPDX-License-Identifier: MIT
// TaskGroup::cancel(), is_canceled(), stop_token(): children not started
// when cancel() is called never run (their callables are destroyed uncalled)
// and count as done; running ones see the stop request; wait() resets the
// group; misuse (cancel of a finished group, twice, from a child, with
// exceptions, in the destructor); tokens asked for from many children while
// cancel() races them; and the stop_source is made only when asked for.
#include "counting_new.hpp"
#include "held_worker.hpp"
#include "sentinel.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
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
    // cancels. Each of the 100 starts after the cancel: on the worker, after
    // A on the same thread; on the owner, which runs its group's children
    // while it waits (outside_wait.hpp OC8), once it has seen the cancel. All
    // are skipped, and each one's callable is destroyed uncalled.
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    std::atomic<bool> a_started{false}, all_queued{false}, canceled{false};
    std::atomic<int> ran{0};
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    group.run([&] {
        a_started = true;
        spin_until(all_queued);
        group.cancel();
        canceled = true;
    });
    spin_until(a_started);
    for (int i = 0; i < 100; ++i) group.run([&ran, s = Sentinel(destroyed)] { ran++; });
    all_queued = true;
    spin_until(canceled);
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

TEST(TaskGroupCancel, RunOnACanceledGroupSchedulesNothing) {
    // The only worker is held, so a child scheduled now would keep its
    // callable until then; run() on a canceled group keeps nothing: the
    // callable is gone once run() has returned.
    zap_test::HeldWorker held;
    zap::ThreadPool pool(threads(1));
    held.hold(pool, std::chrono::seconds(10));
    zap::TaskGroup group(pool);
    group.cancel();
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    group.run([sentinel = Sentinel(destroyed)] { ADD_FAILURE() << "a child of a canceled group ran"; });
    EXPECT_EQ(destroyed->load(), 1) << "run() kept the callable: it scheduled a child";
    held.release();
    group.wait();
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

TEST(TaskGroupCancel, WaitFreesACanceledRoundsStopSource) {
    // The round's stop_source lives in the group; wait() ends the round and
    // destroys it, so a group reused for many canceled rounds holds one
    // shared state at most, not one per round.
    if (!ZAP_TEST_COUNTS_NEW) GTEST_SKIP() << "ThreadSanitizer owns operator new; counted in the other builds";
    zap::ThreadPool pool(threads(1));
    pool.warm(1);
    zap::TaskGroup group(pool);
    const long allocated = heap_allocations.load();
    const long freed = heap_frees.load();
    for (int round = 0; round < 10; ++round) {
        EXPECT_FALSE(group.stop_token().stop_requested());  // makes the round's source
        group.cancel();
        group.wait();
    }
    EXPECT_EQ(heap_allocations.load() - allocated, 10);
    EXPECT_EQ(heap_frees.load() - freed, 10) << "each canceled round's stop_source freed by its wait()";
}

// ---- run(f) with f(std::stop_token); a canceled group's loops ----

TEST(TaskGroupToken, AChildTakingATokenGetsTheGroupsAndSeesALaterCancel) {
    zap::ThreadPool pool(threads(2));
    zap::TaskGroup group(pool);
    std::atomic<bool> started{false}, saw_stop{false};
    std::stop_token seen;
    group.run([&](std::stop_token token) {
        seen = token;
        started = true;
        while (!token.stop_requested()) std::this_thread::yield();  // ends only through the cancel below
        saw_stop = true;
    });
    spin_until(started);
    EXPECT_FALSE(seen.stop_requested());
    group.cancel();
    group.wait();
    EXPECT_TRUE(saw_stop.load());
    EXPECT_TRUE(seen.stop_requested());

    // After the wait() that ended the canceled round: the new round's fresh token.
    std::stop_token next;
    group.run([&](std::stop_token token) { next = token; });
    group.wait();
    EXPECT_FALSE(next.stop_requested());
    EXPECT_TRUE(seen.stop_requested()) << "the old round's token stays stopped";
    std::stop_token from_group = group.stop_token();
    group.run([&](std::stop_token token) { next = token; });
    group.wait();
    group.cancel();
    EXPECT_TRUE(next.stop_requested()) << "a child's token is the group's stop_token() of its round";
    EXPECT_TRUE(from_group.stop_requested());
    group.wait();
}

TEST(TaskGroupToken, ACallableTakingNothingStillRunsAndATokenChildIsSkippedWhenCanceled) {
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    std::atomic<int> ran{0};
    group.run([&] { ran++; });
    group.run([&](std::stop_token) { ran++; });
    group.wait();
    EXPECT_EQ(ran.load(), 2);
    group.cancel();
    group.run([&](std::stop_token) { ran++; });  // a canceled group schedules nothing
    group.wait();
    EXPECT_EQ(ran.load(), 2);
}

namespace {

// Runs, on the pool, a child of a group that runs a loop of 1000 pieces;
// the piece at index 10 cancels the group. The group's owner is a task of
// the pool too (an owner outside the pool would run the group's children,
// and pieces of their loops, while it waits: outside_wait.hpp OC8). On one
// worker the pieces then run one after another on that thread: every piece
// after the canceling one starts after the cancel, so none runs.
template <class Loop>
int indices_run_when_canceled_at_ten(zap::ThreadPool& pool, Loop loop) {
    return pool.submit([&] {
        zap::TaskGroup group(pool);
        std::atomic<int> calls{0};
        group.run([&] {
            loop([&](int i) {
                calls++;
                if (i == 10) group.cancel();
            });
        });
        group.wait();
        return calls.load();
    }).get();
}

}  // namespace

TEST(TaskGroupLoops, ACanceledGroupsParallelForStartsNoNewPiece) {
    zap::ThreadPool pool(threads(1));
    const int calls = indices_run_when_canceled_at_ten(pool, [&](auto body) {
        pool.parallel_for(0, 1000, body, zap::Grain{1});
    });
    EXPECT_EQ(calls, 11) << "the pieces before the cancel and the canceling one, no other";
    // for_each, and a loop nested in a piece: the piece runs in the group.
    std::vector<int> rows(100);
    const int nested = indices_run_when_canceled_at_ten(pool, [&](auto body) {
        pool.for_each(rows, [&](int&, std::size_t r) {
            pool.parallel_for(0, 10, [&](int c) { body(static_cast<int>(r) * 10 + c); }, zap::Grain{1});
        }, zap::Grain{1});
    });
    EXPECT_EQ(nested, 11) << "row 0, then row 1's first column: a nested loop went on after the cancel";
}

TEST(TaskGroupLoops, ACanceledGroupsReductionReturnsTheIdentity) {
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    std::atomic<int> calls{0};
    long result = -1, transformed = -1;
    std::vector<int> v(1000, 1);
    group.run([&] {
        result = pool.parallel_reduce(0, 100000, 7L, [&](int i) {
            calls++;
            if (i == 10) group.cancel();
            return 1L;
        }, std::plus<>{});
        transformed = pool.transform_reduce(v, 5L, std::plus<>{}, [](int x) { return long{x}; });
    });
    group.wait();
    EXPECT_EQ(result, 7) << "a canceled reduction returns its identity, never the sum of a part";
    EXPECT_EQ(transformed, 5) << "a reduction started in a canceled group starts nothing: init";
    EXPECT_LT(calls.load(), 100000);
}

TEST(TaskGroupLoops, ATaskAHelpingWaitRunsIsNotPartOfTheWaitersGroup) {
    // The canceled group's child waits (helping) for a task that is no child
    // of it: that task's loop belongs to no group and runs every index.
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    std::atomic<int> calls{0};
    group.run([&] {
        group.cancel();
        zap::WaitGroup done;
        done.add();
        pool.spawn([&] {
            pool.parallel_for(0, 1000, [&](int) { calls++; }, zap::Grain{1});
            done.done();
        });
        done.wait();  // one worker: this wait runs the spawned task
    });
    group.wait();
    EXPECT_EQ(calls.load(), 1000);
}

TEST(TaskGroupLoops, AfterAHelpingWaitTheWaitersLoopsBelongToItsGroupAgain) {
    // A child of `outer` waits, and its wait runs a child of `inner` one help
    // level down; once back, the waiter's loops belong to `outer` again and
    // stop when it is canceled.
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup outer(pool);
    zap::TaskGroup inner(pool);
    std::atomic<int> calls{0};
    outer.run([&] {
        zap::WaitGroup done;
        done.add();
        inner.run([&] { done.done(); });
        done.wait();  // one worker: this wait runs inner's child
        outer.cancel();
        pool.parallel_for(0, 1000, [&](int) { calls++; }, zap::Grain{1});
    });
    outer.wait();
    inner.wait();
    EXPECT_EQ(calls.load(), 0) << "a loop started in a canceled group starts no piece";
}

TEST(TaskGroupLoops, ACanceledLoopEndsWithThePieceOfTheCancel) {
    // One thread and 4 indices: the automatic grain is ceil(4 / (4 x 1)) =
    // 1, so each index is a piece of its own, and a cancel in index 0's
    // call leaves the other three unstarted.
    zap::ThreadPool pool(threads(1));
    zap::TaskGroup group(pool);
    std::atomic<int> calls{0};
    group.run([&] {
        pool.parallel_for(0, 4, [&](int i) {
            calls++;
            if (i == 0) group.cancel();
        });
    });
    group.wait();
    EXPECT_EQ(calls.load(), 1);
}

TEST(TaskGroupLoops, LoopsOutsideAGroupAndAfterTheRoundAreNotCanceled) {
    zap::ThreadPool pool(threads(2));
    zap::TaskGroup group(pool);
    group.run([&] { group.cancel(); });
    group.wait();
    std::atomic<int> calls{0};
    group.run([&] { pool.parallel_for(0, 1000, [&](int) { calls++; }, zap::Grain{1}); });  // a new round
    group.wait();
    EXPECT_EQ(calls.load(), 1000);
    pool.parallel_for(0, 1000, [&](int) { calls++; }, zap::Grain{1});
    EXPECT_EQ(calls.load(), 2000);
}
