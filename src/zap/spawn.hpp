// SPDX-License-Identifier: MIT
// zap/spawn.hpp - heap tasks: a callable made into a task with one
// allocation; spawn() and submit() are built on them, and so are
// TaskGroup's children (task_group.hpp).
//
// Protocol (one heap task):
//   1. make: one allocation (closure_alloc.hpp) holds a HeapTask - the Task header the
//      pool links, and a Job that owns the callable (moved or copied in).
//      If constructing the Job throws, the memory is given back and the
//      exception reaches the caller; nothing was scheduled.
//   2. schedule: the pool owns nothing but the link; the task owns itself.
//   3. run: the Job executes the callable (Job::execute is noexcept: each Job
//      says what becomes of an exception) and returns an Outcome.
//   4. free: the HeapTask - the callable and its captures included - is
//      destroyed and its memory given back, still inside the callback, which
//      the pool allows (task.hpp: the pool never touches a task after calling it).
//   5. publish: only then is the Outcome published (a future made ready, a
//      TaskGroup counted done). So whoever waits for the result never sees
//      the callable still alive: its captures are gone when the wait returns.
//
// The low-level path (schedule() of the caller's own Task) never comes here
// and stays allocation-free.
//
// After shutdown(), spawn() and submit() from a thread that is not running a
// task of the pool break schedule()'s rule: debug builds abort naming it;
// release builds run the task on the calling thread before returning (so
// submit()'s future is ready). From a task of the pool they are part of the drain.
#pragma once

#include <zap/closure_alloc.hpp>
#include <zap/task.hpp>

#include <exception>
#include <functional>
#include <future>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace zap {

template <class Platform>
class BasicThreadPool;  // thread_pool.hpp, which includes this header

namespace detail {

// Steps 1-5 for a Job: `Outcome execute() noexcept` and `void Outcome::publish() && noexcept`.
template <class Platform, class Job>
class HeapTask : public BasicTask<Platform> {
public:
    // Step 1. The returned task belongs to itself once scheduled (step 2).
    template <class... Args>
    static HeapTask* make(Args&&... args) {
        void* memory = Memory::allocate(sizeof(HeapTask), alignof(HeapTask));
        try {
            return new (memory) HeapTask(std::forward<Args>(args)...);
        } catch (...) {
            Memory::deallocate(memory, sizeof(HeapTask), alignof(HeapTask));
            throw;
        }
    }

private:
    // Step 1's memory: recycled blocks (closure_alloc.hpp) where the Platform opts in.
    using Memory = std::conditional_t<requires { Platform::recycles_closures; }, ClosureMemory<Platform>, Platform>;

    template <class... Args>
    explicit HeapTask(Args&&... args) : BasicTask<Platform>(&run), job_(std::forward<Args>(args)...) {}

    // Steps 3-5.
    static void run(BasicTask<Platform>* task) noexcept {
        auto* self = static_cast<HeapTask*>(task);
        auto outcome = self->job_.execute();
        self->~HeapTask();
        Memory::deallocate(self, sizeof(HeapTask), alignof(HeapTask));
        std::move(outcome).publish();
    }

    Job job_;
};

// The handler a pool was configured with (Config::on_unhandled_exception).
using ExceptionHandler = std::function<void(std::exception_ptr)>;

// A spawn() task's Outcome: the exception that escaped it, if any, handed to
// the pool's handler once the task is freed (step 5, like any Outcome).
struct Unhandled {
    const ExceptionHandler* handler;
    std::exception_ptr error;
    void publish() && noexcept {
        if (error) (*handler)(std::move(error));  // a throwing handler reaches the noexcept: std::terminate
    }
};

// spawn(): fire and forget. Without a handler, an exception escaping the
// callable reaches the noexcept execute() and calls std::terminate, as it
// would on a std::thread (at the throw, the stack left for a debugger).
template <class F>
struct Spawned {
    F f;
    const ExceptionHandler* handler;  // null: no Config::on_unhandled_exception

    Unhandled execute() noexcept {
        if (handler == nullptr) {
            std::invoke(std::move(f));  // it runs once: invoked as an rvalue, as std::thread does
            return {nullptr, nullptr};
        }
        try {
            std::invoke(std::move(f));
            return {handler, nullptr};
        } catch (...) {
            return {handler, std::current_exception()};
        }
    }
};

// What a submitted callable produced, carried past step 4 to fill the future.
template <class R>
struct Delivery {
    // A reference result is kept as a pointer, a value result is moved; void keeps nothing.
    using Stored = std::conditional_t<std::is_void_v<R>, std::monostate,
                                      std::conditional_t<std::is_reference_v<R>, std::remove_reference_t<R>*, R>>;

    std::promise<R> promise;
    std::optional<Stored> value;  // empty for void, and after an exception
    std::exception_ptr error;

    void publish() && noexcept {
        try {
            if (error) {
                promise.set_exception(error);
            } else if constexpr (std::is_void_v<R>) {
                promise.set_value();
            } else if constexpr (std::is_reference_v<R>) {
                promise.set_value(**value);
            } else {
                promise.set_value(std::move(*value));
            }
        } catch (...) {
            promise.set_exception(std::current_exception());  // the result's move constructor threw
        }
    }
};

// submit(): the result, or the exception, goes into the future.
template <class F, class R>
struct Submitted {
    F f;
    std::promise<R> promise;

    Delivery<R> execute() noexcept {
        Delivery<R> delivery{std::move(promise), std::nullopt, nullptr};
        try {
            if constexpr (std::is_void_v<R>) {
                std::invoke(std::move(f));
            } else if constexpr (std::is_reference_v<R>) {
                delivery.value.emplace(&std::invoke(std::move(f)));
            } else {
                delivery.value.emplace(std::invoke(std::move(f)));
            }
        } catch (...) {
            delivery.error = std::current_exception();
        }
        return delivery;
    }
};

// Steps 1-2: allocates the task for `job` and hands it to the pool.
template <class Platform, class Job>
void schedule_heap_task(BasicThreadPool<Platform>& pool, Job&& job) {
    pool.schedule(*HeapTask<Platform, std::decay_t<Job>>::make(std::forward<Job>(job)));
}

template <class Platform, class F>
void spawn(BasicThreadPool<Platform>& pool, F&& f) {
    schedule_heap_task(pool, Spawned<std::decay_t<F>>{std::forward<F>(f), pool.unhandled_exception_handler()});
}

template <class Platform, class F>
auto submit(BasicThreadPool<Platform>& pool, F&& f) -> std::future<std::invoke_result_t<std::decay_t<F>>> {
    using R = std::invoke_result_t<std::decay_t<F>>;
    std::promise<R> promise;
    std::future<R> future = promise.get_future();
    schedule_heap_task(pool, Submitted<std::decay_t<F>, R>{std::forward<F>(f), std::move(promise)});
    return future;
}

}  // namespace detail
}  // namespace zap
