// SPDX-License-Identifier: MIT
// model/take_back_models.cpp - Relacy models of the ring's take-back
// (buffer.hpp steps 5 and 6) and of parallel_invoke's fork/join
// (parallel_invoke.hpp J1-J7). Built into its own binary, zap_model_take_back, with a ring of four
// slots (ZAP_MODEL_RING) so that a steal can take two tasks: the case RB4 of
// buffer.hpp is about. model/take_back.cmake registers the tests.
#include "model_registry.hpp"

#include <utility>

namespace {

using namespace zap_model;

static_assert(P::ring_capacity == 4, "these models need a ring of four (ZAP_MODEL_RING=4)");

// Starts the ring's indices one below the 2^64 wrap: the three pushes below
// cross both the integer wrap and the ring's slot wrap (index % 4).
constexpr Buffer::Index near_wrap = ~Buffer::Index{0};

// Pushes tasks one by one, as parallel_invoke does.
void push_each(Buffer& ring, Counted* tasks, int n) {
    for (int i = 0; i < n; ++i) {
        List list = one(tasks[i]);
        RL_ASSERT(ring.push(list));
    }
}

// A thief with its own ring: one steal, then it runs what it got.
void steal_and_run(Buffer& mine, Buffer& victim) {
    Buffer::Stole got{};
    if (!mine.steal(victim, got)) return;
    run(got.task);
    while (Task* t = mine.pop()) t->run();
}

// ---- take_back_nested: three forks unwound against a thief -----------------
// The owner pushes three tasks one at a time (three nested forks), then takes
// them back newest first, running each one it gets; a thief steals half of
// what it sees, one CAS per task (RB4). Two take-backs in a row can both take
// the store/load path (5c-5e) while the thief holds a view from before the
// first: a thief that claimed two slots with one CAS would take the second
// one too (seed steal-half-one-cas). Each task runs exactly once.
// Shared by take_back_nested and pop_back_drain: three pushes near the
// wrap, the owner unwinds them newest first (Derived::unwind), a thief steals.
template <class Derived>
struct ThreeUnwoundAgainstAThief : Model<Derived, 2> {
    Buffer owner{near_wrap};
    Buffer thief{near_wrap - 2};
    Counted tasks[3];

    void thread(unsigned index) {
        if (index == 0) {
            push_each(owner, tasks, 3);
            static_cast<Derived*>(this)->unwind();
        } else {
            steal_and_run(thief, owner);
        }
    }
    void after() {
        while (Task* t = owner.pop()) t->run();
        expect_each_once(tasks);
    }
};

struct TakeBackNested : ThreeUnwoundAgainstAThief<TakeBackNested> {
    void unwind() {
        for (int i = 2; i >= 0; --i)
            if (owner.take_back(tasks[i])) tasks[i].run();
    }
};
ZAP_MODEL_TEST(take_back_nested, TakeBackNested, true, P::SpawnFailure::never,
               "three pushes taken back newest first vs a thief stealing half, across the wrap: each task once");

// ---- take_back_last: the last task, the owner against two thieves ----------
// One task in the ring; the owner takes it back (5b's guess sends it to the
// CAS of 5f directly, or a stale guess through 5c-5d to 5f/5g) while two
// thieves try to steal it: exactly one of the three gets it (seed
// take-back-no-cas: the owner takes the last task with a plain store).
struct TakeBackLast : Model<TakeBackLast, 3> {
    Buffer owner{near_wrap};
    Buffer thieves[2] = {Buffer{near_wrap}, Buffer{near_wrap}};
    Counted tasks[1];

    void thread(unsigned index) {
        if (index == 0) {
            push_each(owner, tasks, 1);
            if (owner.take_back(tasks[0])) tasks[0].run();
        } else {
            steal_and_run(thieves[index - 1], owner);
        }
    }
    void after() {
        while (Task* t = owner.pop()) t->run();
        expect_each_once(tasks);
    }
};
ZAP_MODEL_TEST(take_back_last, TakeBackLast, true, P::SpawnFailure::never,
               "one task: the owner's take-back vs two thieves, exactly one gets it");

// ---- take_back_after_steal: the seq_cst cycle of step 5 --------------------
// Two tasks; thief A steals the first (head moves to 1), thief B then sees
// head 1 and may read the old tail 2 and claim slot 1, while the owner takes
// slot 1 back. The owner must not read head 0 then (5e without a CAS): that
// is the execution the seq_cst store and loads of step 5 exclude.
struct TakeBackAfterSteal : Model<TakeBackAfterSteal, 3> {
    Buffer owner{near_wrap};
    Buffer thieves[2] = {Buffer{near_wrap}, Buffer{near_wrap}};
    Counted tasks[2];
    rl::atomic<int> first_stolen{0};

