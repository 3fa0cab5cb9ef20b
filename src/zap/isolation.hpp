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
//       on a thread outside the pool, or outside any region); a worker's
//       ring keeps each slot's region beside the slot (buffer.hpp), written
//       and published with it.
//   I3. A helping wait of a thread in region R != 0 searches only for tasks
//       of R, and decides before it claims one:
//         a. its own ring's newest task, if its slot says R (pop_back(R));
//         b. its own overflow queue: it takes the whole queue, keeps the
//            tasks of R, and sets the others aside: it pushes them back
//            before it runs anything, and has them announced (Stole::more,
//            thread_pool.hpp A4), since a search that found the queue held
//            meanwhile passed them by;
//         c. another worker's ring, when its own ring is empty: only while
//            the slot at that ring's head says R (steal(.., R)).
//       It never takes from the global queue, whose tasks come from threads
//       outside the pool (region 0), nor from another worker's overflow
//       queue (that worker takes its region's tasks itself).
//   I4. When the search finds nothing, the wait stops helping and sleeps on
//       its group's own word, as a thread outside the pool does (wait_group.hpp
//       step 4): only the group's last done() wakes it. It is not an idle
//       worker of Protocol A, whose notify() would wake it for work it may
//       not take.
//
// Invariants:
//   IS1 (isolation): a helping wait in region R runs only tasks stamped R:
//       every take in I3 checks the region first, from memory that outlives
//       the task (the ring's slot), or from a task it owns (a queue's task,
//       held under the consumer lock).
//   IS2 (nothing lost, nothing run twice): a task set aside in I3b goes back
//       into the queue it came from before the consumer lock's holder runs
//       anything, so it stays where every other search looks for it, and
//       its announcement wakes a worker if none is bound to look.
//
// What it does not promise: a region's wait may still run every task of its
// region, so a task created inside f that blocks on the wait still
// deadlocks it. Nested isolate() calls open nested regions, and a wait of the
// outer one does not run the inner one's tasks (which the inner call's own
// waits run). A wait inside isolate() for work created outside it is not
// helped by this thread: with every worker waiting like that, nobody runs it.
#pragma once

#include <cstdint>

namespace zap::detail {

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
