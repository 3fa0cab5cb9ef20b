// zap/zap.hpp - the one include: the pool, its tasks and batches, WaitGroup,
// and the drop-in layer (spawn/submit/parallel_for/for_each, TaskGroup).
//
// The templates take a Platform (platform.hpp); these aliases are the
// production instantiation that programs use.
#pragma once

#include <zap/batch.hpp>
#include <zap/config.hpp>
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

}  // namespace zap
