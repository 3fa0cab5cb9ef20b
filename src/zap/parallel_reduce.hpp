// SPDX-License-Identifier: MIT
// zap/parallel_reduce.hpp - parallel_reduce and transform_reduce: a
// reduction whose result depends on the range's size only, so that a
// floating-point sum is the same bit for bit on 1, 2 or 64 threads, from
// run to run and machine to machine.
//
// Why it needs saying: a floating-point `+` is not associative, so a
// reduction's result depends on how its terms are grouped. Pools that cut
// the range where stealing happens to cut it (oneTBB's parallel_reduce,
// rayon's reduce) group the terms differently from run to run. Here the
// grouping is a fixed tree, and the pool only decides who computes which of
// its nodes.
//
// Protocol (one call parallel_reduce(first, last, identity, map, reduce)):
//   1. Count: the bounds as parallel_for's (parallel_for.hpp steps 0-1: two
//      integer types, the index type their common type), n = last - first
//      in its unsigned type. n == 0: return identity; nothing is called.
//   2. The tree, a function of n alone: a part [lo, hi) of more than
//      leaf = ceil(n / max_leaves) indices is cut at mid = lo + (hi - lo) / 2,
//      and its value is reduce(value of [lo, mid), value of [mid, hi)). A
//      part of at most `leaf` indices is a leaf, folded from left to right:
//      T(map(lo)), then acc = reduce(acc, T(map(i))) for each next i. A
//      term is made a T before reduce sees it (it converts without
//      narrowing: callable_rules.hpp), so reduce is only ever called with
//      two T, the signature its constraint checked.
//   3. The forks, a function of the pool: a part of more than `grain`
//      indices (parallel_for's automatic grain: about four parts per
//      thread) computes its two halves with parallel_invoke - allocation-
//      free, the upper half stealable; a smaller part computes them one
//      after the other on this thread. Either way the same nodes are
//      computed from the same operands: timing, stealing and max_threads
//      change who computes a node, never the tree (invariant R1).
//   4. Exceptions, as in parallel_for: a throwing map(i) or reduce() is
//      captured (the first one kept, first_exception.hpp) and cancels
//      nothing: the rest of the leaf still calls map for every index, though
//      the part has lost its value; a node with a lost half is lost too, and
//      calls no reduce. Once the whole tree is done (parallel_invoke returns
//      when both halves have), the first exception is rethrown.
//   5. Cancellation (cancellation.hpp C6-C7): a reduction started while its
//      thread runs a TaskGroup child belongs to that group. Once the group is
//      canceled, a part about to start returns no value without calling
//      anything (a lost half, as in step 4, but with no exception), and the
//      leaves that started run to their end inside the group's scope. If a
//      part was skipped, the call returns identity (transform_reduce: init)
//      - never the value of a part of the terms - unless an exception was
//      captured, which is rethrown as in step 4.
//
// map, transform and reduce are shared: every thread calls the one object,
// through a const reference (callable_rules.hpp).
//
// transform_reduce(range, init, reduce, transform) is std::transform_reduce:
// steps 1-5 over the range's indices with map(i) = transform(range[i]), and
// the result is reduce(init, tree) - or init for an empty range.
//
// Invariant R1 (determinism): the value of part [lo, hi) is a function of lo,
// hi, n and the user's functions alone. By induction over the tree: a leaf's
// fold order is fixed by step 2; a node combines its halves' values, left
// first, whichever thread computed them. Nothing in step 3 reads the pool
// or the clock to choose an operand. reduce must be associative for the
// result to be *the* reduction; it need not be commutative (left stays left).
#pragma once

#include <zap/assert.hpp>
#include <zap/callable_rules.hpp>
#include <zap/cancellation.hpp>
#include <zap/first_exception.hpp>
#include <zap/parallel_for.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <ranges>
#include <type_traits>
#include <utility>

namespace zap {

template <class Platform>
class BasicThreadPool;  // thread_pool.hpp, which includes this header

namespace detail {

// reduce's result as a T: the conversion its constraint allows
// (reduction_of), written out so that a -Wconversion build does not warn
// inside zap about the user's own arithmetic (a sum of shorts is an int).
template <class T, class R>
T as_value(R&& result) {
    return static_cast<T>(std::forward<R>(result));
}

// Steps 2-5 over the offsets [0, n): at(k) is the k-th term.
template <class Platform, class Unsigned, class T, class At, class Reduce>
class Reduction {
    // A part's value moves up the tree inside noexcept frames (step 4 catches
    // only the user's calls): a throwing move would have nowhere to go. The
    // public entry points require it (moves_without_throwing).
    static_assert(moves_without_throwing<T>);

public:
    // Leaves per tree at most (step 2; at least half as many once n reaches
    // it): enough for the forks to cut four parts per thread on a pool of
    // 256. The tree adds no reduce: a leaf starts from its first term, so a
    // sum of n terms makes n - 1 calls, as a serial fold does. Part of the
    // result's definition: changing it changes what a float sum rounds to.
    // Counted in std::uintmax_t, not in the index type: 1024 does not fit an
    // 8-bit one (every 8-bit range has one index per leaf).
    static constexpr std::uintmax_t max_leaves = 1024;

