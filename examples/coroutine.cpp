// SPDX-License-Identifier: MIT
// C++20 coroutines on a zap pool: `co_await pool.schedule()` moves the
// coroutine onto one of the pool's workers, and allocates nothing (the task
// the pool links lives in the coroutine's frame). zap brings no coroutine
// type of its own; this file writes the smallest useful one, a lazy Task<T>,
// and a fork/join, both(), on top of it, then computes fib(n) with a hop and
// a fork in every call.
//
// Usage: coroutine [n] [threads]   (defaults: 24, the machine's cores)
#include <zap/zap.hpp>

#include <atomic>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <semaphore>
#include <utility>

namespace {

// A lazy coroutine returning T: it starts when awaited, and when it ends it
// resumes whoever awaited it. A Task shared by a fork (both() below) counts
// down `join` first: only the last child to end resumes the parent.
template <class T>
class Task {
public:
    struct promise_type {
        std::optional<T> value;
        std::exception_ptr error;
        std::coroutine_handle<> continuation;
        std::atomic<int>* join = nullptr;  // set by both(): the children still running

        Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
        std::suspend_always initial_suspend() noexcept { return {}; }
        auto final_suspend() noexcept {
            struct Resume {
                bool await_ready() noexcept { return false; }
                std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> self) noexcept {
                    promise_type& p = self.promise();
                    // acq_rel: the last child to end sees the other's result before the parent reads both.
                    if (p.join != nullptr && p.join->fetch_sub(1, std::memory_order_acq_rel) != 1)
                        return std::noop_coroutine();
                    return p.continuation;  // symmetric transfer: no stack grows
                }
                void await_resume() noexcept {}
            };
            return Resume{};
        }
        void return_value(T v) { value.emplace(std::move(v)); }
        void unhandled_exception() { error = std::current_exception(); }
    };

    Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    ~Task() {
        if (handle_) handle_.destroy();
    }

    // co_await task: start it; resume here when it has ended.
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        handle_.promise().continuation = awaiting;
        return handle_;
    }
    T await_resume() { return result(); }

    T result() {
        if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
        return std::move(*handle_.promise().value);
    }
    std::coroutine_handle<promise_type> handle() const noexcept { return handle_; }

private:
    explicit Task(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
    std::coroutine_handle<promise_type> handle_;
};

// Fork/join: co_await both(a, b) starts both tasks, and resumes when both
// have ended, on whichever thread ended last.
template <class A, class B>
class Both {
public:
    Both(Task<A> a, Task<B> b) : a_(std::move(a)), b_(std::move(b)) {}

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> parent) noexcept {
        for (auto* p : {&a_.handle().promise(), &b_.handle().promise()}) p->continuation = parent;
        a_.handle().promise().join = &left_;
        b_.handle().promise().join = &left_;
        const auto a = a_.handle(), b = b_.handle();
        a.resume();  // runs a until it hops onto the pool (or ends)
        b.resume();  // after this, the parent may already run elsewhere: touch nothing
    }
    std::pair<A, B> await_resume() { return {a_.result(), b_.result()}; }

private:
    Task<A> a_;
    Task<B> b_;
    std::atomic<int> left_{2};
};

template <class A, class B>
Both<A, B> both(Task<A> a, Task<B> b) {
    return Both<A, B>(std::move(a), std::move(b));
}

// Blocks the calling thread (not a worker) until the task has ended.
template <class T>
T sync_wait(Task<T> task) {
    struct Detached {
        struct promise_type {
            Detached get_return_object() noexcept { return {}; }
            std::suspend_never initial_suspend() noexcept { return {}; }
            std::suspend_never final_suspend() noexcept { return {}; }
            void return_void() noexcept {}
            void unhandled_exception() noexcept { std::terminate(); }
        };
    };
    std::binary_semaphore ended{0};
    std::optional<T> result;
    std::exception_ptr error;
    auto waiter = [&]() -> Detached {
        try {
            result.emplace(co_await std::move(task));
        } catch (...) {
            error = std::current_exception();
        }
        ended.release();
    };
    waiter();
    ended.acquire();
    if (error) std::rethrow_exception(error);
    return std::move(*result);
}

// Every call hops onto the pool, then forks its two halves: they run on
// whichever workers pick up their hops, and the last to end resumes this one.
Task<long> fib(zap::ThreadPool& pool, int n) {
    co_await pool.schedule();
    if (n < 2) co_return n;
    auto [x, y] = co_await both(fib(pool, n - 1), fib(pool, n - 2));
    co_return x + y;
}

Task<int> where_am_i(zap::ThreadPool& pool) {
    const bool before = pool.worker_index().has_value();
    co_await pool.schedule();
    const bool after = pool.worker_index().has_value();
    std::printf("before the hop on a worker: %s; after it: %s (worker %u)\n", before ? "yes" : "no",
                after ? "yes" : "no", pool.worker_index().value_or(~0u));
    co_return after && !before ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 24;
    zap::Config config;
    if (argc > 2) config.max_threads = static_cast<std::uint32_t>(std::atoi(argv[2]));
    zap::ThreadPool pool(config);

    int failures = sync_wait(where_am_i(pool));

    const long result = sync_wait(fib(pool, n));
    long a = 0, b = 1;  // the check: fib by iteration
    for (int i = 0; i < n; ++i) a = std::exchange(b, a + b);
    std::printf("fib(%d) = %ld with a hop and a fork per call on %u threads (expected %ld)\n", n, result,
                pool.max_threads(), a);
    failures += result == a ? 0 : 1;
    return failures == 0 ? 0 : 1;
}
