// SPDX-License-Identifier: MIT
// zap/task_group.hpp - TaskGroup: run children on a pool, wait for all of
// them, get the first exception any of them threw.
//
// Protocol:
//   1. run(f): count the child (WaitGroup add), then schedule it as a heap
//      task (spawn.hpp: one allocation). If that allocation throws, the
//      count is given back and the exception reaches the caller.
//   2. A child runs f() - or f(token) (step 9) - in the group's
//      cancellation scope (cancellation.hpp C6: the loops it calls belong to
//      the group); an exception is captured (the first one is kept),
//      never propagated, so every child runs whatever its siblings do. Its
//      heap task is freed (f and its captures destroyed) before the child
//      counts itself done (spawn.hpp, steps 4-5).
//   3. wait(): wait until every child run so far is done - on a worker,
//      running other tasks of the pool meanwhile (WaitGroup::wait), counted
//      in WaitDepth - then rethrow the first captured exception, if any.
//   4. Nesting bound: while this thread already has WaitDepth::max_wait_depth
//      waits in progress, or is a worker at the pool's own help bound, run(f)
//      runs f at once on the calling thread (exceptions captured as in step
//      2) instead of scheduling it, so the wait that follows has nothing to
//      help with (wait_depth.hpp).
//   5. ~TaskGroup(): waits as in step 3 if children are still running. An
//      exception no wait() reported is not dropped silently: the destructor
//      calls std::terminate (as an exception escaping spawn() does), unless
//      it runs during stack unwinding, where the exception in flight is the
//      one the program is already handling and the child's is discarded.
//   6. cancel() (Protocol C, cancellation.hpp): requests stop on
//      stop_token() and marks the group canceled. From then on a child that
//      has not started is skipped when the pool runs it: its callable is
//      destroyed uncalled and it counts itself done as in step 2, so wait()
//      still waits for the pool to reach it (its task points at the group).
//      run() while canceled schedules nothing. Running children are not
//      interrupted; they may watch is_canceled() or the token.
//   7. After step 3's wait, and before it rethrows, wait() resets a
//      canceled group (C5): the next round starts uncanceled, with a fresh
//      stop_source if a token is asked for again.
//   8. wait_for(timeout): step 3 with a timeout (WaitGroup::wait_for,
//      wait_group.hpp step 5). True: every child run so far is done, and it
//      ends as wait() does - step 7's reset, then the first exception
//      rethrown. False: children are still running, and the group is as it
//      was: still canceled if it was, its exceptions kept for the wait that
//      ends the round; run(), cancel(), wait() and wait_for() may follow.
//      wait_for(0) polls. The destructor still waits for every child (5).
//   9. run(f) with an f that takes a std::stop_token (callable_rules.hpp:
//      f(token) whenever f can be called so): before step 1 counts anything,
//      run() takes the group's token of the current round (C3, C8: the
//      stop_source is made then if nobody asked for it yet, and
//      std::bad_alloc reaches run()'s caller if it cannot be), and the child
//      is called with it. It is the token stop_token() returns: it sees a
//      cancel() made later in the round. A child always starts in the round
//      it was run in (wait() waits for it), so after a wait() that ended a
//      canceled round the children of the next round get its fresh,
//      unrequested token.
//  10. On a thread outside the pool, run() stamps the children with the
//      group's caller region and wait() runs them (and their children)
//      while it waits, and nothing else (outside_wait.hpp OC8); wait_for()
//      only waits (OC5).
//
// A group may be reused: after wait() returns or throws, run() may add new
// children; each wait() reports the first exception thrown since the
// previous wait(). run() is for the thread that owns the group and for its
// running children (the count cannot reach zero while the child that adds
// is itself still counted); wait() is for the owner. cancel(), is_canceled()
// and stop_token() are for the owner, the running children, and any thread
// whose call returns before the owner's wait() does.
#pragma once

#include <zap/callable_rules.hpp>
#include <zap/cancellation.hpp>
#include <zap/first_exception.hpp>
#include <zap/outside_wait.hpp>
#include <zap/spawn.hpp>
#include <zap/thread_pool.hpp>
#include <zap/wait_depth.hpp>
#include <zap/wait_group.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace zap {

template <class Platform>
class BasicTaskGroup {
public:
    explicit BasicTaskGroup(BasicThreadPool<Platform>& pool) noexcept
        : pool_(pool), uncaught_at_start_(std::uncaught_exceptions()) {}

