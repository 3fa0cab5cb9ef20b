// SPDX-License-Identifier: MIT
// zap/config.hpp - how a pool is set up.
#pragma once

#include <zap/available_parallelism.hpp>
#include <zap/core_config.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace zap {

struct Config {
    // Upper bound on worker threads; they are spawned lazily, as work
    // arrives (or up front with warm()). 0 means the default: the CPUs this
    // process may use (its affinity mask, capped by its cgroup's CPU quota;
    // available_parallelism.hpp), read once per process. At most 16383
    // (the Sync word's 14-bit counters); more throws std::invalid_argument.
    std::uint32_t max_threads = detail::default_max_threads();
    // Stack bytes per worker, rounded up to what the OS accepts.
    static constexpr std::size_t default_stack_size = detail::CoreConfig::default_stack_size;
    std::size_t stack_size = default_stack_size;
    // Workers are named "<name> <n>" (Linux keeps the first 15 bytes).
    std::string name = "zap";
    // Runs on each worker before its first task, and after its last one.
    // An exception escaping either calls std::terminate.
    std::function<void()> on_thread_start = {};
    std::function<void()> on_thread_exit = {};
    // Receives, on the worker that ran it, an exception that escaped a
    // spawn() task (spawn.hpp); the task is over, the pool goes on. Empty:
    // std::terminate, as for an exception escaping a std::thread. It may run
    // on several workers at once. An exception escaping it calls
    // std::terminate.
    std::function<void(std::exception_ptr)> on_unhandled_exception = {};
    // Not in the contract's list; last, so that the contract's members keep
    // their positions in aggregate initialisation.
    //
    // A wait on a worker runs pool tasks while it waits (helping_wait.hpp);
    // a task run that way may wait and help in turn, on the same stack. Past
    // this many nested helping waits on one worker, a wait only sleeps (woken
    // by its count): this bounds the stack nested waits can take. 0 means one
    // level per KiB of stack_size (4096 with the default stack); tasks with
    // large frames need a lower bound or a larger stack. join()'s drain, which
    // runs leftover tasks on the joining thread, helps under the same bound,
    // capped at 4096 levels (that thread's stack is not the pool's to size).
    // The drop-in layer (TaskGroup, parallel_for, for_each, parallel_invoke)
    // runs its children inline at this bound, so its waits never sleep on
    // work queued behind them.
    std::uint32_t max_help_depth = 0;
    // How long a worker that ran out of work keeps watching for more before
    // it sleeps (pool_core.hpp A8, spin.hpp), in rounds of the CPU's spin
    // hint (x86 `pause`: 2000 rounds took 36 us on an AMD EPYC): work
    // scheduled meanwhile is taken without a futex wake on either side. Only
    // the waking worker spins, so at most one worker of a pool spins at a
    // time, and a pool whose work has ended burns one such spin of CPU. 0:
    // sleep at once (the behaviour before the spin was added).
    std::uint32_t spin_rounds = 2000;
};

}  // namespace zap
