// SPDX-License-Identifier: MIT
// zap/outside_wait.hpp - a thread outside the pool that calls parallel_invoke,
// parallel_for, for_each, parallel_reduce or transform_reduce, or waits for
// a TaskGroup, runs pieces of its own call while it waits for them, instead of only sleeping (as
// oneTBB's caller does), and never runs anything else.
//
// Why: such a call forks from outside. The halves it schedules go to the
// pool's global queue; the caller computes its own share (the lowest piece)
// and then waits for the rest. Before this protocol it only slept there:
// psum (a parallel_reduce of 10^8 doubles) on a 2-CPU machine left the
// caller's CPU idle while one worker's pieces queued behind another's
// (docs/benchmarks.md), and a call whose workers were all busy elsewhere
// waited for them even though its caller could run its pieces itself.
//
// The parties: the caller C (a thread with no pool context: no worker, no
// drain, in no call yet), the pool's workers, and the tasks of C's call.
//
// Protocol OC (outside caller):
//   OC1. A call of the drop-in layer on C opens a caller region R for the
//        call: a fresh id from the pool's counter (fetch_add, relaxed: the
//        ids need only differ, never order anything) with caller_region_bit
//        set (isolation.hpp), so that it never repeats within the pool and
//        is no isolate() region. C gets a Context on its own stack, current
//        until the call returns: the pool, no worker, help = this header's
//        help(), the drain's depth bound (the thread's stack is not the
//        pool's to size), region R. own_context() skips a context without a
//        worker: for the pool C stays a thread outside it (schedule() still
//        pushes to the global queue, parallel_invoke still schedules its
//        fork, isolate() still just calls its function). A call nested in
//        the first (a task C runs calls the pool again) keeps R. A thread
//        that has a context already (a worker or the drain of another pool)
//        opens none and waits as before.
//   OC2. While C is in R, every task it schedules (its forks, the upper
//        halves of its loops) is stamped R (I2) and goes to the global
//        queue. A worker that runs a task of R is in R while it runs (I1),
//        so what it schedules is stamped R too: R's tasks are the call's
//        tasks and their descendants.
//   OC3. A caller region isolates nothing (isolates() is false): a worker's
//        wait in R helps as a wait in no region does (H2). R's tasks may
//        wait for work of any region: isolating them would strand that work
//        behind a worker that waits for it (on a pool of one thread, for
//        ever).
//   OC4. C's wait (a WaitGroup wait on C: Context::help) runs until the
//        group's count is zero:
//        a. search for a task of R: the global queue (newest lists first,
//           up to its first task of R; the tasks passed go back in front,
//           the rest is not read), each worker's overflow queue (the same),
//           each worker's ring (buffer.hpp step 8: the oldest task of R; the
//           tasks of other regions claimed on the way go into that worker's
//           overflow queue);
//        b. if the search moved tasks (Stole::more), notify() (A2): a search
//           that passed them by while they were out of sight must not be the
//           last one (IS2);
//        c. found: run it in R (I1), back to a;
//        d. none: sleep on the group's own word (WaitGroup::wait_for: it sets
//           WAITERS, so the last done() wakes C at once) for one nap - 1 us,
//           doubling to 1 ms, back to 1 us after a task ran - then back to a.
//   OC5. Not helped, waiting as before: a timed wait (wait_for: its timeout
//        stays what the caller asked), and a wait past the depth bound.
//   OC6. Count zero: the WaitGroup wait ends as outside any pool (step 3 of
//        wait_group.hpp: after WAKING is clear, W1).
//   OC7. isolate(f) on C inside a call opens an isolation region for f: a
//        fresh count from the same counter without caller_region_bit (below
//        2^48: no id of I1 either). C's waits inside f then run only tasks
//        made inside f (OC4 searches for the exact region), and a worker
//        that runs one is isolated as I3-I4 say. (Outside every call,
//        isolate(f) on C just calls f, as before: C's waits run nothing.)
//        The tasks C schedules inside f go to the global queue, which an
//        isolated worker's search skips (I3): C's own wait reaches them
//        there (OC4a), and so does any worker's ordinary search.
//   OC8. A TaskGroup used on C outside every call keeps one caller region
//        for its life, taken from the counter (OC1) at its first run() or
//        wait() on C: each run() and each untimed wait() (and the
//        destructor's) on C opens it as OC1 opens a call's, for as long as
//        the run() or the wait lasts. Its children are stamped with it (OC2),
//        so C's wait runs them and their descendants (OC4), and nothing else.
//        On a thread that has a context already (a worker, the drain, C
//        inside a call) run() and wait() open nothing: the children take
//        that thread's region, as before.
//
// Invariants:
//   OI1 (its own call's work only): C runs only tasks stamped R (every take
//       in OC4a decides on the region first, as IS1's takes do), and R is
//       stamped only on the tasks of C's call and their descendants (OC2):
//       an unrelated task, however long, never captures C.
//   OI2 (nothing lost, nothing run twice, announced): every take is one a
//       worker makes (a queue's consumer lock, a ring's claim CAS, RB4), and
//       every task OC4 takes out of its way goes back before C runs
//       anything: into the queue it came from, or into the overflow queue of
//       the ring's owner - never into the global queue, which an isolated
//       wait never searches (I3): an isolate() task passed by C stays where
//       its region's waits look. OC4b announces the move. (The only tasks
//       of an isolation region in the global queue are those C scheduled
//       inside isolate(), OC7, which C's own waits search for there.)
//   OI3 (no hang): C's sleep lasts one nap at most, and the last done() ends
//       it: a task of R that C can reach waits no longer than a nap for it
//       (IS3's argument: OC4a reaches every queue and ring past any number of
//       other tasks), and while C sleeps the workers run R's tasks as before.
//       So a call completes even when every worker is busy with other work
//       for as long as the call lasts (tests/test_parallel_for.cpp).
//   OI4 (allocation-free): the Context lives on C's stack, the search
//       allocates nothing, and a task runs where it was (a Fork or an upper
//       half on the frame that waits for it).
//   OI5 (the results do not change): OC4 changes who runs a task, never
//       which tasks there are: parallel_reduce's tree is a function of n
//       alone (its R1).
//
// What it does not cover: a thread that works for another pool (OC1), and
// a TaskGroup whose wait runs inside a call on C while its children were
// run outside it (their region is the group's, the wait searches the
// call's). Neither waits worse than before: the workers run those tasks,
// and the group's last done() wakes C (OC4d).
#pragma once

