// SPDX-License-Identifier: MIT
// zap/queue.hpp - an unbounded intrusive queue: any number of producers push
// lists of tasks without blocking; one consumer at a time, elected by a try-
// lock bit, takes them.
//
// The whole queue is one atomic word, `stack_`: a pointer to the most
// recently pushed list (a Treiber stack of lists) with two flag bits in the
// pointer's alignment bits:
//   IS_CONSUMING  a consumer holds the queue;
//   HAS_CACHE     `cache_` holds tasks an earlier consumer took off the stack
//                 but did not run; the next consumer starts from them.
//
// Protocol:
//   1. push: link the list's tail to the current top, CAS the list's head in
//      as the new top (release), keeping both flag bits as they are.
//   2. try_acquire_consumer: CAS IS_CONSUMING|HAS_CACHE on (acquire). If there
//      was no cache, the same CAS also takes the whole stack, which becomes
//      the consumer's cursor; otherwise the cursor is `cache_`.
//   3. pop: hand the cursor's task out and advance; a dry cursor swaps the
//      stack out (acquire). 3b: newest_first swaps it out in front of the cursor.
//   4. release_consumer: store the unconsumed cursor in `cache_`, then clear
//      IS_CONSUMING (and HAS_CACHE if the cursor is empty) in one fetch_sub
//      (release), handing cache_ to the next consumer. It reports whether
//      tasks are left: a cache, or lists pushed while it held the queue. A
//      searcher that found the queue held passed it by, so the consumer is
//      the one who knows about those lists (pool_core.hpp A4).
//
// Invariants:
//   Q1 (cache flag): HAS_CACHE is set iff cache_ holds a non-empty chain, or
//      a consumer holds the queue (then the consumer's cursor is the cache).
//   Q2 (ownership): tasks reachable from the stack pointer belong to the
//      queue; tasks reachable from cache_ or a cursor belong to the consumer
//      holding IS_CONSUMING, and only it reads or writes their links.
//
// Order: not FIFO. One swap takes every list pushed so far, newest list
// first; the pool promises no order between tasks.
#pragma once

#include <zap/assert.hpp>
#include <zap/task.hpp>

#include <cstdint>
#include <memory>

namespace zap::detail {

template <class Platform>
class Queue {
public:
    using Task = BasicTask<Platform>;

    // Step 1. Lock-free; never blocks on the consumer.
    void push(List<Task> list) noexcept {
        std::uintptr_t stack = stack_.load(std::memory_order_relaxed);  // a guess for the CAS
        for (;;) {
            Link::set_next(*list.tail, pointer_of(stack));
            const std::uintptr_t top = address_of(list.head) | (stack & flag_mask);
            // Publishes the list's links to the consumer's acquire in
            // try_acquire_consumer() or pop() (steps 2 and 3).
            if (stack_.compare_exchange_weak(stack, top, std::memory_order_release, std::memory_order_relaxed))
                return;
        }
    }

    // Step 2. False when the queue is empty or another consumer holds it.
    bool try_acquire_consumer(Task*& cursor) noexcept {
        std::uintptr_t stack = stack_.load(std::memory_order_relaxed);  // a guess for the CAS
        for (;;) {
            if ((stack & is_consuming) != 0) return false;
            if ((stack & (has_cache | pointer_mask)) == 0) return false;
            std::uintptr_t taken = stack | has_cache | is_consuming;  // Q1: the cursor is the cache now
            if ((stack & has_cache) == 0) taken &= ~pointer_mask;     // no cache: take the stack too
            // Synchronizes with the release in push() (the stack's links) and
            // in release_consumer() (cache_ and its links).
            if (stack_.compare_exchange_weak(stack, taken, std::memory_order_acquire, std::memory_order_relaxed)) {
                cursor = (stack & has_cache) != 0 ? cache_.read() : pointer_of(stack);
                return true;
            }
        }
    }

    // Step 3. Only the consumer calls this; null when nothing is left.
    Task* pop(Task*& cursor) noexcept {
        if (cursor == nullptr) {
            // A hint: an empty stack needs no swap.
            const std::uintptr_t stack = stack_.load(std::memory_order_relaxed);
            ZAP_ASSERT((stack & is_consuming) != 0, "internal: Queue::pop without the consumer");
            if ((stack & pointer_mask) == 0) return nullptr;
            // Synchronizes with the release in push(): the links of the taken lists.
            cursor = pointer_of(stack_.exchange(has_cache | is_consuming, std::memory_order_acquire));
        }
        Task* task = cursor;
        cursor = Link::next(*task);
        return task;
    }

    // Step 4. True when tasks are left in the queue.
    bool release_consumer(Task* cursor) noexcept {
        const std::uintptr_t remove = is_consuming | (cursor == nullptr ? has_cache : 0);  // Q1
        cache_.write(cursor);
        // Publishes cache_ and the links behind it to the next consumer's acquire
        // in try_acquire_consumer().
        const std::uintptr_t before = stack_.fetch_sub(remove, std::memory_order_release);
        ZAP_ASSERT((before & remove) == remove, "internal: Queue::release_consumer without the consumer");
        return cursor != nullptr || (before & pointer_mask) != 0;
    }

    // A snapshot: true when no list is pushed and no cache waits for a
    // consumer. A consumer's cursor does not count: the consumer accounts
    // for what it leaves (step 4).
    bool looks_empty() const noexcept {
        // Relaxed: the caller's fence orders it (pool_core.hpp A4's look).
        const std::uintptr_t stack = stack_.load(std::memory_order_relaxed);
        return (stack & pointer_mask) == 0 && (stack & flag_mask) != has_cache;
    }

    // Step 3b. Only the consumer calls this: puts the lists pushed since the
    // cursor was taken in front of it (step 3's swap), so that the next pop()
    // meets the newest task first. Walks what it takes once, to its end.
    void newest_first(Task*& cursor) noexcept {
        Task* const older = cursor;
        cursor = nullptr;
        Task* const newest = pop(cursor);  // a dry cursor: step 3 swaps the stack out
        if (newest == nullptr) {
            cursor = older;
            return;
        }
        Task* last = newest;
        while (Link::next(*last) != nullptr) last = Link::next(*last);
        Link::set_next(*last, older);
        cursor = newest;
    }

private:
    static constexpr std::uintptr_t has_cache = 0b01;
    static constexpr std::uintptr_t is_consuming = 0b10;
    static constexpr std::uintptr_t flag_mask = has_cache | is_consuming;
    static constexpr std::uintptr_t pointer_mask = ~flag_mask;
    static_assert(alignof(Task) > flag_mask, "the flag bits live in a task pointer's alignment bits");

    static std::uintptr_t address_of(Task* task) noexcept { return reinterpret_cast<std::uintptr_t>(task); }
    static Task* pointer_of(std::uintptr_t stack) noexcept { return reinterpret_cast<Task*>(stack & pointer_mask); }

    typename Platform::template Atomic<std::uintptr_t> stack_{0};
    typename Platform::template Cell<Task*> cache_{nullptr};  // Q2: the consumer's
};

}  // namespace zap::detail
