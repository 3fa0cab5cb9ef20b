// SPDX-License-Identifier: MIT
// zap/lazy.hpp - Lazy<T>, zap's coroutine type: a coroutine that returns a
// T (or throws), starts when it is awaited, and resumes its awaiter when it
// ends. With `co_await pool.schedule()` (schedule_awaiter.hpp) it moves onto
// the pool; with when_all() it forks; sync_wait() runs one from ordinary
// code. It needs nothing but C++20 (std::execution users have exec::task and
// execution.hpp's scheduler instead, or as well).
//
//   zap::Lazy<long> sum(zap::ThreadPool& pool, std::span<const int> part) {
//       co_await pool.schedule();                       // now on a worker
//       co_return std::accumulate(part.begin(), part.end(), 0L);
//   }
//   auto [a, b] = zap::sync_wait(zap::when_all(sum(pool, left), sum(pool, right)));
//
// when_all and sync_wait touch atomics (a join's count, a WaitGroup), so
// they take the Platform, as every template of src/zap does:
// basic_when_all<Platform> and basic_sync_wait<Platform> here, and
// zap::when_all and zap::sync_wait, the production pair, in zap.hpp.
//
// Allocation: each Lazy is one coroutine frame (operator new, as every C++
// coroutine's), which holds its promise: the result, the exception, where to
// go at the end. Awaiting, a hop, when_all's join and sync_wait's wait
// allocate nothing more (when_all is itself a Lazy: one frame; the vector
// form's results are a std::vector, the caller's).
//
// Protocol CO - one Lazy's life:
//   CO1. Calling the coroutine makes its frame and stops before the body
//        (initial suspend): nothing runs yet.
//   CO2. `co_await lazy` records the awaiting coroutine in the promise and
//        transfers to the lazy (symmetric transfer: await_suspend returns
//        the lazy's handle, so no stack frame is left behind, however long
//        a chain of awaits). The lazy runs on the awaiting thread until its
//        first suspension, a hop onto the pool for instance.
//   CO3. At its end (co_return, or an exception stored in the promise), the
//        final suspension transfers to whoever waits: the awaiting
//        coroutine, or the arrival of when_all's join (CO6) or of sync_wait
//        (CO9), which says whom to resume, if anyone. That transfer is the
//        lazy's last touch of its frame: from then on its owner may destroy
//        it.
//   CO4. await_resume hands the result over (moved out), or rethrows the
//        exception. The Lazy object's destructor destroys the frame. A Lazy
//        is awaited (or given to when_all or sync_wait) once: a second time
//        is a contract violation, asserted in debug builds.
//
// when_all(children...) - the join, which lives in the awaiter, in the
// when_all frame:
//   CO5. The join's count starts at n + 1: one share per child, and one for
//        the parent itself while it starts them. The parent (suspended, in
//        await_suspend) records itself as the join's continuation, names
//        the join as each child's end (CO3), and resumes the children one
//        after the other: each runs on this thread until it first suspends
//        (a hop onto the pool: from there it runs on a worker) or ends.
//   CO6. Arrival: fetch_sub(1) (acq_rel) on the count. A child arrives from
//        its final suspension; the arrival that takes the count to zero
//        resumes the parent (a child: by symmetric transfer), every other
//        arrival resumes nobody. Release: the child's result, written before
//        its final suspension, happens before the last arrival; acquire: the
//        last arrival, and the parent it resumes, see every child's result.
//   CO7. Having started every child, the parent arrives for its own share.
//        If that arrival is the last (every child ended while the parent
//        started them), the parent does not suspend: it goes on at once.
//        Otherwise it has suspended, and the last child resumes it; the
//        parent's await_suspend touches nothing after its arrival, since by
//        then the parent may already run, on another thread.
//   CO8. The parent (await_resume) takes the results in order; if children
//        threw, it rethrows the exception of the first one (by position)
//        once every child has ended. Nothing is canceled: every child runs.
//   Why n + 1: without the parent's share, the last child to end could
//   resume the parent - which may then end the when_all frame, awaiter and
//   children with it - while the parent's thread is still returning from
//   starting that child, inside its loop over the children (the vector
//   form reads the loop's end after each start); and a last child that
//   ends inline would resume the parent nested inside await_suspend, a
//   stack frame deeper. With the share, the parent's arrival after the
//   loop is its last touch (CO7), and an inline end never resumes it.
//
// sync_wait(lazy):
//   CO9.  The lazy's end is a WaitGroup's done() (wait_group.hpp): sync_wait
//         adds one, resumes the lazy on the calling thread (CO2's run until
//         the first suspension), then waits for the group.
//   CO10. On a worker of a pool that wait helps (Protocol H): it runs the
//         pool's tasks, the lazy's own hops among them, so sync_wait works
//         from inside a task even on a pool of one thread. Off the pool it
//         blocks. The group's done() is the lazy's last touch (W1), then
//         sync_wait reads the result and destroys the frame.
//
// Where it runs: every statement of a lazy runs on the thread that last
// resumed it - the awaiting thread until the first hop, then a worker, and
// after a when_all, the thread of the last arrival (CO6-CO7).
//
// A compiler caveat: clang 14 and older at -O2 may keep the value of
// std::this_thread::get_id() (pthread_self(), declared const) from before a
// co_await and use it after, although the coroutine resumed on another
// thread (LLVM bug llvm/llvm-project#47177); thread_local variables there
// had the same bug until clang 16. Code that needs the current thread after
// a hop should ask the pool: pool.worker_index() reads the worker's context
// afresh on every call (tests/test_lazy.cpp checks it after every hop, and
// unit.lazy.clang_o2 runs those checks built by clang at -O2).
#pragma once