#include <zap/helping_wait.hpp>
#include <zap/isolation.hpp>
#include <zap/wait_group.hpp>
#include <zap/worker.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace zap::detail {

template <class Platform>
class PoolCore;

// OC1-OC6 for one pool type. A friend of PoolCore: it searches the pool's
// queues and rings and hands out its caller regions.
template <class Platform>
class OutsideWait {
    using Pool = PoolCore<Platform>;
    using Task = BasicTask<Platform>;
    using Group = BasicWaitGroup<Platform>;
    using Stole = typename Worker<Platform>::Stole;

public:
    // OC1's id (`isolating` false: caller_region_bit set) or OC7's (true:
    // the count alone, below 2^48, so no id of I1 either). Never repeats
    // within the pool.
    static std::uint64_t fresh_region(Pool& pool, bool isolating) noexcept {
        const std::uint64_t count = pool.caller_regions_.fetch_add(1, std::memory_order_relaxed) + 1;  // ids only
        return isolating ? count : caller_region_bit | count;
    }

    // OC7: the calling thread's context if it is in a call of `pool` from outside.
    static Context<Platform>* caller_context(const Pool& pool) noexcept {
        Context<Platform>* context = Context<Platform>::current();
        return context != nullptr && context->pool == &pool && context->worker == nullptr ? context : nullptr;
    }

    // Context::help on an outside caller (OC4-OC5). Arms nothing: returns null.
    static Helpers<Platform>* help(Context<Platform>& context, Group& group, Deadline<Platform>& deadline) noexcept {
        if (deadline.timed() || context.help_depth >= context.help_bound) return nullptr;  // OC5
        Pool& pool = *static_cast<Pool*>(const_cast<void*>(context.pool));
        context.help_depth += 1;
        std::chrono::nanoseconds nap = first_nap;
        Stole found{nullptr, false};
        while (!group.zero()) {
            const bool got = find(pool, context.region, found);  // OC4a
            if (found.more) pool.notify();  // OC4b (OI2)
            if (got) {
                Pool::run(context, *found.task);  // OC4c
                nap = first_nap;
                continue;
            }
            if (group.wait_for(nap)) break;  // OC4d: OC5 makes this a plain sleep
            nap = std::min(nap * 2, last_nap);
        }
        context.help_depth -= 1;
        return nullptr;
    }

private:
    static constexpr std::chrono::nanoseconds first_nap{std::chrono::microseconds{1}};
    static constexpr std::chrono::nanoseconds last_nap{std::chrono::milliseconds{1}};

