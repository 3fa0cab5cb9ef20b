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
//   1. Count: n = last - first in the unsigned type of I (parallel_for.hpp
//      step 1). n == 0: return identity; nothing is called.
//   2. The tree, a function of n alone: a part [lo, hi) of more than
//      leaf = ceil(n / max_leaves) indices is cut at mid = lo + (hi - lo) / 2,
//      and its value is reduce(value of [lo, mid), value of [mid, hi)). A
//      part of at most `leaf` indices is a leaf, folded from left to right:
//      map(lo), then acc = reduce(acc, map(i)) for each next i.
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
//
// transform_reduce(range, init, reduce, transform) is std::transform_reduce:
// steps 1-4 over the range's indices with map(i) = transform(range[i]), and
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

// Steps 2-4 over the offsets [0, n): at(k) is the k-th term.
template <class Platform, class Unsigned, class T, class At, class Reduce>
class Reduction {
    // A part's value moves up the tree inside noexcept frames (step 4 catches
    // only the user's calls): a throwing move would have nowhere to go.
    static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>,
                  "parallel_reduce/transform_reduce: the value type T must be nothrow movable");

public:
    // Leaves per tree at most (step 2; at least half as many once n reaches
    // it): enough for the forks to cut four parts per thread on a pool of
    // 256. The tree adds no reduce: a leaf starts from its first term, so a
    // sum of n terms makes n - 1 calls, as a serial fold does. Part of the
    // result's definition: changing it changes what a float sum rounds to.
    static constexpr Unsigned max_leaves = 1024;

    Reduction(BasicThreadPool<Platform>& pool, Unsigned n, At& at, Reduce& reduce) noexcept
        : pool_(pool),
          at_(at),
          reduce_(reduce),
          leaf_(static_cast<Unsigned>(n / max_leaves + (n % max_leaves != 0 ? 1 : 0))),
          grain_(automatic_grain(n, pool.max_threads())) {}

    // The tree's value, or the first exception (step 4). n > 0.
    T run(Unsigned n) {
        std::optional<T> value = part(0, n);
        errors_.rethrow_if_any();
        ZAP_ASSERT(value.has_value(), "internal: a reduction lost its value without an exception");
        return std::move(*value);
    }

private:
    // Steps 2 and 3: the value of [lo, hi), or nothing if an exception took it.
    std::optional<T> part(Unsigned lo, Unsigned hi) noexcept {
        if (hi - lo <= leaf_) return fold(lo, hi);
        const Unsigned mid = lo + (hi - lo) / 2;
        std::optional<T> left, right;
        auto lower = [&]() noexcept { left = part(lo, mid); };
        auto upper = [&]() noexcept { right = part(mid, hi); };
        if (hi - lo > grain_) {
            pool_.parallel_invoke(lower, upper);  // halves never throw: their exceptions are captured
        } else {
            lower();
            upper();
        }
        if (!left || !right) return std::nullopt;  // step 4: a lost half loses the node
        try {
            return std::optional<T>(std::in_place, reduce_(std::move(*left), std::move(*right)));
        } catch (...) {
            errors_.capture();
            return std::nullopt;
        }
    }

    // Step 2's leaf, left to right; step 4 when a call throws.
    std::optional<T> fold(Unsigned lo, Unsigned hi) noexcept {
        Unsigned i = lo;
        try {
            T acc(at_(i));
            for (++i; i != hi; ++i) acc = reduce_(std::move(acc), at_(i));
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
    At& at_;
    Reduce& reduce_;
    Unsigned leaf_;
    Unsigned grain_;
    FirstException<Platform> errors_;
};

template <class Platform, class T, class Unsigned, class At, class Reduce>
T reduce_tree(BasicThreadPool<Platform>& pool, Unsigned n, At& at, Reduce& reduce) {
    return Reduction<Platform, Unsigned, T, At, Reduce>(pool, n, at, reduce).run(n);
}

template <class Platform, std::integral I, class T, class Map, class Reduce>
T parallel_reduce(BasicThreadPool<Platform>& pool, I first, I last, T identity, Map& map, Reduce& reduce) {
    if (!(first < last)) return identity;  // step 1
    using Unsigned = std::make_unsigned_t<I>;
    // Index arithmetic in the unsigned type: first + k cannot overflow there.
    auto at = [&](Unsigned k) -> decltype(auto) {
        return map(static_cast<I>(static_cast<Unsigned>(static_cast<Unsigned>(first) + k)));
    };
    return reduce_tree<Platform, T>(pool, range_size(first, last), at, reduce);
}

template <class Platform, std::ranges::random_access_range R, class T, class Reduce, class Transform>
T transform_reduce(BasicThreadPool<Platform>& pool, R& range, T init, Reduce& reduce, Transform& transform) {
    const auto begin = std::ranges::begin(range);
    const auto n = static_cast<std::size_t>(std::ranges::distance(range));
    if (n == 0) return init;
    using Difference = std::ranges::range_difference_t<R>;
    auto at = [&](std::size_t k) -> decltype(auto) { return transform(begin[static_cast<Difference>(k)]); };
    return reduce(std::move(init), reduce_tree<Platform, T>(pool, n, at, reduce));
}

}  // namespace detail
}  // namespace zap
