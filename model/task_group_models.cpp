// SPDX-License-Identifier: MIT
// model/task_group_models.cpp - Relacy models of TaskGroup's cancellation
// (Protocol C, src/zap/cancellation.hpp, and steps 6-7 of task_group.hpp):
// the real BasicTaskGroup on the Relacy platform, its children real heap
// tasks on a real pool.
//
//   cancel_skips        max_threads 1, the owner outside the pool: child A
//                       cancels, child B may run before A (then it runs) or
//                       after A on A's thread (then it must be skipped: CS3),
//                       or beside A (the owner runs its group's children
//                       while it waits, outside_wait.hpp OC8, so two threads
//                       run them), and A's own run() after its cancel
//                       schedules nothing. The owner's
//                       wait() returns exactly once, the group is reset, and a
//                       new child runs. A late touch of the freed group, a
//                       lost wake-up or a miscounted child fails it.
//   cancel_wakes_waiter max_threads 2: the same children on two workers, the
//                       owner asleep in wait() outside the pool while skipped
//                       children are the last to count done (spurious
//                       wake-ups off: a lost wake-up is a deadlock).
//   cancel_token        no worker: two threads ask for stop_token() while a
//                       third cancels. Whoever makes the stop_source, and
//                       whatever comes first, every token is stopped at the
//                       end (CS1), and the source is whole when used (CS2: a
//                       data race on its address otherwise).
//   cancel_publishes    a thread writes, then cancels; another that sees
//                       is_canceled() reads what was written (CS4).
//   cancel_loop         max_threads 1: a child taking the group's token runs
//                       parallel_for over 4 indices, one per piece; the
//                       body of index 1 cancels. A piece that starts after
//                       the cancel on the canceling thread may not run (C7,
//                       CS5; the worker and the owner, which runs its
//                       group's children while it waits, OC8, share them), the token is stopped, the skipped upper
//                       halves still count done (the owner's wait() returns),
//                       and a loop of the next round runs every index.
//   cancel_loop_two     max_threads 2: the same loop split over two workers
//                       while a second child cancels: each index runs at
//                       most once, the pieces that run race nothing, every
//                       frame's wait returns (spurious wake-ups off: a lost
//                       wake-up is a deadlock), and after the reset the next
//                       round's loop runs every index (CS5: no stale cancel).
#include "model_registry.hpp"

#include <zap/task_group.hpp>

#include <stop_token>

namespace {

using namespace zap_model;
using TaskGroup = zap::BasicTaskGroup<P>;

// cancel_skips / cancel_wakes_waiter: A cancels (and tries to run a child
// afterwards), B must not run after A's cancel on the same thread; a third
// child of the next round runs.
template <std::uint32_t Workers>
struct CancelSkips : Model<CancelSkips<Workers>, 1, Workers> {
    rl::var<int> a_canceled{0};  // A's note, made after its cancel()
    rl::atomic<int> a_thread{-1};  // timing only: the thread A ran on
    rl::var<int> b_ran{0};
    rl::var<int> next_ran{0};

    void thread(unsigned) {
        Pool* pool = new Pool(model_config(Workers));
        auto* group = new TaskGroup(*pool);
        group->run([this, group] {
            group->cancel();
            a_thread($).store(static_cast<int>(rl::thread_index()), rl::mo_relaxed);
            a_canceled($).store(1);
            group->run([] { RL_ASSERT(!"a child run() after cancel() was scheduled"); });
        });
        group->run([this] {
            // B after A on A's thread means B started after the cancel
            // (CS3). On another thread (the second worker, or the owner,
            // which runs its group's children while it waits: OC8) B may run
            // beside A.
            if (a_thread($).load(rl::mo_relaxed) == static_cast<int>(rl::thread_index()))
                RL_ASSERT(a_canceled($).load() == 0);
            b_ran($).store(1);
        });
        group->wait();
        RL_ASSERT(!group->is_canceled());  // C5: the next round starts uncanceled
        group->run([this] { next_ran($).store(1); });
        group->wait();
        RL_ASSERT(a_canceled($).load() == 1);  // A ran (it was never skipped: nothing came before it)
        RL_ASSERT(next_ran($).load() == 1);
        delete group;
        delete pool;
    }
};

using CancelSkips1 = CancelSkips<1>;
using CancelSkips2 = CancelSkips<2>;

// cancel_token: T0 and T1 ask for a token, T2 cancels; checked after all three.
struct CancelToken : Model<CancelToken, 3> {
    Pool* pool = nullptr;
    TaskGroup* group = nullptr;
    std::stop_token tokens[2];

