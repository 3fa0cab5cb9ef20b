// SPDX-License-Identifier: MIT
// zap/zap.hpp - the one include: the pool, its tasks and batches, WaitGroup,
// and the drop-in layer (spawn/submit/parallel_for/for_each/parallel_invoke,
// parallel_reduce/transform_reduce, TaskGroup with cancel(), worker_index(),
// `co_await pool.schedule()`); the coroutine type Lazy with when_all and
// sync_wait; Parker, Mailbox and ObjectPool. (std::execution: execution.hpp.)
//
// The templates take a Platform (platform.hpp); these aliases are the
// production instantiation that programs use.
//
// The first include stops a compile below C++20 with one error that says so.
#pragma once

#include <zap/requires_cxx20.hpp>
#include <zap/version.hpp>

#include <zap/batch.hpp>
#include <zap/config.hpp>
#include <zap/lazy.hpp>
#include <zap/mailbox.hpp>
#include <zap/object_pool.hpp>
#include <zap/parker.hpp>
#include <zap/std_platform.hpp>
#include <zap/task.hpp>
#include <zap/task_group.hpp>
#include <zap/thread_pool.hpp>
#include <zap/wait_group.hpp>

#include <utility>
#include <vector>

namespace zap {

using Task = BasicTask<StdPlatform>;
using Batch = BasicBatch<StdPlatform>;
using ThreadPool = BasicThreadPool<StdPlatform>;
using WaitGroup = BasicWaitGroup<StdPlatform>;
using TaskGroup = BasicTaskGroup<StdPlatform>;
using Parker = BasicParker<StdPlatform>;
template <move_constructs_without_throwing T>
using Mailbox = BasicMailbox<StdPlatform, T>;
template <move_constructs_without_throwing T>
using ObjectPool = BasicObjectPool<StdPlatform, T>;

// Lazy's fork and wait on this platform (lazy.hpp).
template <class T>
T sync_wait(Lazy<T> lazy) {
    return basic_sync_wait<StdPlatform>(std::move(lazy));
}
template <class... Ts>
auto when_all(Lazy<Ts>... children) {
    return basic_when_all<StdPlatform>(std::move(children)...);
}
template <class T>
auto when_all(std::vector<Lazy<T>> children) {
    return basic_when_all<StdPlatform>(std::move(children));
}

}  // namespace zap