#include <zap/assert.hpp>
#include <zap/wait_group.hpp>

#include <coroutine>
#include <cstddef>
#include <exception>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace zap {

template <class T = void>
class Lazy;

namespace detail {

// Where a lazy goes at its end when it is not simply awaited (CO3): a
// when_all join (CO6) or sync_wait's group (CO9). Returns whom to resume.
struct LazyEnd {
    std::coroutine_handle<> (*arrive)(void* at) noexcept = nullptr;
    void* at = nullptr;
};

// The result slot of a promise: nothing yet, the value, or the exception.
template <class T>
class LazyResult {
public:
    template <class U = T>
        requires std::is_convertible_v<U&&, T>
    void return_value(U&& value) {
        result_.template emplace<1>(std::forward<U>(value));
    }
    void unhandled_exception() noexcept { result_.template emplace<2>(std::current_exception()); }

    bool failed() const noexcept { return result_.index() == 2; }
    std::exception_ptr error() const noexcept { return failed() ? std::get<2>(result_) : nullptr; }
    T take() {
        if (failed()) std::rethrow_exception(std::get<2>(result_));
        return std::move(std::get<1>(result_));
    }

private:
    std::variant<std::monostate, T, std::exception_ptr> result_;
};

template <>
class LazyResult<void> {
public:
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error_ = std::current_exception(); }

    bool failed() const noexcept { return error_ != nullptr; }
    std::exception_ptr error() const noexcept { return error_; }
    void take() {
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::exception_ptr error_;
};

template <class T>
struct LazyPromise : LazyResult<T> {
    std::coroutine_handle<> continuation;  // CO2: the awaiting coroutine
    LazyEnd end;                           // or, when set, this (CO3)
    bool started = false;                  // CO4: a lazy runs once

    Lazy<T> get_return_object() noexcept;
    std::suspend_always initial_suspend() noexcept { return {}; }  // CO1

    // CO3.
    struct Final {
        static constexpr bool await_ready() noexcept { return false; }
        std::coroutine_handle<> await_suspend(std::coroutine_handle<LazyPromise> self) noexcept {
            const LazyPromise& promise = self.promise();
            if (promise.end.arrive != nullptr) return promise.end.arrive(promise.end.at);  // the last touch
            return promise.continuation;
        }
        static constexpr void await_resume() noexcept {}
    };
    Final final_suspend() noexcept { return {}; }
};

// What a child of when_all contributes: its value, or std::monostate for void.
template <class T>
using LazyValue = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

template <class T>
LazyValue<T> take_value(LazyPromise<T>& promise) {
    if constexpr (std::is_void_v<T>) {
        promise.take();
        return {};
    } else {
        return promise.take();
    }
}

struct LazyDoor;

}  // namespace detail

