// SPDX-License-Identifier: MIT
// zap/parallel_invoke.hpp - fork/join without allocation:
// ThreadPool::parallel_invoke(a, b) runs a() and b(), possibly in parallel;
// parallel_invoke(f1, ..., fn) runs n callables (n >= 2) the same way.
//
// The stealable half, b, lives in a Fork on the caller's stack (a task plus
// a join state), as in rayon's join: the caller pushes it where thieves can
// take it, runs a, then takes it back and runs it inline if nobody took it
// (the common case: one locked instruction in all, take_back's seq_cst store
// or its CAS for a last task), or else helps until whoever took it has
// finished. docs/parallel_invoke.md
// explains the design and gives the measured cost.
//
// Protocol (J = join):
//   J1. The caller builds the Fork: the task, a FirstException, `state_` =
//       RUNNING and a WaitGroup of count 0, all by plain initialization.
//   J2. On a worker of this pool whose ring has a free slot: push the task
//       into the ring, then hint a wake-up (notify_hint in pool_core.hpp:
//       no fence, since a missed wake-up only costs parallelism: J4 or J5
//       still runs b). Ring full: no fork, b runs after a on this thread
//       (over 256 nested forks there is parallelism enough, and a push would
//       migrate outer frames' halves to the overflow queue). At the help
//       depth bound (wait_depth.hpp), no fork either: a wait there could not
//       help. Not on a worker of this pool (another thread, or join()'s
//       draining thread): schedule() the task; the pool runs b while this
//       thread runs a.
//   J3. Run a, capturing its exception.
//   J4. On a worker: take_back(task) (buffer.hpp, step 5). True: run b
//       inline, capturing its exception; the Fork was never shared. Done.
//   J5. Otherwise the task is, or was, someone else's (a thief, this
//       worker's own pop while helping inside a, or the pool when
//       scheduled from outside): add 1 to the group, then CAS state_
//       RUNNING -> WAITING. Won: wait on the group (on a worker this helps:
//       it runs pool tasks meanwhile). Lost: state_ is FINISHED, b is over
//       and its runner no longer touches the Fork.
//   J6. The task's callback (whoever runs it): run b, capturing its
//       exception, then exchange state_ to FINISHED. Read WAITING: the caller
//       is parked in J5's wait, so the Fork lives on; done() on the group
//       (its W1 lets the caller free the Fork as soon as wait() returns).
//       Read RUNNING: return without touching the Fork again (J5 will see
//       FINISHED).
//   J7. Rethrow the first exception captured in J3, J4 or J6.
//   J8. More than two callables: the list is cut in two halves, the left
//       one of n / 2 callables; each half is one callable of the two-way
//       fork (J1-J7), either the half's only callable or a lambda on this
//       frame that forks its half the same way. So n callables make n - 1
//       forks, log2(n) deep, all on the stack: still no allocation, and a
//       thief takes a whole half at once. Each half rethrows the first
//       exception of its own callables, so the one rethrown is the first of
//       its half, not always the first in time.
//
// Every callable is called once, as an lvalue, and never copied or moved:
// the Fork points at the caller's object. (A callable is run by one thread
// only, so unlike a loop body it may be mutable.)
//
// Invariants:
//   F1 (both halves run): a runs in J3; b runs exactly once, in J4 (take_back
//      won) or J6 (the task was run: by a thief, by the pool, or by this
//      worker's own helping), never both: take_back and a pop or steal of
//      the task are exclusive (buffer.hpp RB2).
//   F2 (the frame outlives its users): the caller leaves parallel_invoke
//      only after J4, or after J5 saw FINISHED (J6's last touch), or after
//      the group's wait() returned (W1 of wait_group.hpp).
//   F3 (b's effects reach the caller): J6's release exchange pairs with J5's
//      acquire CAS (lost), or is followed by done(), whose release pairs with
//      wait()'s acquire (won).
#pragma once

#include <zap/first_exception.hpp>
#include <zap/task.hpp>
#include <zap/thread_pool.hpp>
#include <zap/wait_group.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace zap {
namespace detail {

// The stack-resident half of parallel_invoke: b's task and its join state.
template <class Platform, class F>
class Fork : public BasicTask<Platform> {
public:
    explicit Fork(F& f) noexcept : BasicTask<Platform>(&run_task), f_(std::addressof(f)) {}  // J1
    Fork(const Fork&) = delete;
    Fork& operator=(const Fork&) = delete;

    // J3 and J4: runs a callable on this thread, capturing its exception.
    template <class G>
    void run_here(G&& g) noexcept {
        try {
            std::invoke(std::forward<G>(g));
        } catch (...) {
            errors_.capture();
        }
    }

