// SPDX-License-Identifier: MIT
// zap/schedule_awaiter.hpp - `co_await pool.schedule()`: a C++20 coroutine
// suspends and resumes on one of the pool's workers, with no allocation.
//
// The awaiter is itself the pool's intrusive task. `co_await expr` keeps the
// awaiter that `expr` returned alive in the coroutine's frame until the
// coroutine resumes, so the frame the coroutine already has is where the
// task lives: a hop allocates nothing (counted: test_schedule_awaiter.cpp
// and bench/run's `hop` row).
//
// Protocol (one hop):
//   1. co_await pool.schedule(): await_ready() is false, so the coroutine
//      suspends; then await_suspend(handle) stores the handle in the
//      awaiter and calls pool.schedule(*this) - from a worker of the pool
//      into its own ring, from any other thread into the global queue
//      (Protocol A1). Its last touch of the awaiter is the push: the moment
//      it is published a worker may run it, resume the coroutine and end
//      the frame the awaiter lives in.
//   2. A worker runs the task: the callback copies the handle out of the
//      awaiter, then resumes the coroutine (task.hpp: the pool never touches
//      a task after calling its callback, and neither does the callback
//      after resume() starts). The coroutine runs on that worker until it
//      next suspends or ends.
//   3. await_resume() returns nothing: the coroutine simply goes on, now on
//      the worker.
//
// After shutdown(): a hop from a thread that is not running a task of the
// pool breaks schedule()'s rule; debug builds abort naming it, release
// builds run the task on the calling thread, so the coroutine resumes there,
// inside await_suspend (allowed: it is suspended by then). From a task of
// the pool the hop is part of the drain.
//
// An exception that leaves the coroutine's resume() (its promise's
// unhandled_exception() rethrew it) reaches the noexcept task callback:
// std::terminate. Usual task types store the exception in the promise.
#pragma once

#include <zap/assert.hpp>
#include <zap/task.hpp>

#include <coroutine>

namespace zap {

template <class Platform>
class BasicThreadPool;  // thread_pool.hpp, which includes this header

namespace detail {

template <class Platform>
class ScheduleAwaiter : private BasicTask<Platform> {
public:
    explicit ScheduleAwaiter(BasicThreadPool<Platform>& pool) noexcept
        : BasicTask<Platform>(&resume_task), pool_(pool) {}
    // Movable until it is awaited (a coroutine type's await_transform may
    // take it by value: exec::task does); once step 1 has scheduled it, it
    // is linked into the pool's queues and must stay where it is. It is
    // not copyable: one hop, one task.
    ScheduleAwaiter(ScheduleAwaiter&& other) noexcept : BasicTask<Platform>(&resume_task), pool_(other.pool_) {
        ZAP_ASSERT(!other.handle_, "a schedule awaiter moved after it was awaited (it is linked into the pool's queues)");
    }
    ScheduleAwaiter(const ScheduleAwaiter&) = delete;
    ScheduleAwaiter& operator=(const ScheduleAwaiter&) = delete;

    static constexpr bool await_ready() noexcept { return false; }

    // Step 1.
    void await_suspend(std::coroutine_handle<> handle) noexcept {
        handle_ = handle;  // published to the worker by schedule()'s push (A1)
        pool_.schedule(static_cast<BasicTask<Platform>&>(*this));
    }

    // Step 3.
    static constexpr void await_resume() noexcept {}

private:
    // Step 2.
    static void resume_task(BasicTask<Platform>* task) noexcept {
        const std::coroutine_handle<> handle = static_cast<ScheduleAwaiter*>(task)->handle_;
        handle.resume();  // may end the frame, and this awaiter with it
    }

    BasicThreadPool<Platform>& pool_;
    std::coroutine_handle<> handle_;
};

}  // namespace detail
}  // namespace zap
