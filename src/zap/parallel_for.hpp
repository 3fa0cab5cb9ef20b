// SPDX-License-Identifier: MIT
// zap/parallel_for.hpp - parallel_for and for_each: the range is cut in
// halves until the pieces are no longer than the grain; the pool runs the
// pieces, and the call returns once every call of f has.
//
// Protocol (one call parallel_for(first, last, f, grain)):
//   0. Bounds: first and last may be of two integer types A and B (bool
//      excluded); the index type I is std::common_type_t<A, B>, and f is
//      called with I. Every integer type works, the 8-bit and character
//      types included. A bound that I cannot hold is a contract violation
//      (a negative int beside a std::size_t bound: I is std::size_t); debug
//      builds abort naming the rule. Release builds call f only for the
//      indices of [first, last) that I can hold: such a bound is always
//      negative with I unsigned, so a negative first starts the range at 0,
//      and a negative last makes it empty. f is never called with an index
//      outside [first, last), compared as the integers they are.
//   1. Size: n = last - first, counted in the unsigned type of I, so any
//      [first, last) of I works (INT_MIN to INT_MAX included). Nothing to do
//      when first >= last. The grain is the caller's Grain, or the automatic
//      one: ceil(n / (4 * max_threads)), at least 1 - about four pieces per
//      thread, so that a thread that finishes early finds pieces left to
//      steal, yet each piece's fixed cost (one task pushed, one wait) stays
//      small against its calls.
//   2. split(lo, hi): a range longer than the grain keeps its lower half and
//      schedules its upper half [mid, hi) as a task that lives on this
//      frame (so parallel_for allocates nothing), then splits the lower
//      half the same way. On a worker the half goes into its own ring, where
//      idle workers steal it and split it further on their side: the pieces
//      spread over the pool in log2(pieces) steps. On any other thread the
//      half goes to the pool's global queue, and the calling thread runs the
//      lowest piece itself, then more pieces of its own loop while it waits
//      (step 7).
//   3. A piece (at most grain indices) calls f(i) for its indices in order.
//      An exception from f(i) is captured (the first one thrown is kept)
//      and the next index runs: a throwing call cancels nothing.
//   4. After its lower half, a frame waits for its upper half's WaitGroup.
//      On a worker that wait runs other tasks of the pool meanwhile, so a
//      nested parallel_for (a call of f that runs one) works on a pool of one
//      thread. The wait is counted in WaitDepth: a split that would nest deeper
//      than WaitDepth::max_wait_depth, or wait on a worker at the pool's own
//      help bound, runs its whole range as one piece instead (wait_depth.hpp).
//   5. When the outermost split has returned, every call of f has returned
//      (each frame waited for its upper half); the first captured exception
//      is rethrown.
//   6. Cancellation (cancellation.hpp, C6-C7): a loop called while its
//      thread runs a TaskGroup child (or a piece of a loop that did) belongs
//      to that group. Once the group is canceled, the loop starts no new
//      piece and splits nothing more: a split or piece that finds the group
//      canceled returns at once, and the upper halves already scheduled
//      still run (to count themselves done) but call nothing. Pieces that
//      started run to their end. The loop then returns as usual, without
//      calling f for the indices it skipped; a piece runs inside the loop's
//      group, so loops nested in f are canceled with it.
//   7. Called from a thread outside the pool, the loop is a call in a caller
//      region (outside_wait.hpp OC1-OC6): its upper halves are stamped with
//      it, and the caller's waits of step 4 run the loop's own pieces (and
//      only those) until the halves they wait for are done, instead of
//      sleeping while the workers run them.
//
// f is shared: every thread calls the one object, through a const reference
// (callable_rules.hpp), never a copy of it.
//
// for_each(range, f, grain) is parallel_for over the indices of the range,
// calling f(range[i]) when f takes the element alone, else f(range[i], i).
//
// After shutdown(): an upper half scheduled from outside the pool breaks
// schedule()'s rule (debug builds abort naming it; release builds run the
// half on the calling thread, so the loop still completes). A range of one
// piece schedules nothing and just runs.
#pragma once

