// SPDX-License-Identifier: MIT
// zap/wait_depth.hpp - the bound on how deeply the drop-in layer's waits nest
// on one thread's stack.
//
// Why: a wait on a worker helps, that is, it runs other tasks of the pool
// until what it waits for is done. A task it picks up may itself fork and
// wait, and that wait helps too, so frames pile up on the worker's stack. A
// helping wait takes the newest task of its own ring first, its own child
// (helping_wait.hpp H2), but once that ring is empty it steals, and a stolen
// task is an unrelated, older one: the pile can then grow with the number of
// queued tasks rather than with the program's own recursion (rayon #854
// reports 600+ nested frames).
//
// The bound: every wait of TaskGroup and parallel_for/for_each counts itself
// here (Guard) while it waits. Once max_wait_depth waits are active on this
// thread, the layer stops forking: TaskGroup::run runs its child at once on
// the calling thread, and parallel_for runs its range as one piece. Those run
// to completion without waiting, so this thread's waits never nest deeper than
// the bound. Sleeping instead of helping past the bound would not do: on a
// pool of one thread the child the waiter sleeps for would never run.
//
// The pool has its own bound, Config::max_help_depth (one level per KiB of
// stack by default, 4096 with a 4 MiB stack): past it a wait on a worker does
// not help, it only sleeps. A user may set it, or the stack, below this one,
// and raw WaitGroup waits count there too; so the layer also stops forking on
// a worker that has reached the pool's bound (BasicThreadPool::at_help_bound).
// Either way the layer never queues a child behind a wait that cannot run it.
//
// The count is a plain thread_local: the drop-in layer runs on real threads
// (production, the chaos stress platform). The Relacy models of TaskGroup
// (model/task_group_models.cpp) instantiate it too; there every fiber of the
// model shares the one OS thread's count, which is harmless: those models
// never come near the bound.
#pragma once

#include <cstdint>

namespace zap::detail {

class WaitDepth {
public:
    // Deep enough for any reasonable recursion of forks, shallow enough that
    // the helping frames (a few hundred bytes per level) stay far below even a
    // 1 MiB worker stack.
    static constexpr std::uint32_t max_wait_depth = 128;

    // True when a wait on this thread must not have anything to wait for:
    // fork nothing, run inline.
    template <class Pool>
    static bool exceeded(const Pool& pool) noexcept {
        return depth() >= max_wait_depth || pool.at_help_bound();
    }

    // Counts one wait while it is in progress.
    class Guard {
    public:
        Guard() noexcept { ++depth(); }
        ~Guard() { --depth(); }
        Guard(const Guard&) = delete;
        Guard& operator=(const Guard&) = delete;
    };

    // The number of drop-in waits in progress on this thread.
    static std::uint32_t current() noexcept { return depth(); }

private:
    static std::uint32_t& depth() noexcept {
        thread_local std::uint32_t waits = 0;
        return waits;
    }
};

}  // namespace zap::detail
