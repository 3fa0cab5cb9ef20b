// SPDX-License-Identifier: MIT
// zap/object_pool.hpp - a closable pool of reusable objects, e.g. the seed
// 004 containers that gate how many jobs are in flight.
//
// put() returns an object to the pool, get() takes one and parks while the
// pool is empty. The protocol, its invariants (H1-H4) and the lock are those
// of detail::HandoffQueue (handoff_queue.hpp) in LIFO mode; in terms of a
// pool:
//   1. put(x) hands x to the getter that has waited longest, or keeps it
//      when nobody waits (H1).
//   2. get() takes the most recently put object (the warmest in cache), or
//      parks until a put() hands it one or close() wakes it.
//   3. close() wakes every waiting getter with nothing and returns every
//      object still held (H3, H4).
//
// put() after close() is a contract violation: debug builds abort naming the
// rule; release builds destroy the object (the pool is gone, nothing can
// hold it). A program that returns objects while shutting down closes the
// pool only after the last put(), as examples/job_pool.cpp does.
#pragma once

#include <zap/assert.hpp>
#include <zap/callable_rules.hpp>
#include <zap/handoff_queue.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace zap {

template <class Platform, move_constructs_without_throwing T>
class BasicObjectPool {
public:
    BasicObjectPool() = default;
    BasicObjectPool(const BasicObjectPool&) = delete;
    BasicObjectPool& operator=(const BasicObjectPool&) = delete;

    // Step 1.
    void put(T item) {
        [[maybe_unused]] const bool kept = queue_.give(std::move(item));
        ZAP_ASSERT(kept, "ObjectPool::put after close()");
    }

    // An object if the pool holds one; never waits.
    [[nodiscard("an object taken from the pool is lost unless it is used or put back")]] std::optional<T> try_get() { return queue_.try_take(); }

    // Step 2: an object, or nullopt once the pool is closed.
    [[nodiscard("an object taken from the pool is lost unless it is used or put back")]] std::optional<T> get() { return queue_.take(nullptr); }

    // Step 2 with a timeout: nullopt also when the timeout expires first.
    [[nodiscard("an object taken from the pool is lost unless it is used or put back")]] std::optional<T> get_for(
        std::chrono::nanoseconds timeout) { return queue_.take(&timeout); }

    // Step 3: idempotent; a second close() returns an empty vector.
    [[nodiscard("close() hands back every object the pool still held")]] std::vector<T> close() { return queue_.close(); }

    // The objects held now (a snapshot: others may put or get meanwhile).
    std::size_t size() const noexcept { return queue_.size(); }

private:
    detail::HandoffQueue<Platform, T, detail::TakeOrder::lifo> queue_;
};

}  // namespace zap