    // J4: b, inline, after take_back gave the task back.
    void run_inline() noexcept { run_here(*f_); }

    // J5: returns once b has finished and nobody touches the Fork any more.
    void join() {
        group_.add(1);
        std::uint32_t expected = running;
        // Release: the add above happens before J6's done() (its acquire
        // exchange reads WAITING). Acquire, won or lost: synchronizes with
        // J6's release exchange when it read FINISHED (F3).
        if (state_.compare_exchange_strong(expected, waiting, std::memory_order_acq_rel, std::memory_order_acquire))
            group_.wait();
    }

    // J7.
    void rethrow_if_any() { errors_.rethrow_if_any(); }

private:
    static constexpr std::uint32_t running = 0;
    static constexpr std::uint32_t waiting = 1;
    static constexpr std::uint32_t finished = 2;

    // J6.
    static void run_task(BasicTask<Platform>* task) noexcept {
        auto& self = *static_cast<Fork*>(task);
        self.run_inline();
        // Release: b's effects and its captured exception happen before J5's
        // acquire CAS (F3). Acquire: J5's add happens before our done().
        if (self.state_.exchange(finished, std::memory_order_acq_rel) == waiting) self.group_.done();
    }

    std::remove_reference_t<F>* f_;
    FirstException<Platform> errors_;
    typename Platform::template Atomic<std::uint32_t> state_{running};
    BasicWaitGroup<Platform> group_;
};

// J8: one half of the list, as one callable of the two-way fork.
template <class Pool, class... Fs>
void invoke_half(Pool& pool, Fs&... fs) {
    if constexpr (sizeof...(Fs) == 1) {
        (std::invoke(fs), ...);
    } else {
        pool.parallel_invoke(fs...);
    }
}

// J8: forks the halves [0, n / 2) and [n / 2, n) of `fs` (references).
template <class Pool, class Refs, std::size_t... Left, std::size_t... Right>
void invoke_halves(Pool& pool, const Refs& fs, std::index_sequence<Left...>, std::index_sequence<Right...>) {
    auto left = [&] { invoke_half(pool, std::get<Left>(fs)...); };
    auto right = [&] { invoke_half(pool, std::get<sizeof...(Left) + Right>(fs)...); };
    pool.parallel_invoke(left, right);
}

}  // namespace detail

template <class Platform>
template <class... Fs>
    requires two_or_more_callables<Fs...>
void BasicThreadPool<Platform>::parallel_invoke(Fs&&... fs) {
    const auto refs = std::tie(fs...);  // lvalues: each callable is called as one (J8)
    if constexpr (sizeof...(Fs) > 2) {
        constexpr std::size_t left = sizeof...(Fs) / 2;
        detail::invoke_halves(*this, refs, std::make_index_sequence<left>(),
                              std::make_index_sequence<sizeof...(Fs) - left>());
    } else {  // J1-J7: a() and b(), possibly in parallel
        auto& a = std::get<0>(refs);
        auto& b = std::get<1>(refs);
        enum class Path { pushed, scheduled, not_forked };
        detail::Fork<Platform, std::remove_reference_t<decltype(b)>> fork(b);  // J1
        Context* context = own_context();
        // Never null on a thread of this pool: the drain works as worker 0 (B5).
        Worker* const worker = context != nullptr ? context->worker : nullptr;
        // From outside the pool, J5's wait runs this call's tasks (outside_wait.hpp, via thread_pool.hpp).
        const detail::OutsideCall<Platform> outside(*this, context == nullptr);
        Path path = Path::pushed;  // J2
        if (context == nullptr) {
            path = Path::scheduled;
            schedule(fork);
        } else if (Helping::at_help_bound(*context)) {
            path = Path::not_forked;  // a wait here could not help: nothing to wait for (wait_depth.hpp)
        } else if (worker->run_buffer.size() >= detail::Buffer<Platform>::capacity) {
            path = Path::not_forked;  // the owner's size() errs high only: no overflow below
        } else {
            detail::Region::set(fork, context->region);  // isolation.hpp I2: b is a child of this task
            detail::List<Task> list = Batch(fork).take_list();
            [[maybe_unused]] const bool fits = worker->run_buffer.push(list);
            ZAP_ASSERT(fits, "internal: parallel_invoke's task must go into the ring (J2)");
            notify_hint();
        }
        fork.run_here(a);  // J3
        if (path == Path::not_forked || (path == Path::pushed && worker->run_buffer.take_back(fork)))
            fork.run_inline();  // J4 (or J2's unforked b)
        else
            fork.join();  // J5
        fork.rethrow_if_any();  // J7
    }
}

}  // namespace zap
