// SPDX-License-Identifier: MIT
// zap/execution.hpp - zap under std::execution (C++26): the pool's
// scheduler, for stdexec (NVIDIA/stdexec, commit e92245d5 or later), the
// reference implementation. Not part of <zap/zap.hpp>: it needs stdexec on
// the include path.
//
//   zap::ThreadPool pool;
//   auto sched = pool.get_scheduler();
//   stdexec::sync_wait(stdexec::schedule(sched) | stdexec::then([] { /* on a worker */ }));
//
// What is here:
//   - BasicScheduler<Platform> (zap::Scheduler for the production pool): a
//     pointer to the pool. Copyable, equal when it names the same pool,
//     `scheduler_concept` declared. schedule() returns a sender whose
//     operation state is schedule_operation.hpp's: the pool's intrusive
//     task, so a schedule allocates nothing; it completes with set_value()
//     on a worker, or with set_stopped() when a stop request came first
//     (Protocol X of schedule_operation.hpp).
//   - The scheduler's domain, which takes `bulk`, `bulk_chunked` and
//     `bulk_unchunked` under stdexec::par or par_unseq and runs them on the
//     pool's own loop (parallel_for, parallel_for.hpp), steps G1-G3 below.
//     Under seq (or unseq) they keep stdexec's default: one call after the
//     other, on the thread the predecessor completed on.
//   - The partial specialization of detail::SchedulerFor that makes
//     BasicThreadPool::get_scheduler() compile (without this header, it
//     stops at a message that names this header).
//
// Bulk on the pool (one bulk operation):
//   G1. The predecessor completes with set_value(args...) - on a worker, when
//       it completes on this scheduler.
//   G2. The bulk receiver runs pool.parallel_for over the work, blocking
//       until every call has returned: on a worker the wait helps (it runs
//       other tasks of the pool, the pieces of this loop among them), so a
//       bulk works on a pool of one thread. bulk and bulk_unchunked:
//       f(i, args...) for each i of [0, shape), parallel_for's pieces.
//       bulk_chunked: [0, shape) is cut into at most 4 * max_threads()
//       chunks of consecutive indices, the shares parallel_for's automatic
//       grain makes, and f(begin, end, args...) is called once per chunk.
//   G3. Every call returned: set_value(args...) downstream. A call threw:
//       as for parallel_for, the other calls still run, and the first
//       exception reaches the receiver as set_error(std::exception_ptr).
//
// Coroutines: an exec::task started on the scheduler (stdexec::starts_on)
// runs on the workers and may co_await stdexec::schedule(sched) and
// pool.schedule() alike (schedule_awaiter.hpp); zap's own coroutine type,
// which needs no stdexec, is lazy.hpp's.
#pragma once

#include <zap/requires_cxx20.hpp>  // first: below C++20, one error that says so

#if !__has_include(<stdexec/execution.hpp>)
#error "zap/execution.hpp needs stdexec (NVIDIA/stdexec, commit e92245d5 or later) on the include path"
#endif

#include <zap/schedule_operation.hpp>
#include <zap/std_platform.hpp>
#include <zap/thread_pool.hpp>

#include <exec/completion_signatures.hpp>
#include <exec/sender_for.hpp>
#include <stdexec/execution.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <exception>
#include <type_traits>
#include <utility>

namespace zap {

template <class Platform>
class BasicScheduler;

namespace detail {

// The operation state of schedule(sched): Protocol X (schedule_operation.hpp)
// with a receiver.
template <class Platform, class Receiver>
class ScheduleState : public ScheduleOperation<Platform, ScheduleState<Platform, Receiver>> {
public:
    using operation_state_concept = stdexec::operation_state_t;

    ScheduleState(BasicThreadPool<Platform>& pool, Receiver receiver) noexcept(
        std::is_nothrow_move_constructible_v<Receiver>)
        : ScheduleOperation<Platform, ScheduleState>(pool), receiver_(std::move(receiver)) {}

    void start() & noexcept { ScheduleOperation<Platform, ScheduleState>::start(); }

    // For Protocol X.
    bool stop_requested() const noexcept {
        if constexpr (stoppable) {
            return stdexec::get_stop_token(stdexec::get_env(receiver_)).stop_requested();
        } else {
            return false;
        }
    }
    void set_value() noexcept { stdexec::set_value(std::move(receiver_)); }
    void set_stopped() noexcept {
        if constexpr (stoppable) stdexec::set_stopped(std::move(receiver_));  // unreachable otherwise
    }

private:
    static constexpr bool stoppable =
        !stdexec::unstoppable_token<stdexec::stop_token_of_t<stdexec::env_of_t<Receiver>>>;

    Receiver receiver_;
};

// The scheduler's domain: bulk under a parallel policy runs on the pool (G1-G3).
template <class Platform>
struct BulkDomain;

// What schedule(sched) returns.
template <class Platform>
class ScheduleSender {
public:
    using sender_concept = stdexec::sender_t;

    explicit ScheduleSender(BasicThreadPool<Platform>& pool) noexcept : pool_(&pool) {}

