// SPDX-License-Identifier: MIT
// zap/worker.hpp - one worker thread's queues, and where it looks for work.
//
// Each worker owns:
//   run_buffer  the 256-slot ring (buffer.hpp) that its own schedule() calls
//               fill and that other workers steal half of;
//   run_queue   the unbounded queue (queue.hpp) that takes what overflows
//               the ring;
//   idle_queue  idle tasks: run by this worker just before it goes to sleep
//               (run_idle_tasks), and until none is left before it exits.
//
// Search order (find): own ring (its oldest task; a helping wait takes the
// newest instead, buffer.hpp step 6, so that it runs its own children
// first: helping_wait.hpp H2), own overflow queue, the pool's global queue,
// then every worker in turn (its overflow queue, then half of its ring; a
// ring that holds one task is left to its owner for a few microseconds
// first, and taken if it is still there: buffer.hpp step 3a, DL1-DL2).
// A helping wait inside ThreadPool::isolate() searches with find_in instead:
// only its region's tasks, reached past any others (isolation.hpp I3).
//
// A search stops at the first task it finds, and can miss work that is
// there: a queue whose consumer lock is held by someone else looks empty,
// a steal takes half of a ring, leaving the rest, and a steal that left a
// lone task alone passes over what its owner pushed meanwhile (DL2). A worker about to run
// what it found must therefore not leave work behind that nobody else is
// bound to look for: the task it runs may block until that work runs (a
// rendezvous, a pipeline), and an idle worker must come for it
// (work conservation, pool_core.hpp A4 and P6). Two facts make that
// cheap to know:
//   - Stole::more: the search itself left work for others - it moved extra
//     tasks into its ring, or the queue it held had tasks left at release
//     (pushed while it held it: the pushers' searchers passed it by);
//   - sees_work(): a look at every queue and ring, taken by a worker that
//     consumed a notification after it took its task: every task that
//     notification covers is visible to it, or taken (A4).
//
// Worker objects live in an array the pool allocates up front, not on the
// worker threads' stacks as in the seed: a thief may read any worker's ring
// until the pool is joined, and the array lives exactly that long.
#pragma once

#include <zap/batch.hpp>
#include <zap/buffer.hpp>
#include <zap/deadline.hpp>
#include <zap/helper_word.hpp>
#include <zap/isolation.hpp>
#include <zap/queue.hpp>
#include <zap/spin.hpp>
#include <zap/task.hpp>

#include <cstdint>

namespace zap {
template <class Platform>
class BasicWaitGroup;
}

namespace zap::detail {

template <class Platform>
struct Worker;

template <class Platform>
class Cancellation;

// What the thread-local current context points to: set on each worker while
// it runs, and on the thread that drains the pool in join().
template <class Platform>
struct Context {
    const void* pool = nullptr;  // the pool's core (PoolCore) this thread works for
    Worker<Platform>* worker = nullptr;  // the drain's: worker 0's slot (pool_core.hpp B5)
    // Protocol H (helping_wait.hpp): runs this pool's tasks on the calling
    // thread until the group's count is zero or the deadline has passed,
    // sleeping where new work and the count wake it; returns earlier when it
    // cannot help (the group then sleeps as outside the pool). Returns the
    // helper word this wait armed the group with (it disarms, H8), or null.
    // Lets WaitGroup help without knowing the pool's type.
    Helpers<Platform>* (*help)(Context&, BasicWaitGroup<Platform>&, Deadline<Platform>&) noexcept = nullptr;
    // H2's depth bound: helping waits may nest this deep on this thread.
    std::uint32_t help_bound = 0;
    // Helping waits running a task on this thread: a worker's, or the
    // drain's on the joining thread.
    std::uint32_t help_depth = 0;
    // True for join()'s drain: it works as worker 0 but is no worker
    // (ThreadPool::worker_index() answers nullopt there).
    bool drainer = false;
    // Isolation (isolation.hpp): the region this thread is in (I1), 0 for
    // none, and where the ids of the regions it opens come from.
    std::uint64_t region = 0;
    RegionIds region_ids{0};
    // The drop-in layer's TaskGroup whose loops this thread's code belongs
    // to, valid at help depth `cancellation_depth` only (cancellation.hpp C6).
    const Cancellation<Platform>* cancellation = nullptr;
    std::uint32_t cancellation_depth = 0;

    static Context* current() noexcept { return static_cast<Context*>(Platform::current_context()); }
};

template <class Platform>
struct alignas(Platform::cache_line) Worker {
    using Task = BasicTask<Platform>;
    using Stole = typename Buffer<Platform>::Stole;

    Buffer<Platform> run_buffer;
    Queue<Platform> run_queue;
    Queue<Platform> idle_queue;
    typename Platform::Thread thread{};  // written by the worker at start, read by join()
    // From here on, the fields the owner writes as it searches, spins and
    // runs tasks, on lines of their own: every other worker's search reads
    // run_queue, and would miss on a line the owner keeps writing.
    alignas(Platform::cache_line) Helpers<Platform> helper;  // this worker's helping waits sleep here (helping_wait.hpp H5)
    Context<Platform> context;
    std::uint32_t steal_cursor = 0;  // the owner's round-robin position
    SpinBudget spin_budget;          // A8's rounds, learned (spin.hpp); the owner's only