template <class T>
class [[nodiscard]] Lazy {
    static_assert(std::is_void_v<T> || std::is_object_v<T>, "zap::Lazy<T> returns a value or void, not a reference");

public:
    using promise_type = detail::LazyPromise<T>;

    Lazy(Lazy&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Lazy& operator=(Lazy&& other) noexcept {
        if (this != &other) {
            if (handle_) handle_.destroy();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    ~Lazy() {
        if (handle_) handle_.destroy();
    }

    // CO2-CO4.
    auto operator co_await() noexcept {
        struct Awaiter {
            std::coroutine_handle<promise_type> lazy;
            static constexpr bool await_ready() noexcept { return false; }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
                lazy.promise().continuation = awaiting;
                return lazy;  // symmetric transfer (CO2)
            }
            T await_resume() { return lazy.promise().take(); }  // CO4
        };
        return Awaiter{start()};
    }

private:
    friend promise_type;
    friend struct detail::LazyDoor;

    explicit Lazy(std::coroutine_handle<promise_type> handle) noexcept : handle_(handle) {}

    // CO4: the handle, checked to be runnable and marked as started.
    std::coroutine_handle<promise_type> start() noexcept {
        ZAP_ASSERT(handle_ && !handle_.promise().started, "a zap::Lazy is awaited once (and not after a move)");
        handle_.promise().started = true;
        return handle_;
    }

    std::coroutine_handle<promise_type> handle_;
};

namespace detail {

template <class T>
Lazy<T> LazyPromise<T>::get_return_object() noexcept {
    return Lazy<T>(std::coroutine_handle<LazyPromise>::from_promise(*this));
}

// The one door to a Lazy's frame, for when_all and sync_wait.
struct LazyDoor {
    template <class T>
    static std::coroutine_handle<LazyPromise<T>> start(Lazy<T>& lazy) noexcept {
        return lazy.start();
    }
    template <class T>
    static LazyPromise<T>& promise(Lazy<T>& lazy) noexcept {
        return lazy.handle_.promise();
    }
};

// CO5-CO7: the count of shares, and the parent to resume.
template <class Platform>
class LazyJoin {
public:
    explicit LazyJoin(std::size_t children) noexcept : left_(children + 1) {}
    LazyJoin(const LazyJoin&) = delete;
    LazyJoin& operator=(const LazyJoin&) = delete;

    // CO5, for each child in turn.
    template <class T>
    void start(Lazy<T>& child) noexcept {
        const auto handle = LazyDoor::start(child);
        handle.promise().end = {&child_arrives, this};
        handle.resume();  // runs until the child first suspends or ends
    }

    // CO5-CO7: true when the parent must stay suspended.
    template <class... Children>
    bool start_all(std::coroutine_handle<> parent, Children&... children) noexcept {
        parent_.write(parent.address());  // read by the last arrival, after its acquire (CO6)
        (start(children), ...);
        return !arrive();  // CO7: the last touch
    }

    template <class T>
    bool start_all(std::coroutine_handle<> parent, std::vector<Lazy<T>>& children) noexcept {
        parent_.write(parent.address());
        for (Lazy<T>& child : children) start(child);
        return !arrive();
    }

private:
    // CO6: true for the arrival that takes the count to zero.
    bool arrive() noexcept {
        // Release: this share's result happens before the last arrival.
        // Acquire: the last arrival sees every result (and the parent's write).
        return left_.fetch_sub(1, std::memory_order_acq_rel) == 1;
    }

    static std::coroutine_handle<> child_arrives(void* at) noexcept {
        LazyJoin& join = *static_cast<LazyJoin*>(at);
        if (!join.arrive()) return std::noop_coroutine();
        return std::coroutine_handle<>::from_address(join.parent_.read());
    }

    typename Platform::template Atomic<std::size_t> left_;
    typename Platform::template Cell<void*> parent_;  // the parent's handle, as an address
};

// when_all's awaiter: the children and their join, in the when_all frame.
template <class Platform, class... Ts>
class WhenAll {
public:
    explicit WhenAll(Lazy<Ts>&&... children) noexcept : children_(std::move(children)...) {}

    static constexpr bool await_ready() noexcept { return sizeof...(Ts) == 0; }
    bool await_suspend(std::coroutine_handle<> parent) noexcept {
        return std::apply([&](Lazy<Ts>&... children) { return join_.start_all(parent, children...); }, children_);
    }
    // CO8.
    std::tuple<LazyValue<Ts>...> await_resume() {
        return std::apply(
            [](Lazy<Ts>&... children) {
                rethrow_first(LazyDoor::promise(children)...);
                return std::tuple<LazyValue<Ts>...>{take_value(LazyDoor::promise(children))...};
            },
            children_);
    }

private:
    template <class... Promises>
    static void rethrow_first(Promises&... promises) {
        std::exception_ptr first;
        ((first = first ? first : promises.error()), ...);
        if (first) std::rethrow_exception(first);
    }

    std::tuple<Lazy<Ts>...> children_;
    LazyJoin<Platform> join_{sizeof...(Ts)};
};

template <class Platform, class T>
class WhenAllOf {
public:
    explicit WhenAllOf(std::vector<Lazy<T>>&& children) noexcept
        : children_(std::move(children)), join_(children_.size()) {}

    bool await_ready() const noexcept { return children_.empty(); }
    bool await_suspend(std::coroutine_handle<> parent) noexcept { return join_.start_all(parent, children_); }
    // CO8.
    auto await_resume() {
        for (Lazy<T>& child : children_) {
            if (LazyDoor::promise(child).failed()) std::rethrow_exception(LazyDoor::promise(child).error());
        }
        if constexpr (!std::is_void_v<T>) {
            std::vector<T> results;
            results.reserve(children_.size());
            for (Lazy<T>& child : children_) results.push_back(LazyDoor::promise(child).take());
            return results;
        }
    }

private:
    std::vector<Lazy<T>> children_;
    LazyJoin<Platform> join_;
};

// CO9: the WaitGroup's done() as the lazy's end.
template <class Platform>
std::coroutine_handle<> sync_wait_arrives(void* at) noexcept {
    static_cast<BasicWaitGroup<Platform>*>(at)->done();  // the last touch (W1)
    return std::noop_coroutine();
}

// CO9-CO10.
template <class Platform, class T>
T sync_wait(Lazy<T> lazy) {
    BasicWaitGroup<Platform> ended;
    ended.add();
    const auto handle = LazyDoor::start(lazy);
    handle.promise().end = {&sync_wait_arrives<Platform>, &ended};
    handle.resume();
    ended.wait();
    return handle.promise().take();
}

}  // namespace detail

// Runs `lazy` and returns its result (or rethrows its exception), blocking
// the calling thread meanwhile - on a worker of a pool, helping it (CO10).
template <class Platform, class T>
T basic_sync_wait(Lazy<T> lazy) {
    return detail::sync_wait<Platform>(std::move(lazy));
}

// Starts every child, resumes when all have ended: their results in a tuple
// (std::monostate for a Lazy<void>), or the first child's exception (CO5-CO8).
template <class Platform, class... Ts>
Lazy<std::tuple<detail::LazyValue<Ts>...>> basic_when_all(Lazy<Ts>... children) {
    co_return co_await detail::WhenAll<Platform, Ts...>(std::move(children)...);
}

// The same for a run-time number of children of one type: their results in
// order (nothing for Lazy<void>).
template <class Platform, class T>
Lazy<std::conditional_t<std::is_void_v<T>, void, std::vector<T>>> basic_when_all(std::vector<Lazy<T>> children) {
    if constexpr (std::is_void_v<T>) {
        co_await detail::WhenAllOf<Platform, T>(std::move(children));
    } else {
        co_return co_await detail::WhenAllOf<Platform, T>(std::move(children));
    }
}

}  // namespace zap