    // set_stopped() only for a receiver whose stop token can be stopped.
    template <class Self, class Env>
    static consteval auto get_completion_signatures() noexcept {
        if constexpr (stdexec::unstoppable_token<stdexec::stop_token_of_t<Env>>) {
            return stdexec::completion_signatures<stdexec::set_value_t()>();
        } else {
            return stdexec::completion_signatures<stdexec::set_value_t(), stdexec::set_stopped_t()>();
        }
    }

    // Where set_value() happens: on this scheduler.
    struct Attributes {
        BasicThreadPool<Platform>* pool;
        BasicScheduler<Platform> query(stdexec::get_completion_scheduler_t<stdexec::set_value_t>) const noexcept {
            return BasicScheduler<Platform>(*pool);
        }
        BulkDomain<Platform> query(stdexec::get_completion_domain_t<stdexec::set_value_t>) const noexcept {
            return {};
        }
    };
    Attributes get_env() const noexcept { return {pool_}; }

    template <stdexec::receiver Receiver>
    ScheduleState<Platform, Receiver> connect(Receiver receiver) const
        noexcept(std::is_nothrow_move_constructible_v<Receiver>) {
        return ScheduleState<Platform, Receiver>(*pool_, std::move(receiver));
    }

private:
    BasicThreadPool<Platform>* pool_;
};

// The policy of a bulk sender: stdexec keeps a standard policy in a wrapper
// with __get() (its own thread pool reads it so); the standard's bulk keeps
// the policy itself.
template <class Policy>
constexpr bool is_parallel_policy() noexcept {
    using Read = std::remove_cvref_t<decltype([](const Policy& policy) -> decltype(auto) {
        if constexpr (requires { policy.__get(); }) {
            return policy.__get();
        } else {
            return policy;
        }
    }(std::declval<const Policy&>()))>;
    return std::same_as<Read, stdexec::parallel_policy> || std::same_as<Read, stdexec::parallel_unsequenced_policy>;
}

// A bulk sender (tag, data {policy, shape, f}, child) under par or par_unseq.
template <class Sender>
constexpr bool parallel_bulk = decltype([](Sender& sender) {
    auto& [tag, data, child] = sender;
    auto& [policy, shape, fun] = data;
    return std::bool_constant<is_parallel_policy<std::remove_cvref_t<decltype(policy)>>()>{};
}(std::declval<Sender&>()))::value;

// x as Sender is: moved from when Sender is an rvalue, else copied.
template <class Sender, class T>
decltype(auto) like(T& x) noexcept {
    if constexpr (std::is_lvalue_reference_v<Sender> || std::is_const_v<std::remove_reference_t<Sender>>) {
        return static_cast<const T&>(x);
    } else {
        return static_cast<T&&>(x);
    }
}

// G2's call for one index (bulk, bulk_unchunked) or one chunk (bulk_chunked).
template <class Shape, class Fun, bool Chunked>
struct BulkWork {
    Shape shape;
    Fun fun;

    template <class Platform, class... Args>
    void run(BasicThreadPool<Platform>& pool, Args&... args) {
        if (!(Shape{0} < shape)) return;  // nothing to call
        if constexpr (Chunked) {
            // Chunk c starts at c * base + min(c, extra): the first `extra`
            // chunks are one longer. No product exceeds n.
            const std::uint64_t n = static_cast<std::uint64_t>(shape);
            const std::uint64_t chunks = std::min<std::uint64_t>(n, std::uint64_t{4} * pool.max_threads());
            const std::uint64_t base = n / chunks, extra = n % chunks;
            const auto begin = [&](std::uint64_t c) { return static_cast<Shape>(c * base + std::min(c, extra)); };
            const auto chunk = [&](std::uint64_t c) { fun(begin(c), begin(c + 1), args...); };
            pool.parallel_for(std::uint64_t{0}, chunks, chunk);
        } else {
            const auto each = [&](Shape i) { fun(i, args...); };
            pool.parallel_for(Shape{0}, shape, each);
        }
    }
};

// The operation state of a bulk sender on the pool: the predecessor's, and
// the receiver that runs G1-G3.
template <class Platform, class Child, class Work, class Receiver>
class BulkState {
public:
    using operation_state_concept = stdexec::operation_state_t;

    BulkState(BasicThreadPool<Platform>& pool, Child&& child, Work work, Receiver receiver)
        : pool_(pool), work_(std::move(work)), receiver_(std::move(receiver)),
          child_(stdexec::connect(std::forward<Child>(child), Inner{this})) {}

    void start() & noexcept { stdexec::start(child_); }

private:
    // The receiver the predecessor completes (G1).
    struct Inner {
        using receiver_concept = stdexec::receiver_t;
        BulkState* state;

        // G2-G3.
        template <class... Args>
        void set_value(Args&&... args) && noexcept {
            try {
                state->work_.run(state->pool_, args...);
            } catch (...) {
                stdexec::set_error(std::move(state->receiver_), std::current_exception());
                return;
            }
            stdexec::set_value(std::move(state->receiver_), std::forward<Args>(args)...);
        }
        template <class Error>
        void set_error(Error&& error) && noexcept {
            stdexec::set_error(std::move(state->receiver_), std::forward<Error>(error));
        }
        void set_stopped() && noexcept { stdexec::set_stopped(std::move(state->receiver_)); }
        decltype(auto) get_env() const noexcept { return stdexec::get_env(state->receiver_); }
    };