    BasicTaskGroup(const BasicTaskGroup&) = delete;
    BasicTaskGroup& operator=(const BasicTaskGroup&) = delete;

    // Step 5.
    ~BasicTaskGroup() {
        wait_for_children();
        try {
            errors_->rethrow_if_any();
        } catch (...) {
            if (std::uncaught_exceptions() > uncaught_at_start_) return;  // unwinding: the child's is discarded
            std::terminate();  // a child's exception that no wait() reported
        }
    }

    // Steps 1, 4, 6, 9 and 10.
    template <callable_once_with_no_arguments_or_a_stop_token F>
    void run(F&& f) {
        if (cancellation_.skips()) return;  // C2: never started, nothing to count
        using Callable = std::decay_t<F>;
        using Token = TokenFor<Callable>;
        Token token = take_token<Token>();  // step 9: may throw, nothing counted yet
        if (detail::WaitDepth::exceeded(pool_)) {
            Callable inline_child(std::forward<F>(f));
            run_capturing(inline_child, token);
            return;
        }
        pending_.add();
        try {
            const detail::OutsideCall<Platform> outside(pool_, outside_region_);  // step 10
            detail::schedule_heap_task(pool_, Child<Callable, Token>{*this, std::forward<F>(f), std::move(token)});
        } catch (...) {
            pending_.done();
            throw;
        }
    }

    // Steps 3, 7 and 10.
    void wait() {
        wait_for_children();
        end_round();
    }

    // Step 8: false on timeout, the children still running.
    [[nodiscard("false: the children are still running")]] bool wait_for(std::chrono::nanoseconds timeout) {
        if (!wait_for_children(timeout)) return false;
        end_round();
        return true;
    }

    // Step 6.
    void cancel() noexcept { cancellation_.cancel(); }
    bool is_canceled() const noexcept { return cancellation_.is_canceled(); }
    // std::terminate if the stop_source cannot be allocated (noexcept, as the contract has it).
    std::stop_token stop_token() const noexcept { return cancellation_.token(); }

private:
    // Step 7, after a wait that saw every child done.
    void end_round() {
        cancellation_.reset();
        try {
            errors_->rethrow_if_any();
        } catch (...) {
            errors_.emplace();  // the next wait() reports only later exceptions
            throw;
        }
    }

    // What a child tells its group once its heap task is freed (step 2).
    struct Finished {
        BasicTaskGroup& group;
        void publish() && noexcept { group.pending_.done(); }
    };

    // Step 9: what a child is called with besides nothing.
    struct NoToken {};
    template <class F>
    using TokenFor = std::conditional_t<std::is_invocable_v<F, std::stop_token>, std::stop_token, NoToken>;

    template <class Token>
    Token take_token() const {
        if constexpr (std::is_same_v<Token, std::stop_token>) {
            return cancellation_.token();
        } else {
            return Token{};
        }
    }

    // Step 2: a child's Job (spawn.hpp).
    template <class F, class Token>
    struct Child {
        BasicTaskGroup& group;
        F f;
        [[no_unique_address]] Token token;
        Finished execute() noexcept {
            if (!group.cancellation_.skips()) group.run_capturing(f, token);  // C2: skipped, f is destroyed uncalled
            return Finished{group};
        }
    };

    template <class F, class Token>
    void run_capturing(F& f, Token& token) noexcept {
        const detail::CancelScope<Platform> scope(&cancellation_);  // C6: its loops belong to the group
        try {
            // It runs once: invoked as an rvalue.
            if constexpr (std::is_same_v<Token, std::stop_token>) {
                std::invoke(std::move(f), std::move(token));
            } else {
                std::invoke(std::move(f));
            }
        } catch (...) {
            errors_->capture();
        }
    }

    void wait_for_children() noexcept {
        const detail::WaitDepth::Guard counted;
        const detail::OutsideCall<Platform> outside(pool_, outside_region_);  // step 10
        pending_.wait();
    }

    bool wait_for_children(std::chrono::nanoseconds timeout) noexcept {
        const detail::WaitDepth::Guard counted;
        return pending_.wait_for(timeout);
    }

    BasicThreadPool<Platform>& pool_;
    BasicWaitGroup<Platform> pending_;
    std::optional<detail::FirstException<Platform>> errors_{std::in_place};  // engaged; replaced after a report
    detail::Cancellation<Platform> cancellation_;
    std::uint64_t outside_region_ = 0;  // step 10 (outside_wait.hpp OC8); 0: none taken yet
    int uncaught_at_start_;
};

}  // namespace zap