    // OC4a: a task of `region`, from the global queue, an overflow queue or a ring.
    static bool find(Pool& pool, std::uint64_t region, Stole& out) noexcept {
        using W = Worker<Platform>;
        bool more = false;
        // The global queue first: the caller's own forks go there (OC2);
        // then each started worker's overflow queue and ring, where the
        // tasks its children scheduled on workers wait.
        Task* task = take_newest_of(pool.global_queue_, region, more);
        const std::uint32_t started = pool.registered_.load(std::memory_order_relaxed);  // workers_ exists from the start
        for (std::uint32_t i = 0; task == nullptr && i < started; ++i) {
            W& victim = pool.workers_[i];
            task = take_newest_of(victim.run_queue, region, more);
            if (task == nullptr) task = W::claim_from(victim, region, more, victim.run_queue);
        }
        out = Stole{task, more};
        if (task == nullptr) return false;
        ZAP_ASSERT(Region::of(*task) == region, "internal: an outside caller took a task of another call (OI1)");
        return true;
    }

public:
    // OC4a on one queue: a task of `region`, the newest lists first. The
    // lists pushed since the queue was last taken go in front of its cache
    // (Queue step 3b), so the search meets the caller's latest fork before
    // its older ones, as a worker's pop meets its ring's newest task: each
    // task it runs then nests on its stack about as deep as a plain
    // recursive call would. The tasks of other regions passed on the way
    // go back in front, in order (OI2), and the ones after the task found
    // are never read: a search costs what lies before the task it finds.
    //
    // Why both: taking the whole queue each time, as an isolated wait does,
    // made a caller that had forked a million tasks read all the others
    // before each one it ran (quadratic: a 1,000,000-task spawn from outside
    // went past 60 s; it takes about 0.1 s now). Stopping at the first task
    // without step 3b left the rest in the cache ahead of newer forks, so
    // the search ran the oldest, largest forks nested inside the waits for
    // the newest: an outside fib(22) of parallel_invoke overflowed 8 MiB.
    // (Public for model/genmc/outside_tests.cpp, which runs this search.)
    static Task* take_newest_of(Queue<Platform>& queue, std::uint64_t region, bool& more) noexcept {
        Task* cursor = nullptr;
        if (!queue.try_acquire_consumer(cursor)) return nullptr;
        queue.newest_first(cursor);
        BasicBatch<Platform> passed;
        Task* task = queue.pop(cursor);
        for (; task != nullptr && Region::of(*task) != region; task = queue.pop(cursor)) passed.push(*task);
        if (!passed.empty()) {
            const List<Task> back = passed.take_list();  // OI2: in front, where they were
            Link::set_next(*back.tail, cursor);
            cursor = back.head;
        }
        if (queue.release_consumer(cursor)) more = true;  // tasks left, or pushed meanwhile (A4)
        return task;
    }
};

// OC1: while it lives, the calling thread is in a caller region of `pool`,
// if it had no context when it was made and `outside` is true (the caller
// saw no context of this pool: a cheap pre-check for the workers' path).
template <class Platform>
class OutsideCall {
public:
    OutsideCall(PoolCore<Platform>& pool, bool outside) noexcept {
        if (!outside || Context<Platform>::current() != nullptr) return;
        open(pool, OutsideWait<Platform>::fresh_region(pool, false));
    }

    // OC8: a TaskGroup's region, taken from the counter into `region` the
    // first time it is opened (0: not yet).
    OutsideCall(PoolCore<Platform>& pool, std::uint64_t& region) noexcept {
        if (Context<Platform>::current() != nullptr) return;
        if (region == 0) region = OutsideWait<Platform>::fresh_region(pool, false);
        open(pool, region);
    }

    ~OutsideCall() {
        if (context_.pool != nullptr) Platform::set_current_context(nullptr);
    }
    OutsideCall(const OutsideCall&) = delete;
    OutsideCall& operator=(const OutsideCall&) = delete;

private:
    void open(PoolCore<Platform>& pool, std::uint64_t region) noexcept {
        context_.pool = &pool;
        context_.help = &OutsideWait<Platform>::help;
        context_.help_bound = HelpingWait<PoolCore<Platform>>::drain_help_depth(pool);
        context_.region = region;
        Platform::set_current_context(&context_);
    }

    Context<Platform> context_;  // pool null: nothing opened
};

}  // namespace zap::detail