    void before() {
        Model::before();
        pool = new Pool(model_config(1));
        group = new TaskGroup(*pool);
    }
    void thread(unsigned index) {
        if (index < 2) {
            tokens[index] = group->stop_token();
        } else {
            group->cancel();
        }
    }
    void after() {
        for (auto& token : tokens) RL_ASSERT(token.stop_requested());  // CS1
        for (auto& token : tokens) token = std::stop_token();  // the source's last owners go before the group
        delete group;
        delete pool;
    }
};

// cancel_publishes: T0 writes, then cancels; T1 reads once it sees the cancel.
struct CancelPublishes : Model<CancelPublishes, 2> {
    Pool* pool = nullptr;
    TaskGroup* group = nullptr;
    rl::var<int> data{0};

    void before() {
        Model::before();
        pool = new Pool(model_config(1));
        group = new TaskGroup(*pool);
    }
    void thread(unsigned index) {
        if (index == 0) {
            data($).store(1);
            group->cancel();
        } else if (group->is_canceled()) {
            RL_ASSERT(data($).load() == 1);  // CS4
        }
    }
    void after() {
        delete group;
        delete pool;
    }
};

// cancel_loop / cancel_loop_two: a canceled group's loop starts no new piece.
template <std::uint32_t Workers>
struct CancelLoop : Model<CancelLoop<Workers>, 1, Workers> {
    static constexpr int n = 4;
    rl::var<int> ran[n];
    rl::var<int> next_ran[2];
    rl::atomic<int> canceler{-1};  // timing only: the thread index 1's cancel ran on

    void thread(unsigned) {
        for (auto& r : ran) r($).store(0);
        for (auto& r : next_ran) r($).store(0);
        Pool* pool = new Pool(model_config(Workers));
        auto* group = new TaskGroup(*pool);
        group->run([this, pool, group](std::stop_token token) {
            pool->parallel_for(0, n, [this, group](int i) {
                RL_ASSERT(ran[i]($).load() == 0);  // each index at most once
                ran[i]($).store(1);
                // A piece started on the canceling thread after the cancel
                // (CS5). Even with one worker, two threads run the pieces:
                // the owner runs its group's children while it waits (OC8).
                RL_ASSERT(canceler($).load(rl::mo_relaxed) != static_cast<int>(rl::thread_index()));
                if (i == 1) {
                    group->cancel();
                    canceler($).store(static_cast<int>(rl::thread_index()), rl::mo_relaxed);
                }
            }, zap::Grain{1});
            if (Workers == 1) RL_ASSERT(token.stop_requested());  // the group's token (step 9)
        });
        if (Workers > 1) group->run([group] { group->cancel(); });
        group->wait();
        RL_ASSERT(!group->is_canceled());  // C5
        if (Workers == 1) RL_ASSERT(ran[1]($).load() == 1);
        group->run([this, pool] {
            pool->parallel_for(0, 2, [this](int i) { next_ran[i]($).store(1); }, zap::Grain{1});
        });
        group->wait();
        for (auto& r : next_ran) RL_ASSERT(r($).load() == 1);  // a new round: nothing skipped
        delete group;
        delete pool;
    }
};

using CancelLoop1 = CancelLoop<1>;
using CancelLoop2 = CancelLoop<2>;

}  // namespace

ZAP_MODEL_TEST(cancel_skips, CancelSkips1, false, P::SpawnFailure::never,
               "max_threads 1: a child started after cancel() is skipped, run() after it schedules nothing, wait() resets");
ZAP_MODEL_TEST(cancel_wakes_waiter, CancelSkips2, false, P::SpawnFailure::never,
               "max_threads 2: skipped children count done and wake the owner's wait(); the group is reset and reused");
ZAP_MODEL_TEST(cancel_token, CancelToken, true, P::SpawnFailure::never,
               "two stop_token() callers race cancel(): the stop_source is made once, whole, and every token is stopped");
ZAP_MODEL_TEST(cancel_publishes, CancelPublishes, true, P::SpawnFailure::never,
               "what a thread wrote before cancel() is visible to a thread that sees is_canceled()");
ZAP_MODEL_TEST(cancel_loop, CancelLoop1, false, P::SpawnFailure::never,
               "max_threads 1: a canceled group's parallel_for starts no piece after the cancel; wait() returns, resets");
ZAP_MODEL_TEST(cancel_loop_two, CancelLoop2, false, P::SpawnFailure::never,
               "max_threads 2: a loop canceled by a sibling: each index at most once, every wait returns, next round whole");
