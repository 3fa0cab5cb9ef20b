// SPDX-License-Identifier: MIT
// zap/handoff_queue.hpp - the mechanism under BasicMailbox and
// BasicObjectPool: a closable store of values whose takers park, and whose
// givers hand a value straight to the longest-waiting taker.
//
// State, all of it guarded by one Lock (lock.hpp):
//   items_    the values nobody has taken yet (a deque: FIFO or LIFO takes)
//   waiters_  the takers asleep, oldest first: a doubly linked list of
//             Waiter records, each on its taker's stack, with its own Parker
//   closed_   set once by close()
//
// Protocol:
//   1. take(): under the lock, pop a value if there is one; else, if
//      closed, return nothing; else append a Waiter to waiters_ and leave
//      the lock.
//   2. The taker parks on its Waiter's Parker (with the deadline, if any).
//   3. give(v): under the lock, if closed, refuse and leave v with the
//      caller; else if a taker waits, unlink the oldest, move v into its
//      Waiter, mark it done and unpark it, all before leaving the lock; else
//      append v to items_.
//   4. close(): under the lock, set closed, move items_ out, and unlink,
//      mark done and unpark every waiter, all before leaving the lock;
//      return the values.
//   6. seal(): under the lock, set closed, and unlink, mark done and unpark
//      every waiter (by HQ1 none waits while items_ holds a value), all
//      before leaving the lock; items_ stays for the takers (step 1 takes a
//      stored value before it looks at closed).
//   5. After parking (woken or timed out), the taker takes the lock once
//      more. If its Waiter is done, a giver filled it (a value) or close()
//      released it without one; if not, it timed out and nobody chose it, so
//      it unlinks itself. Then it leaves the lock and its Waiter goes.
//
// Invariants:
//   HQ1: waiters_ is non-empty only while items_ is empty: a giver hands to
//       a waiter before it would store, and a taker waits only on an empty
//       store. So takes come out in give order (FIFO mode), and no value
//       sits in items_ while a taker sleeps.
//   HQ2: a Waiter is touched by a giver or close() only under the lock and
//       only while linked; it is unlinked (by them, or by its timed-out
//       taker) under the lock, and the taker takes the lock in step 5
//       before its Waiter goes. Because unpark() is called under the lock,
//       the Parker inside the Waiter outlives it (parker.hpp, Lifetime).
//   HQ3: every value given is in exactly one place: items_, one Waiter, the
//       taker that got it, or the vector close() returned; a refused give
//       leaves it with the caller.
//   HQ4: once closed_ (by close() or seal()), always closed_, and nothing is
//       added afterwards: close() leaves no waiter and no item; seal() leaves
//       no waiter, and a taker never parks again (step 1), so each stored
//       value is taken by a take(), or by a later close().
//
// The lock is held for a few pointer moves plus, when a taker sleeps, its
// futex wake; a contended give or take sleeps on the Lock, not on a spin.
#pragma once

#include <zap/lock.hpp>
#include <zap/parker.hpp>

#include <chrono>
#include <deque>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace zap::detail {

// Which stored value a take gets: the oldest (a mailbox) or the newest (a
// pool of objects, where the most recently returned one is warmest in cache).
enum class TakeOrder { fifo, lifo };

template <class Platform, class T, TakeOrder order>
class HandoffQueue {
    // HQ3 needs moves that cannot fail halfway: close() moves every stored
    // value out, and a hand-off moves the value into a sleeping taker's
    // Waiter and out again. A move that throws there would leave a
    // moved-from shell stored, destroy a value already moved out, or lose
    // the one handed off. (A copy into the queue may throw: give()
    // constructs the stored value before anything changes.)
    static_assert(std::is_nothrow_move_constructible_v<T>,
                  "zap::Mailbox<T> and zap::ObjectPool<T> need a T whose move constructor is noexcept: "
                  "close() and the hand-off to a waiting receiver move values, and must not lose one");

public:
    HandoffQueue() = default;
    HandoffQueue(const HandoffQueue&) = delete;
    HandoffQueue& operator=(const HandoffQueue&) = delete;
    ~HandoffQueue() {
        ZAP_ASSERT(waiters_.read() == nullptr, "HandoffQueue destroyed while a taker still waits on it");
    }