    void thread(unsigned index) {
        if (index == 0) {
            push_each(owner, tasks, 2);
            if (owner.take_back(tasks[1])) tasks[1].run();
        } else if (index == 1) {
            steal_and_run(thieves[0], owner);
            first_stolen($).store(1, rl::mo_relaxed);  // timing only: B starts after A's steal, orders nothing
        } else {
            if (first_stolen($).load(rl::mo_relaxed) == 0) return;
            steal_and_run(thieves[1], owner);
        }
    }
    void after() {
        while (Task* t = owner.pop()) t->run();
        expect_each_once(tasks);
    }
};
ZAP_MODEL_TEST(take_back_after_steal, TakeBackAfterSteal, true, P::SpawnFailure::never,
               "a steal moved head; the owner's take-back vs a second thief: each task once");

// ---- pop_back_drain: a helping wait's pops (step 6) against a thief --------
// The owner pushes three tasks, then pops the newest one at a time until the
// ring is empty, as a helping wait does (helping_wait.hpp H2), running each;
// a thief steals half of what it sees meanwhile. Step 6 reads the newest
// slot and takes it back (step 5): each task runs exactly once, whichever
// path each pop takes (seed take-back-no-cas: the last task both popped and
// stolen).
struct PopBackDrain : ThreeUnwoundAgainstAThief<PopBackDrain> {
    void unwind() {
        while (Task* t = owner.pop_back()) t->run();
    }
};
ZAP_MODEL_TEST(pop_back_drain, PopBackDrain, true, P::SpawnFailure::never,
               "three pushes popped newest first (step 6) vs a thief stealing half, across the wrap: each task once");

// ---- fork_join: parallel_invoke's frame, stolen or taken back ---------------
// The caller pushes b's Fork (heap-allocated here, so a touch after the
// caller frees it is caught) into its ring, runs a, then takes it back or
// joins (J4/J5); a thief steals it and runs it (J6). b's write is read by the
// caller after parallel_invoke's join (F3: no data race), b runs once (F1),
// and the Fork is freed right after (F2: no access to freed memory).
struct ForkJoin : Model<ForkJoin, 2> {
    struct B {
        ForkJoin* model;
        void operator()() const {
            model->b_data($).store(model->b_data($).load() + 1);
        }
    };
    using Frame = zap::detail::Fork<P, B&>;

    Buffer owner{near_wrap};
    Buffer thief{near_wrap};
    B b{this};
    Frame* fork = nullptr;
    rl::var<int> b_data{0};
    rl::atomic<int> pushed{0};

    void thread(unsigned index) {
        if (index == 0) {
            fork = new Frame(b);
            List list = one(*fork);
            RL_ASSERT(owner.push(list));
            pushed($).store(1, rl::mo_release);  // hands the thief the pointer `fork` only; J1-J7 order the rest
            fork->run_here([] {});  // a: nothing to share
            if (owner.take_back(*fork))
                fork->run_inline();
            else
                fork->join();
            RL_ASSERT(b_data($).load() == 1);
            delete fork;
        } else {
            if (pushed($).load(rl::mo_acquire) == 0) return;
            steal_and_run(thief, owner);
        }
    }
};
ZAP_MODEL_TEST(fork_join, ForkJoin, true, P::SpawnFailure::never,
               "parallel_invoke's frame: b runs once, its writes reach the caller, the frame may be freed at once");

// ---- pool_parallel_invoke: the whole path through a pool of two ------------
// A task calls pool->parallel_invoke(a, b) on a worker: the fork goes into
// the worker's ring, notify_hint may spawn the second worker, which may steal
// b while the first runs a; the first takes b back or helps (WaitGroup) until
// it is done. Both halves run once, their writes are visible after the call,
// and the pool shuts down, joins and is freed with nothing left.
// The two halves of a parallel_invoke, each counting its runs: forks them on
// `pool` from whichever thread calls fork(), then checks each ran once and
// its write is visible (F1, F3).
struct TwoHalves {
    rl::var<int> halves[2];

    void reset() {
        halves[0]($).store(0);
        halves[1]($).store(0);
    }
    void fork(Pool& pool) {
        pool.parallel_invoke([this] { halves[0]($).store(halves[0]($).load() + 1); },
                             [this] { halves[1]($).store(halves[1]($).load() + 1); });
        RL_ASSERT(halves[0]($).load() == 1 && halves[1]($).load() == 1);
    }
};

// A pool of two, one task `Job` to schedule on it, and the two halves.
template <class Derived, class Job>
struct ForkOnAPool : Model<Derived, 1, 2> {
    Pool* pool = nullptr;
    Job jobs[1];
    TwoHalves two;

