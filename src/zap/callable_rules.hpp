// SPDX-License-Identifier: MIT
// zap/callable_rules.hpp - what the drop-in layer asks of the callables it
// is given, written as concepts that its public templates require.
//
// Why concepts: an unconstrained `template <class F>` accepts anything, and
// a callable of the wrong shape then fails deep inside a zap header, in an
// instantiation the user never wrote ("no match for call to ... (int&,
// std::size_t&)" at parallel_for.hpp). A constraint fails at the user's own
// call instead, and both GCC and Clang print the name of the concept that was
// not met: so each concept is named after its rule, and the message reads as
// the rule ("required for the satisfaction of
// 'callable_through_const_reference<F, int>'").
//
// The rules:
//   - A loop body (parallel_for, for_each) and a reduction's map, transform
//     and reduce are shared: one object, called from several threads at
//     once, through a const reference (as oneTBB calls a const body and rayon
//     asks for `Fn + Sync`). A callable whose call operator is not const - a
//     `mutable` lambda - would race with itself, so it is refused
//     (callable_through_const_reference). Its state, if it must have some,
//     is the user's to synchronize (an atomic, a per-worker slot).
//   - parallel_for's body takes the index; for_each's takes the element, or
//     the element and its index (std::size_t): the element alone when it can.
//   - A loop's index type is an integer type other than bool (char and the
//     8-bit types included).
//   - A reduction's map (transform) result must convert to T without
//     narrowing, as in `T{map(i)}`: a map returning 0.5 into an int sum is
//     refused rather than summed as 0. reduce(T, T) must return something T
//     can be made from (implicitly): the usual arithmetic of T, promotions
//     included (a sum of shorts computes in int and comes back to short).
//     T moves without throwing (its values move up the reduction tree inside
//     noexcept frames).
//   - spawn, submit and TaskGroup::run store the callable (moved or copied
//     in) and call it once, as an rvalue, with no arguments - or, for
//     TaskGroup::run, with the group's std::stop_token when it takes one.
//   - parallel_invoke takes two callables or more, each called once as an
//     lvalue with no arguments, never copied: it may be mutable.
//   - Mailbox and ObjectPool hold values whose move constructor does not
//     throw (handoff_queue.hpp says why).
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <ranges>
#include <stop_token>
#include <type_traits>

namespace zap {

// An integer type a loop can count with: any integral type but bool.
template <class I>
concept loop_index = std::integral<I> && !std::same_as<std::remove_cv_t<I>, bool>;

// Callable with these arguments (the shape, checked before constness).
template <class F, class... Args>
concept callable_with = std::invocable<std::remove_reference_t<F>&, Args...>;

// Callable through a const reference: what every thread of a loop does.
// A `mutable` lambda is not.
template <class F, class... Args>
concept callable_through_const_reference = std::invocable<const std::remove_reference_t<F>&, Args...>;

// parallel_for's body: body(i), shared by the threads.
template <class F, class I>
concept loop_body = callable_with<F, I> && callable_through_const_reference<F, I>;

// for_each's shape: f(element), or f(element, std::size_t index).
template <class F, class Element>
concept takes_element_or_element_and_index = callable_with<F, Element> || callable_with<F, Element, std::size_t>;

// ... and called so through a const reference.
template <class F, class Element>
concept element_body_callable_through_const_reference =
    callable_through_const_reference<F, Element> || callable_through_const_reference<F, Element, std::size_t>;

// for_each's body over the elements of R.
template <class F, class R>
concept element_body = takes_element_or_element_and_index<F, std::ranges::range_reference_t<R>> &&
                       element_body_callable_through_const_reference<F, std::ranges::range_reference_t<R>>;

// From converts to To implicitly and without narrowing: `To{from}` would compile
// (the array form keeps an aggregate To from taking From by brace elision).
template <class From, class To>
concept converts_without_narrowing =
    std::convertible_to<From, To> && requires(From&& from) { std::type_identity_t<To[]>{std::forward<From>(from)}; };

// A Mailbox's or ObjectPool's value type: close() and the hand-off to a
// waiting taker move values, and must not lose one (handoff_queue.hpp).
template <class T>
concept move_constructs_without_throwing = std::is_nothrow_move_constructible_v<T>;

// A reduction's value type: moves up the tree inside noexcept frames.
template <class T>
concept moves_without_throwing = move_constructs_without_throwing<T> && std::is_nothrow_move_assignable_v<T>;

// A reduction's map (or transform) of one argument: shared, and its result fits T.
template <class Map, class T, class Arg>
concept map_into = loop_body<Map, Arg> &&
                   converts_without_narrowing<std::invoke_result_t<const std::remove_reference_t<Map>&, Arg>, T>;

// A reduction's reduce: shared, reduce(T, T) gives back something a T is made from.
template <class Reduce, class T>
concept reduction_of = callable_with<Reduce, T, T> && callable_through_const_reference<Reduce, T, T> &&
                       std::convertible_to<std::invoke_result_t<const std::remove_reference_t<Reduce>&, T, T>, T>;

// spawn and submit: stored by value, then called once with no arguments.
template <class F>
concept callable_once_with_no_arguments =
    std::constructible_from<std::decay_t<F>, F> && std::invocable<std::decay_t<F>>;

// TaskGroup::run: the same, or called once with the group's std::stop_token.
template <class F>
concept callable_once_with_no_arguments_or_a_stop_token =
    std::constructible_from<std::decay_t<F>, F> &&
    (std::invocable<std::decay_t<F>> || std::invocable<std::decay_t<F>, std::stop_token>);

// parallel_invoke: two callables or more, each called once, as an lvalue.
template <class... Fs>
concept two_or_more_callables = sizeof...(Fs) >= 2 && (std::invocable<std::remove_reference_t<Fs>&> && ...);

}  // namespace zap