    BasicThreadPool<Platform>& pool_;
    Work work_;
    Receiver receiver_;
    stdexec::connect_result_t<Child, Inner> child_;
};

// The sender the domain makes of a bulk sender under a parallel policy.
template <class Platform, class Child, class Work>
class BulkSender {
public:
    using sender_concept = stdexec::sender_t;

    BulkSender(BasicThreadPool<Platform>& pool, Child child, Work work)
        : pool_(&pool), child_(std::move(child)), work_(std::move(work)) {}

    // The predecessor's completions, and set_error(std::exception_ptr) for G3.
    template <class Self, class... Env>
    static consteval auto get_completion_signatures() {
        using CvChild = decltype(like<Self>(std::declval<Child&>()));
        return exec::concat_completion_signatures(
            stdexec::get_completion_signatures<CvChild, Env...>(),
            stdexec::completion_signatures<stdexec::set_error_t(std::exception_ptr)>());
    }

    decltype(auto) get_env() const noexcept { return stdexec::get_env(child_); }

    template <stdexec::receiver Receiver>
    BulkState<Platform, Child, Work, Receiver> connect(Receiver receiver) && {
        return BulkState<Platform, Child, Work, Receiver>(*pool_, std::move(child_), std::move(work_),
                                                          std::move(receiver));
    }
    template <stdexec::receiver Receiver>
    BulkState<Platform, const Child&, Work, Receiver> connect(Receiver receiver) const& {
        return BulkState<Platform, const Child&, Work, Receiver>(*pool_, child_, work_, std::move(receiver));
    }

private:
    BasicThreadPool<Platform>* pool_;
    Child child_;
    Work work_;
};

template <class Platform>
struct BulkDomain : stdexec::default_domain {
    // bulk is taken before stdexec's default lowers it to bulk_chunked (whose
    // chunk function stops at its first throw): so each of its calls is one
    // index of the loop, and a throw cancels no other call (G3). Under seq
    // and unseq no overload matches, and the default domain runs the calls
    // one after the other.
    template <class Sender, class Env>
        requires(exec::sender_for<Sender, stdexec::bulk_t> ||
                 exec::sender_for<Sender, stdexec::bulk_chunked_t> ||
                 exec::sender_for<Sender, stdexec::bulk_unchunked_t>) &&
                parallel_bulk<std::remove_reference_t<Sender>>
    auto transform_sender(stdexec::set_value_t, Sender&& sender, const Env& env) const {
        constexpr bool chunked = exec::sender_for<Sender, stdexec::bulk_chunked_t>;  // else one index per call
        auto scheduler = stdexec::get_completion_scheduler<stdexec::set_value_t>(stdexec::get_env(sender), env);
        static_assert(std::same_as<decltype(scheduler), BasicScheduler<Platform>>,
                      "zap's bulk domain is reached only through a zap scheduler");
        auto& [tag, data, child] = sender;
        auto& [policy, shape, fun] = data;
        using Work = BulkWork<std::remove_cvref_t<decltype(shape)>, std::remove_cvref_t<decltype(fun)>, chunked>;
        using Child = std::remove_cvref_t<decltype(child)>;
        return BulkSender<Platform, Child, Work>(scheduler.pool(), like<Sender>(child), Work{shape, like<Sender>(fun)});
    }
};

template <class Platform>
struct SchedulerFor<BasicThreadPool<Platform>> {
    static BasicScheduler<Platform> make(BasicThreadPool<Platform>& pool) noexcept {
        return BasicScheduler<Platform>(pool);
    }
};

}  // namespace detail

template <class Platform>
class BasicScheduler {
public:
    using scheduler_concept = stdexec::scheduler_t;

    explicit BasicScheduler(BasicThreadPool<Platform>& pool) noexcept : pool_(&pool) {}

    detail::ScheduleSender<Platform> schedule() const noexcept { return detail::ScheduleSender<Platform>(*pool_); }

    // Equal when they name the same pool.
    friend bool operator==(const BasicScheduler&, const BasicScheduler&) noexcept = default;

    BasicThreadPool<Platform>& pool() const noexcept { return *pool_; }

    // Every worker is an OS thread: what one runs makes progress whatever the others do.
    static constexpr stdexec::forward_progress_guarantee query(stdexec::get_forward_progress_guarantee_t) noexcept {
        return stdexec::forward_progress_guarantee::parallel;
    }
    BasicScheduler query(stdexec::get_completion_scheduler_t<stdexec::set_value_t>) const noexcept { return *this; }
    detail::BulkDomain<Platform> query(stdexec::get_completion_domain_t<stdexec::set_value_t>) const noexcept {
        return {};
    }

private:
    BasicThreadPool<Platform>* pool_;
};

using Scheduler = BasicScheduler<StdPlatform>;

}  // namespace zap
