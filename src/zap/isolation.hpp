// SPDX-License-Identifier: MIT
// zap/isolation.hpp - ThreadPool::isolate(f): while f runs on a thread of
// the pool, that thread's helping waits run only tasks created inside f and
// their descendants (oneTBB's this_task_arena::isolate).
//
// Why: a helping wait runs other tasks of the pool while it waits. If it
// picks up a task that blocks until the wait has returned - a task waiting
// on a promise the waiter fulfils after wait(), a lock the waiter holds -
// neither can finish (tests/test_isolation.cpp shows the program). Inside
// isolate() the wait cannot pick such a task up, unless f created it.
//
// Protocol I (isolation):
//   I1. A region is a 64-bit id, never 0. isolate(f) on a thread of the
//       pool opens a new one and the thread is in it while f runs; a thread
//       that runs a task is in the task's region while the task runs, so a
//       task's descendants inherit its region, on whichever thread they run.
//       Ids never repeat within a pool: a thread's ids carry its own number
//       in the top 16 bits (a worker's index + 1; the drain's, max_threads
//       + 1) and a count of the regions it opened below (2^48 of them).
//   I2. schedule() stamps every task with the scheduling thread's region (0
//       outside any region; on a thread outside the pool, its call's caller
//       region while it is in a call of the pool, outside_wait.hpp OC2,
//       else 0); a worker's
//       ring keeps each slot's region beside the slot (buffer.hpp), written
//       and published with it.
//   I3. A helping wait of a thread in region R != 0 runs only tasks of R. It
//       searches (Worker::find_in), and whatever it takes out of its way it
//       puts back where every search looks before it runs anything:
//         a. its own ring: the newest task of R. The owner reads the regions
//            of its own slots from the tail down, takes back the tasks above
//            that one (buffer.hpp steps 6-7) and pushes them back on top, in
//            their order;
//         b. its own overflow queue, and (d) each other worker's: it takes
//            the whole queue, keeps the tasks of R (one to run, the rest into
//            its ring) and pushes the others back into that queue;
//         c. each other worker's ring: it reads ahead for the oldest slot of
//            R, then claims the slots at the head one by one, as a steal does
//            (buffer.hpp step 8); the tasks of other regions it claims on the
//            way go into its own overflow queue.
//       A task of R may sit behind unrelated ones anywhere (a thief steals
//       half a ring from its oldest end, T and F below children of R, then
//       blocks in T): the wait must reach it past them, since the worker
//       holding it may be the one that waits for this wait (tests/
//       test_isolation.cpp, ChildrenStolenBehindAnUnrelatedTaskAreReached).
//       It never takes from the global queue: its tasks come from threads
//       outside the pool, region 0 or a caller region, never R (OC4 puts
//       back what it moves where it was, or into a worker's overflow queue).
//   I4. When the search finds nothing, the wait arms its group with its
//       worker's helper word (helping_wait.hpp H3) and sleeps there, entered
//       as an isolated sleeper: the group's last done() wakes it (K2), a
//       notification does not (K1 skips it: it may not take the work a
//       notification announces, and would strand it). Its sleep has a
//       timeout (backoff.hpp: 1 us doubling to 1 ms), after which it searches
//       again: the tasks of R may be moving between workers when it looks
//       (held in a thief's hands, or in a queue another search holds), and
//       no wake-up covers that. It is not an idle worker of Protocol A.
//
// Invariants:
//   IS1 (isolation): a helping wait in region R runs only tasks stamped R:
//       every take in I3 decides on the region first, from memory that
//       outlives the task (the ring's region slot, kept only if the claim
//       wins), or from a task it owns (taken back, or held under a queue's
//       consumer lock); find_in asserts it.
//   IS2 (nothing lost, nothing run twice, announced): every task I3 takes out
//       of its way goes back into a ring or queue before the wait runs
//       anything, and the search reports it (Stole::more), so the pool
//       notifies (A4): a search that passed the task by while it was out of
//       sight is then not the last one.
//   IS3 (progress): a wait in R does not sleep past a task of R that it can
//       reach: I3 reaches every ring and overflow queue, past any number of
//       unrelated tasks, and I4's timeout bounds how long a task in flight
//       can be missed.
//
// What it does not promise: a region's wait may still run every task of its
// region, so a task created inside f that blocks on the wait still
// deadlocks it. Nested isolate() calls open nested regions, and a wait of the
// outer one does not run the inner one's tasks (which the inner call's own
// waits run). A wait inside isolate() for work created outside it is not
// helped by this thread: with every worker waiting like that, nobody runs it.
// A wait on a group armed by another worker's wait sleeps on the group's
// word only (as in H3), so I4's timeout does not apply to it.
#pragma once

#include <cstdint>

namespace zap::detail {

// Caller regions (outside_wait.hpp OC1): the ids a pool hands out to the
// calls made from threads outside it, with this bit set. They mark a call's
// tasks, so that its caller can find them, but isolate nothing: a wait in
// one helps as a wait outside any region does (OC3). No id of I1 has it:
// a thread's number is below 2^15.
inline constexpr std::uint64_t caller_region_bit = std::uint64_t{1} << 63;

// True for a region whose waits run only its own tasks (I3): every region
// but none (0) and the caller regions.
constexpr bool isolates(std::uint64_t region) noexcept { return region != 0 && (region & caller_region_bit) == 0; }

// Where a thread's region ids come from (I1).
class RegionIds {
public:
    static constexpr unsigned thread_shift = 48;

    // `thread` is 1-based and below 2^16 (Sync's counters cap workers at 16383).
    explicit RegionIds(std::uint64_t thread) noexcept : base_(thread << thread_shift) {}

    std::uint64_t next() noexcept { return base_ | (++opened_ & ((std::uint64_t{1} << thread_shift) - 1)); }

private:
    std::uint64_t base_;
    std::uint64_t opened_ = 0;
};

// The region a thread is in, for the lifetime of a scope: a task it runs,
// or an isolate() call (I1).
template <class Context>
class InRegion {
public:
    InRegion(Context& context, std::uint64_t region) noexcept : context_(context), outer_(context.region) {
        context_.region = region;
    }
    ~InRegion() { context_.region = outer_; }
    InRegion(const InRegion&) = delete;
    InRegion& operator=(const InRegion&) = delete;

private:
    Context& context_;
    std::uint64_t outer_;
};

}  // namespace zap::detail
