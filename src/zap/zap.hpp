// SPDX-License-Identifier: MIT
// zap/zap.hpp - the one include: the pool, its tasks and batches, WaitGroup,
// and the drop-in layer (spawn/submit/parallel_for/for_each/parallel_invoke,
// parallel_reduce/transform_reduce, TaskGroup with cancel(), worker_index(),
// `co_await pool.schedule()`); Parker, Mailbox and ObjectPool.
//
// The templates take a Platform (platform.hpp); these aliases are the
// production instantiation that programs use.
#pragma once

// zap is C++20 (concepts, std::stop_token, std::source_location...): below
// it, stop here with one line that says so, before any other error.
#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 202002L
#error "zap needs C++20: compile with -std=c++20 (or /std:c++20), or later"
#endif

#include <zap/batch.hpp>
#include <zap/config.hpp>
#include <zap/mailbox.hpp>
#include <zap/object_pool.hpp>
#include <zap/parker.hpp>
#include <zap/std_platform.hpp>
#include <zap/task.hpp>
#include <zap/task_group.hpp>
#include <zap/thread_pool.hpp>
#include <zap/wait_group.hpp>

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

}  // namespace zap
