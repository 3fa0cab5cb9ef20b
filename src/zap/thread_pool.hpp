// SPDX-License-Identifier: MIT
// zap/thread_pool.hpp - the pool as programs use it. BasicThreadPool is the
// pool's core (pool_core.hpp: scheduling, sleeping and waking workers, lazy
// spawning, shutdown and join; Protocols A and B, and the pool's side of
// Protocol H) plus what needs the standard library's heavier headers: the
// parts of Config that are std::string and std::function (the workers'
// names, the thread hooks, the handler of an exception escaping a spawn()
// task), and the drop-in layer (spawn, submit, parallel_for, for_each,
// parallel_invoke, parallel_reduce, transform_reduce, isolate,
// `co_await pool.schedule()`).
#pragma once

#include <zap/callable_rules.hpp>
#include <zap/config.hpp>
#include <zap/parallel_for.hpp>
#include <zap/parallel_reduce.hpp>
#include <zap/pool_core.hpp>
#include <zap/schedule_awaiter.hpp>
#include <zap/schedule_operation.hpp>
#include <zap/spawn.hpp>
#include <zap/sync.hpp>

#include <concepts>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <ranges>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace zap {
namespace detail {

// A pool's Config, kept as long as the pool: the core reads its plain part
// (core_config()) and calls back here for what is std::string or
// std::function. A base of BasicThreadPool ahead of PoolCore, so that it is
// built before the core and destroyed after it: the core's destructor joins
// the workers, and each worker runs on_thread_exit on its way out.
class PoolConfig {
protected:
    explicit PoolConfig(Config config) : config_(std::move(config)) {}

    // Throws std::invalid_argument when max_threads is over 16383.
    template <class Platform>
    CoreConfig core_config() {
        return CoreConfig{.max_threads = checked_max_threads(config_.max_threads),
                          .stack_size = config_.stack_size,
                          .max_help_depth = config_.max_help_depth,
                          .spin_rounds = config_.spin_rounds,
                          .hooks = {&thread_start<Platform>, &thread_exit, this}};
    }

    Config config_;

private:
    static std::uint32_t checked_max_threads(std::uint32_t requested) {
        if (requested == 0) return Config{}.max_threads;
        if (requested > Sync::max_count)
            throw std::invalid_argument("zap::Config::max_threads is at most 16383 (14-bit counters in the Sync word)");
        return requested;
    }

    // CoreConfig::Hooks: names the worker "<name> <index>", then runs
    // on_thread_start (an exception escaping it calls std::terminate).
    template <class Platform>
    static void thread_start(void* self, std::uint32_t index) noexcept {
        const Config& config = static_cast<PoolConfig*>(self)->config_;
        Platform::name_this_thread((config.name + " " + std::to_string(index)).c_str());
        if (config.on_thread_start) config.on_thread_start();
    }

    static void thread_exit(void* self) noexcept {
        const Config& config = static_cast<PoolConfig*>(self)->config_;
        if (config.on_thread_exit) config.on_thread_exit();
    }
};

}  // namespace detail

template <class Platform>
class BasicThreadPool : private detail::PoolConfig, public detail::PoolCore<Platform> {
    using Core = detail::PoolCore<Platform>;

public:
    using typename Core::Task;
    using typename Core::Batch;

    explicit BasicThreadPool(Config config = {})
        : detail::PoolConfig(std::move(config)), Core(core_config<Platform>()) {}

    // As Config{.max_threads = max_threads}; 0: the default.
    explicit BasicThreadPool(std::uint32_t max_threads) : BasicThreadPool(Config{.max_threads = max_threads}) {}

    BasicThreadPool(const BasicThreadPool&) = delete;
    BasicThreadPool& operator=(const BasicThreadPool&) = delete;

    using Core::schedule;  // schedule(Task&), schedule(Batch): the awaiter's schedule() below would hide them

    // The calling worker's index, 0 .. max_threads()-1 (also inside
    // on_thread_start and on_thread_exit); nullopt on any other thread.
    std::optional<std::uint32_t> worker_index() const noexcept {
        const Context* context = own_context();
        if (context == nullptr || context->drainer) return std::nullopt;  // outside, or join()'s drain
        return index_of(*context->worker);
    }