    // Looks for a task to run: see the search order above. `helping`: a
    // helping wait's search (helping_wait.hpp H2), which takes its own ring's
    // newest task first; `with_global`: false skips the global queue.
    bool find(Queue<Platform>& global, Worker* workers, std::uint32_t count, Stole& out, bool helping,
              bool with_global) noexcept {
        if (Task* task = helping ? run_buffer.pop_back() : run_buffer.pop()) {
            out = Stole{task, false};
            return true;
        }
        if (run_buffer.consume(run_queue, out) || (with_global && run_buffer.consume(global, out))) return true;
        for (std::uint32_t tried = 0; tried < count; ++tried) {
            Worker& victim = workers[steal_cursor++ % count];
            // Its queue first: the owner drains it last, so it contends less.
            if (run_buffer.consume(victim.run_queue, out)) return true;
            if (&victim != this && run_buffer.steal(victim.run_buffer, out)) return true;
        }
        return false;
    }

    // The search of a helping wait in `region` (isolation.hpp I3): only
    // tasks of that region. `out.more`, found or not, when it moved tasks of
    // other regions out of its way and back where every search looks, or
    // left tasks for others (IS2).
    bool find_in(std::uint64_t region, Worker* workers, std::uint32_t count, Stole& out) noexcept {
        bool more = false;
        const auto into_ring = [this](List<Task> rest) {
            if (!run_buffer.push(rest)) run_queue.push(rest);
        };
        Task* task = take_back_of(region, more);                                          // I3a
        if (task == nullptr) task = take_queue_of(run_queue, region, more, into_ring);    // I3b
        for (std::uint32_t tried = 0; task == nullptr && tried < count; ++tried) {
            Worker& victim = workers[steal_cursor++ % count];
            if (&victim == this) continue;
            task = take_queue_of(victim.run_queue, region, more, into_ring);              // I3d
            if (task == nullptr) task = claim_from(victim, region, more, run_queue);      // I3c
        }
        out = Stole{task, more};
        if (task == nullptr) return false;
        ZAP_ASSERT(Region::of(*task) == region, "internal: an isolated wait took a task of another region (IS1)");
        return true;
    }

    // I3a: the newest task of `region` in our ring; the tasks above it go
    // back on top of the ring, in their order, before anything runs (IS2).
    Task* take_back_of(std::uint64_t region, bool& more) noexcept {
        List<Task> above{nullptr, nullptr};
        Task* task = run_buffer.pop_back_of(region, [&above](Task& passed) {
            Link::set_next(passed, above.head);  // taken newest first: each goes in front
            above.head = &passed;
            if (above.tail == nullptr) above.tail = &passed;
        });
        if (above.head != nullptr) {
            more = true;
            if (!run_buffer.push(above)) run_queue.push(above);
        }
        return task;
    }

    // I3b, I3d: the tasks of `region` in a queue (an overflow queue, ours or
    // another worker's; outside_wait.hpp OC4: the global queue too): one to
    // run, the rest to `keep` (an isolated wait: into its ring); the others
    // go back into the queue (IS2).
    template <class Keep>
    static Task* take_queue_of(Queue<Platform>& queue, std::uint64_t region, bool& more, Keep&& keep) noexcept {
        Task* cursor = nullptr;
        if (!queue.try_acquire_consumer(cursor)) return nullptr;
        BasicBatch<Platform> mine;
        BasicBatch<Platform> others;
        while (Task* task = queue.pop(cursor)) (Region::of(*task) == region ? mine : others).push(*task);
        if (queue.release_consumer(cursor)) more = true;  // pushed while we held it (A4)
        if (!others.empty()) {
            more = true;
            queue.push(others.take_list());
        }
        Task* task = mine.pop();
        if (!mine.empty()) {
            more = true;  // kept where others may take them (A4: announced)
            keep(mine.take_list());
        }
        return task;
    }

    // I3c: the oldest task of `region` in the victim's ring; the tasks of
    // other regions claimed on the way go into the overflow queue `into`
    // (an isolated wait: ours; outside_wait.hpp OC4: the victim's) (IS2).
    static Task* claim_from(Worker& victim, std::uint64_t region, bool& more, Queue<Platform>& into) noexcept {
        BasicBatch<Platform> passed;
        Task* task = Buffer<Platform>::claim_of(victim.run_buffer, region, [&passed](Task& claimed) { passed.push(claimed); });
        if (!passed.empty()) {
            more = true;
            into.push(passed.take_list());
        }
        return task;
    }

    // A4's look: true when any queue or ring of the pool may hold a task.
    // Relaxed loads: the caller's seq_cst fence in wait() (A5) orders them
    // after every push whose notify() saw the notification this worker
    // consumed. A false positive (a ring a thief is emptying, a take-back
    // window) costs one notify.
    static bool sees_work(Queue<Platform>& global, Worker* workers, std::uint32_t count) noexcept {
        if (!global.looks_empty()) return true;
        for (std::uint32_t i = 0; i < count; ++i)
            if (workers[i].run_buffer.size() != 0 || !workers[i].run_queue.looks_empty()) return true;
        return false;
    }

    // Runs the idle tasks it takes off the queue at the start (one swap of
    // the queue), and returns whether there were any. An idle task queued
    // while they run - one that re-queues itself, say - waits for this
    // worker's next idle turn: Queue::pop() would swap the queue again when
    // the cursor runs dry, and a task that always re-queues itself would then
    // keep the worker here for ever, neither sleeping nor running its other
    // tasks. At exit the pool calls this until it returns false (B2).
    bool run_idle_tasks() noexcept {
        Task* cursor = nullptr;
        if (!idle_queue.try_acquire_consumer(cursor)) return false;
        while (cursor != nullptr) idle_queue.pop(cursor)->run();  // never the swap of an empty cursor
        idle_queue.release_consumer(cursor);
        return true;
    }
};

}  // namespace zap::detail