    Reduction(BasicThreadPool<Platform>& pool, Unsigned n, const At& at, const Reduce& reduce) noexcept
        : pool_(pool),
          at_(at),
          reduce_(reduce),
          leaf_(static_cast<Unsigned>(n / max_leaves + (n % max_leaves != 0 ? 1 : 0))),
          grain_(automatic_grain(n, pool.max_threads())),
          group_(CancelScope<Platform>::current()) {}

    // The tree's value, nothing if the group canceled part of it (step 5),
    // or the first exception (step 4). n > 0.
    std::optional<T> run(Unsigned n) {
        std::optional<T> value = part(0, n);
        errors_.rethrow_if_any();
        ZAP_ASSERT(value.has_value() || canceled(), "internal: a reduction lost its value without an exception");
        return value;
    }

private:
    // Step 5 (C7).
    bool canceled() const noexcept { return group_ != nullptr && group_->skips(); }

    // Steps 2, 3 and 5: the value of [lo, hi), or nothing if an exception or
    // the group's cancellation took it.
    std::optional<T> part(Unsigned lo, Unsigned hi) noexcept {
        if (canceled()) return std::nullopt;
        if (static_cast<Unsigned>(hi - lo) <= leaf_) return fold(lo, hi);
        const auto mid = static_cast<Unsigned>(lo + (hi - lo) / 2);
        std::optional<T> left, right;
        auto lower = [&]() noexcept { left = part(lo, mid); };
        auto upper = [&]() noexcept { right = part(mid, hi); };
        if (static_cast<Unsigned>(hi - lo) > grain_) {
            pool_.parallel_invoke(lower, upper);  // halves never throw: their exceptions are captured
        } else {
            lower();
            upper();
        }
        if (!left || !right) return std::nullopt;  // steps 4-5: a lost half loses the node
        try {
            return std::optional<T>(std::in_place, as_value<T>(reduce_(std::move(*left), std::move(*right))));
        } catch (...) {
            errors_.capture();
            return std::nullopt;
        }
    }

    // Step 2's leaf, left to right, in the reduction's group (step 5); step 4
    // when a call throws.
    std::optional<T> fold(Unsigned lo, Unsigned hi) noexcept {
        const CancelScope<Platform> scope(group_);
        Unsigned i = lo;
        try {
            T acc(at_(i));
            for (++i; i != hi; ++i) acc = as_value<T>(reduce_(std::move(acc), T(at_(i))));
            return acc;
        } catch (...) {
            errors_.capture();
        }
        for (++i; i != hi; ++i) {  // the rest of the leaf is still called, its value lost
            try {
                (void)at_(i);
            } catch (...) {
                errors_.capture();
            }
        }
        return std::nullopt;
    }

    BasicThreadPool<Platform>& pool_;
    const At& at_;
    const Reduce& reduce_;
    Unsigned leaf_;
    Unsigned grain_;
    const Cancellation<Platform>* group_;
    FirstException<Platform> errors_;
};

template <class Platform, class T, class Unsigned, class At, class Reduce>
std::optional<T> reduce_tree(BasicThreadPool<Platform>& pool, Unsigned n, const At& at, const Reduce& reduce) {
    return Reduction<Platform, Unsigned, T, At, Reduce>(pool, n, at, reduce).run(n);
}

template <class Platform, loop_index A, loop_index B, class T, class Map, class Reduce>
T parallel_reduce(BasicThreadPool<Platform>& pool, A first, B last, T identity, const Map& map, const Reduce& reduce) {
    Bounds<A, B> bounds;
    if (!Bounds<A, B>::of(first, last, bounds)) return identity;  // step 1
    using I = typename Bounds<A, B>::I;
    using Unsigned = std::make_unsigned_t<I>;
    // Index arithmetic in the unsigned type: first + k cannot overflow there.
    const auto at = [&, start = bounds.first](Unsigned k) -> decltype(auto) {
        return map(static_cast<I>(static_cast<Unsigned>(static_cast<Unsigned>(start) + k)));
    };
    std::optional<T> value = reduce_tree<Platform, T>(pool, range_size(bounds.first, bounds.last), at, reduce);
    return value ? std::move(*value) : std::move(identity);  // step 5: canceled
}

template <class Platform, std::ranges::random_access_range R, class T, class Reduce, class Transform>
T transform_reduce(BasicThreadPool<Platform>& pool, R& range, T init, const Reduce& reduce, const Transform& transform) {
    const auto begin = std::ranges::begin(range);
    const auto n = static_cast<std::size_t>(std::ranges::distance(range));
    if (n == 0) return init;
    using Difference = std::ranges::range_difference_t<R>;
    const auto at = [&](std::size_t k) -> decltype(auto) { return transform(begin[static_cast<Difference>(k)]); };
    std::optional<T> value = reduce_tree<Platform, T>(pool, n, at, reduce);
    if (!value) return init;  // step 5: canceled
    return as_value<T>(reduce(std::move(init), std::move(*value)));
}

}  // namespace detail
}  // namespace zap