    // Config::on_unhandled_exception, or null when it is empty (spawn.hpp).
    const detail::ExceptionHandler* unhandled_exception_handler() const noexcept {
        return config_.on_unhandled_exception ? &config_.on_unhandled_exception : nullptr;
    }

    // True on a thread of this pool (a worker, or join()'s drain) already
    // max_help_depth helping waits deep: a wait there only sleeps (H2's
    // bound), so the drop-in layer runs children inline instead of queueing
    // them behind it (wait_depth.hpp).
    bool at_help_bound() const noexcept {
        const Context* context = own_context();
        return context != nullptr && Helping::at_help_bound(*context);
    }

    // Runs f() and returns what it returns. While it runs on a thread of
    // this pool, or on a thread inside a call of it from outside (a loop's
    // body, a fork: outside_wait.hpp OC7), that thread's helping waits run
    // only tasks created inside f and their descendants (isolation.hpp);
    // elsewhere it just calls f.
    template <class F>
        requires std::invocable<F>
    decltype(auto) isolate(F&& f) {  // std::invoke_result_t<F>, deduced once the constraint holds
        Context* context = own_context();
        if (context == nullptr) context = detail::OutsideWait<Platform>::caller_context(*this);
        if (context == nullptr) return std::invoke(std::forward<F>(f));
        const std::uint64_t region = context->worker != nullptr ? context->region_ids.next()  // I1
                                                                : detail::OutsideWait<Platform>::fresh_region(*this, true);  // OC7
        const detail::InRegion<Context> in(*context, region);
        return std::invoke(std::forward<F>(f));
    }

    // The drop-in layer: heap tasks (spawn.hpp), loops (parallel_for.hpp),
    // reductions (parallel_reduce.hpp), forks (parallel_invoke.hpp) and
    // `co_await pool.schedule()` (schedule_awaiter.hpp). What each asks of
    // its callables: callable_rules.hpp.
    template <callable_once_with_no_arguments F>
    void spawn(F&& f) { detail::spawn(*this, std::forward<F>(f)); }
    template <callable_once_with_no_arguments F>
    [[nodiscard("the future holds the result or the exception of f")]] auto submit(F&& f)
        -> std::future<std::invoke_result_t<std::decay_t<F>>> { return detail::submit(*this, std::forward<F>(f)); }
    template <loop_index A, loop_index B, loop_body<std::common_type_t<A, B>> F>
    void parallel_for(A first, B last, F&& f, Grain grain = {}) { detail::parallel_for(*this, first, last, std::as_const(f), grain); }
    template <std::ranges::random_access_range R, element_body<R> F>
    void for_each(R&& range, F&& f, Grain grain = {}) { detail::for_each(*this, range, std::as_const(f), grain); }
    template <class... Fs>
        requires two_or_more_callables<Fs...>
    void parallel_invoke(Fs&&... fs);
    template <loop_index A, loop_index B, moves_without_throwing T, map_into<T, std::common_type_t<A, B>> Map,
              reduction_of<T> Reduce>
    T parallel_reduce(A first, B last, T identity, Map&& map, Reduce&& reduce) {
        return detail::parallel_reduce(*this, first, last, std::move(identity), std::as_const(map), std::as_const(reduce));
    }
    template <std::ranges::random_access_range R, moves_without_throwing T, reduction_of<T> Reduce,
              map_into<T, std::ranges::range_reference_t<R>> Transform>
    T transform_reduce(R&& range, T init, Reduce&& reduce, Transform&& transform) {
        return detail::transform_reduce(*this, range, std::move(init), std::as_const(reduce), std::as_const(transform));
    }
    auto schedule() noexcept { return detail::ScheduleAwaiter<Platform>(*this); }
    // A std::execution scheduler of this pool: needs <zap/execution.hpp> (schedule_operation.hpp).
    template <class Pool = BasicThreadPool> auto get_scheduler() noexcept { return detail::SchedulerFor<Pool>::make(*this); }

private:
    using typename Core::Helping;
    using typename Core::Worker;
    using typename Core::Context;
    using Core::own_context;
    using Core::index_of;
    using Core::notify_hint;
};

}  // namespace zap

#include <zap/parallel_invoke.hpp>  // BasicThreadPool::parallel_invoke