#include <zap/assert.hpp>
#include <zap/callable_rules.hpp>
#include <zap/cancellation.hpp>
#include <zap/first_exception.hpp>
#include <zap/outside_wait.hpp>
#include <zap/task.hpp>
#include <zap/wait_depth.hpp>
#include <zap/wait_group.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <ranges>
#include <type_traits>
#include <utility>

namespace zap {

template <class Platform>
class BasicThreadPool;  // thread_pool.hpp, which includes this header

// The most consecutive indices one piece of a parallel_for or for_each
// covers: pool.parallel_for(0, n, f, zap::Grain{64}). Grain{} (0) asks for
// the automatic grain (step 1 of parallel_for.hpp).
struct Grain {
    std::size_t indices = 0;
};

namespace detail {

// Step 1's count: last - first in the unsigned type of I, for first < last.
template <loop_index I>
std::make_unsigned_t<I> range_size(I first, I last) noexcept {
    using Unsigned = std::make_unsigned_t<I>;
    return static_cast<Unsigned>(static_cast<Unsigned>(last) - static_cast<Unsigned>(first));
}

// Step 1's automatic grain: ceil(n / (4 * threads)), at least 1 for n > 0.
template <class Unsigned>
Unsigned automatic_grain(Unsigned n, std::uint32_t threads) noexcept {
    const std::uintmax_t pieces = std::uintmax_t{4} * threads;
    return static_cast<Unsigned>(n / pieces + (n % pieces != 0 ? 1 : 0));
}

// x < y compared as the integers they are, whatever their types: what
// std::cmp_less does, for the character types too (which it refuses).
template <loop_index X, loop_index Y>
constexpr bool integer_less(X x, Y y) noexcept {
    if constexpr (std::is_signed_v<X> == std::is_signed_v<Y>) {
        return x < y;  // the usual conversions keep both values
    } else if constexpr (std::is_signed_v<X>) {
        return x < 0 || static_cast<std::make_unsigned_t<X>>(x) < y;
    } else {
        return y >= 0 && x < static_cast<std::make_unsigned_t<Y>>(y);
    }
}

// x is a value of I (std::in_range, for the character types too).
template <loop_index I, loop_index X>
constexpr bool integer_in_range(X x) noexcept {
    return !integer_less(x, std::numeric_limits<I>::min()) && !integer_less(std::numeric_limits<I>::max(), x);
}

// Step 0: [first, last) in the index type I = std::common_type_t<A, B>, or
// nothing when it is empty. `Bounds::of` asserts the rule, and in release
// builds keeps the indices I can hold.
template <loop_index A, loop_index B>
struct Bounds {
    using I = std::common_type_t<A, B>;
    I first;
    I last;

    // False: the range is empty (compared as integers, whatever the types).
    static bool of(A first, B last, Bounds& bounds) noexcept {
        if (!integer_less(first, last)) return false;
        ZAP_ASSERT(integer_in_range<I>(first) && integer_in_range<I>(last),
                   "a loop bound must fit the index type std::common_type_t<A, B> (a negative bound beside an "
                   "unsigned one does not)");
        // Only a negative bound beside an unsigned I cannot be held, and a
        // negative last with first < last would need first negative too: so
        // only first can be out of range here, and only below I's 0.
        bounds.first = integer_in_range<I>(first) ? static_cast<I>(first) : I{0};
        bounds.last = static_cast<I>(last);
        return bounds.first < bounds.last;
    }
};

// Steps 2-6 for one call of parallel_for.
template <class Platform, class I, class F>
class Loop {
public:
    using Unsigned = std::make_unsigned_t<I>;

    // Step 1's grain; step 6's group, if the calling thread runs in one.
    Loop(BasicThreadPool<Platform>& pool, I first, Unsigned n, const F& f, Grain grain) noexcept
        : pool_(pool),
          first_(first),
          f_(f),
          grain_(grain_for(n, grain, pool.max_threads())),
          group_(CancelScope<Platform>::current()) {}