    // Step 3: false (and `value` untouched) once closed. Constructs the
    // stored T from std::forward<U>(value) only when it accepts.
    template <class U>
    bool give(U&& value) {
        LockGuard<Platform> guard(lock_);
        if (closed_.read()) return false;
        if (Waiter* waiter = waiters_.read()) {
            waiter->value.emplace(std::forward<U>(value));  // if this throws, the waiter stays queued
            unlink(*waiter);
            release(*waiter);
            return true;
        }
        items_.emplace_back(std::forward<U>(value));
        return true;
    }

    // A stored value if there is one; never waits.
    std::optional<T> try_take() {
        LockGuard<Platform> guard(lock_);
        return pop_item();
    }

    // Steps 1, 2 and 5: a value, or nothing once closed (or, with a
    // timeout, when it expires first).
    std::optional<T> take(const std::chrono::nanoseconds* timeout) {
        Waiter waiter;
        {
            LockGuard<Platform> guard(lock_);
            if (std::optional<T> value = pop_item()) return value;
            if (closed_.read()) return std::nullopt;
            push_waiter(waiter);
        }
        if (timeout == nullptr)
            waiter.parker.park();
        else
            (void)waiter.parker.park_for(*timeout);  // step 5 looks at the Waiter either way
        LockGuard<Platform> guard(lock_);  // step 5, HQ2
        if (!waiter.done.read()) {
            ZAP_ASSERT(timeout != nullptr, "HandoffQueue: a taker without timeout woke without a value or close");
            unlink(waiter);
        }
        return std::move(waiter.value);
    }

    // Step 4: every value never taken; later calls return an empty vector.
    std::vector<T> close() {
        LockGuard<Platform> guard(lock_);
        std::vector<T> left;
        left.reserve(items_.size());  // the one step that may throw, before anything changes
        for (T& item : items_) left.push_back(std::move(item));
        items_.clear();
        closed_.write(true);
        while (Waiter* waiter = pop_waiter()) release(*waiter);
        return left;
    }

    // Step 6.
    void seal() {
        LockGuard<Platform> guard(lock_);
        closed_.write(true);
        while (Waiter* waiter = pop_waiter()) release(*waiter);
    }

    bool closed() const noexcept {
        LockGuard<Platform> guard(lock_);
        return closed_.read();
    }

    std::size_t size() const noexcept {
        LockGuard<Platform> guard(lock_);
        return items_.size();
    }

private:
    template <class V>
    using Cell = typename Platform::template Cell<V>;

    // A sleeping taker (step 1); lives on the taker's stack (HQ2).
    struct Waiter {
        BasicParker<Platform> parker;
        Cell<bool> done{false};  // set by a giver or close() under the lock
        std::optional<T> value;  // filled by a giver under the lock
        Cell<Waiter*> prev{nullptr};
        Cell<Waiter*> next{nullptr};
    };

    std::optional<T> pop_item() {
        if (items_.empty()) return std::nullopt;
        std::optional<T> value;
        if constexpr (order == TakeOrder::fifo) {
            value.emplace(std::move(items_.front()));
            items_.pop_front();
        } else {
            value.emplace(std::move(items_.back()));
            items_.pop_back();
        }
        return value;
    }

    void push_waiter(Waiter& waiter) noexcept {
        ZAP_ASSERT(items_.empty(), "HandoffQueue: HQ1, a taker waits while values are stored");
        Waiter* tail = tail_.read();
        waiter.prev.write(tail);
        if (tail != nullptr)
            tail->next.write(&waiter);
        else
            waiters_.write(&waiter);
        tail_.write(&waiter);
    }

    Waiter* pop_waiter() noexcept {
        Waiter* head = waiters_.read();
        if (head != nullptr) unlink(*head);
        return head;
    }

    void unlink(Waiter& waiter) noexcept {
        Waiter* prev = waiter.prev.read();
        Waiter* next = waiter.next.read();
        if (prev != nullptr)
            prev->next.write(next);
        else
            waiters_.write(next);
        if (next != nullptr)
            next->prev.write(prev);
        else
            tail_.write(prev);
    }

    // Marks an unlinked waiter done and wakes it, still under the lock (HQ2).
    static void release(Waiter& waiter) noexcept {
        waiter.done.write(true);
        waiter.parker.unpark();
    }

    mutable Lock<Platform> lock_;
    std::deque<T> items_;
    Cell<Waiter*> waiters_{nullptr};  // the oldest waiter
    Cell<Waiter*> tail_{nullptr};     // the newest waiter
    Cell<bool> closed_{false};
};

}  // namespace zap::detail