    void before() {
        Model<Derived, 1, 2>::before();
        two.reset();
    }
};

struct ForkInATask : Counted {
    TwoHalves* two = nullptr;
    Pool** pool = nullptr;
    ForkInATask() : Counted(&run) {}
    static void run(Task* t) {
        auto* self = static_cast<ForkInATask*>(t);
        self->two->fork(**self->pool);
        Counted::bump(t);
    }
};

struct PoolParallelInvoke : ForkOnAPool<PoolParallelInvoke, ForkInATask> {
    void thread(unsigned) {
        zap::Config config = model_config(2);
        pool = new Pool(std::move(config));
        jobs[0].two = &two;
        jobs[0].pool = &pool;
        pool->schedule(jobs[0]);
        pool->shutdown();
        pool->join();
        expect_each_once(jobs);
        delete pool;
    }
};
ZAP_MODEL_TEST(pool_parallel_invoke, PoolParallelInvoke, true, P::SpawnFailure::never,
               "parallel_invoke in a task of a pool of two: both halves once, visible after, pool freed after join");

// ---- outside_parallel_invoke: the fork made from outside the pool ----------
// The model's thread, outside the pool, schedules an unrelated task, then
// calls pool->parallel_invoke(a, b): b goes to the global queue in the call's
// caller region (outside_wait.hpp OC1-OC2). A worker may consume the queue
// (b and the unrelated task into its ring), a second one may steal; the
// caller, once a is done, searches the global queue, the overflow queues and
// the rings for b (OC4: the unrelated task claimed or passed on the way goes
// back into a queue) and runs it, or naps on the fork's group until a worker
// has. b runs once and its write is visible after the call (F1, F3); the
// unrelated task runs once, never on the caller (OI1), nothing is lost (OI2),
// the call returns (OI3), and the pool is freed after join.
// An unrelated task: on a worker or join()'s drain (both have a worker
// slot); never on the caller inside its call (a context without one, OC1).
struct Unrelated : Counted {
    Unrelated() : Counted(&run) {}
    static void run(Task* t) {
        const zap::detail::Context<P>* context = zap::detail::Context<P>::current();
        RL_ASSERT(context != nullptr && context->worker != nullptr);
        Counted::bump(t);
    }
};

struct OutsideParallelInvoke : ForkOnAPool<OutsideParallelInvoke, Unrelated> {
    void thread(unsigned) {
        pool = new Pool(model_config(2));
        pool->schedule(jobs[0]);
        two.fork(*pool);
        RL_ASSERT(zap::detail::Context<P>::current() == nullptr);  // the call's context is gone (OC1)
        pool->shutdown();
        pool->join();
        expect_each_once(jobs);
        delete pool;
    }
};
ZAP_MODEL_TEST(outside_parallel_invoke, OutsideParallelInvoke, true, P::SpawnFailure::never,
               "parallel_invoke from outside a pool of two: the caller may run b itself, never the unrelated task; "
               "b once, visible after, nothing lost, pool freed after join");

// ---- outside_put_back: the caller passes over another thread's task --------
// A second thread outside the pool schedules a task U into the global queue
// while the caller's parallel_invoke waits for b there. When U is the newer
// of the two, the caller's search (OC4a) meets U first, holds it while it
// looks on, and puts it back in front of the queue. A worker that searched
// meanwhile found the queue's consumer taken and may have gone to sleep with
// the notification U's schedule() gave it, so the caller's OC4b notify() is
// the only thing left that tells anyone U is queued (OI2). The caller then
// sleeps on a WaitGroup that only U's run completes, and with no spurious
// wake-ups a lost announcement is a deadlock: every worker asleep, U queued
// (tla/Help.tla's HelpMutOutNoNotify is the same omission).
struct Announced : Counted {
    WaitGroup* ran = nullptr;
    Announced() : Counted(&run) {}
    static void run(Task* t) {
        Unrelated::run(t);  // on a worker, never on the caller (OI1)
        static_cast<Announced*>(t)->ran->done();
    }
};

struct OutsidePutBack : Model<OutsidePutBack, 2, 1> {
    Pool* pool = nullptr;
    TwoHalves two;
    Announced other;
    WaitGroup ran;

    void before() {
        Model<OutsidePutBack, 2, 1>::before();
        two.reset();
        pool = new Pool(model_config(1));
        other.ran = &ran;
        ran.add(1);
    }
    void thread(unsigned index) {
        if (index == 0) {
            two.fork(*pool);
            ran.wait();  // no help from here: a worker must run U
            pool->shutdown();
            pool->join();
        } else {
            pool->schedule(other);
        }
    }
    void after() {
        RL_ASSERT(other.runs($).load() == 1);
        delete pool;
    }
};
ZAP_MODEL_TEST(outside_put_back, OutsidePutBack, false, P::SpawnFailure::never,
               "a task of another thread that the outside caller's search passed over and put back is announced: "
               "a worker runs it, nobody sleeps with it queued");

}  // namespace