    // Step 2.
    void split(Unsigned lo, Unsigned hi) noexcept {
        if (canceled()) return;  // step 6: start nothing more
        if (static_cast<Unsigned>(hi - lo) <= grain_ || WaitDepth::exceeded(pool_)) {
            run_piece(lo, hi);
            return;
        }
        UpperHalf upper(*this, static_cast<Unsigned>(lo + (hi - lo) / 2), hi);
        pool_.schedule(upper);
        split(lo, upper.lo);
        // Step 4.
        const WaitDepth::Guard counted;
        upper.done.wait();
    }

    // Step 5.
    void rethrow_if_any() { errors_.rethrow_if_any(); }

private:
    // An upper half waiting on its splitter's frame.
    struct UpperHalf : BasicTask<Platform> {
        Loop& loop;
        Unsigned lo, hi;
        BasicWaitGroup<Platform> done;

        UpperHalf(Loop& owner, Unsigned first, Unsigned last) noexcept
            : BasicTask<Platform>(&run), loop(owner), lo(first), hi(last) {
            done.add();
        }

        static void run(BasicTask<Platform>* task) noexcept {
            auto* self = static_cast<UpperHalf*>(task);
            self->loop.split(self->lo, self->hi);
            self->done.done();  // the last touch: the splitter's frame may return now
        }
    };

    static Unsigned grain_for(Unsigned n, Grain grain, std::uint32_t threads) noexcept {
        if (grain.indices != 0) {
            return grain.indices >= std::numeric_limits<Unsigned>::max() ? std::numeric_limits<Unsigned>::max()
                                                                          : static_cast<Unsigned>(grain.indices);
        }
        return automatic_grain(n, threads);
    }

    // Step 6 (C7).
    bool canceled() const noexcept { return group_ != nullptr && group_->skips(); }

    // Step 3. Index arithmetic in the unsigned type: first + i cannot overflow
    // there. The piece runs in the loop's group (step 6).
    void run_piece(Unsigned lo, Unsigned hi) noexcept {
        const CancelScope<Platform> scope(group_);
        for (Unsigned i = lo; i != hi; ++i) {
            try {
                f_(static_cast<I>(static_cast<Unsigned>(static_cast<Unsigned>(first_) + i)));
            } catch (...) {
                errors_.capture();
            }
        }
    }

    BasicThreadPool<Platform>& pool_;
    I first_;
    const F& f_;
    Unsigned grain_;
    const Cancellation<Platform>* group_;
    FirstException<Platform> errors_;
};

template <class Platform, loop_index A, loop_index B, class F>
void parallel_for(BasicThreadPool<Platform>& pool, A first, B last, const F& f, Grain grain) {
    Bounds<A, B> bounds;
    if (!Bounds<A, B>::of(first, last, bounds)) return;  // steps 0-1
    using I = typename Bounds<A, B>::I;
    const auto n = range_size(bounds.first, bounds.last);
    const OutsideCall<Platform> outside(pool, true);  // step 7
    Loop<Platform, I, F> loop(pool, bounds.first, n, f, grain);
    loop.split(0, n);
    loop.rethrow_if_any();
}

// for_each's call of f for element i: f(element) when f takes it alone.
template <class F, class Element>
void call_element_body(const F& f, Element&& element, std::size_t i) {
    if constexpr (callable_through_const_reference<F, Element>) {
        f(std::forward<Element>(element));
    } else {
        f(std::forward<Element>(element), i);
    }
}

template <class Platform, std::ranges::random_access_range R, class F>
void for_each(BasicThreadPool<Platform>& pool, R& range, const F& f, Grain grain) {
    const auto begin = std::ranges::begin(range);
    using Difference = std::ranges::range_difference_t<R>;
    const auto each = [&](std::size_t i) { call_element_body(f, begin[static_cast<Difference>(i)], i); };
    parallel_for(pool, std::size_t{0}, static_cast<std::size_t>(std::ranges::distance(range)), each, grain);
}

}  // namespace detail
}  // namespace zap
