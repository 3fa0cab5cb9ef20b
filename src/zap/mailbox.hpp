// SPDX-License-Identifier: MIT
// zap/mailbox.hpp - a closable many-to-many channel of values (seed 004).
//
// Senders send, receivers receive; a receiver with nothing to take parks
// until a value or close() arrives. The protocol, its invariants (HQ1-HQ4) and
// the lock it runs under are those of detail::HandoffQueue
// (handoff_queue.hpp) in FIFO mode; in terms of a mailbox:
//   1. send(v) hands v to the receiver that has waited longest, or queues it
//      when no receiver waits (HQ1).
//   2. receive() takes the oldest queued value, or parks until a sender
//      hands it one or close() wakes it.
//   3. close() wakes every waiting receiver with nothing, refuses every
//      later send, and returns the values never received (HQ3, HQ4): the
//      values are taken back from the mailbox, and receivers get nothing
//      more.
//   4. seal() is Go's close(ch): it refuses every later send and wakes every
//      waiting receiver with nothing (none waits while values are queued,
//      HQ1), but leaves the queued values to be received: receive() returns
//      them in order, then nullopt once they are gone (HQ4). The last
//      producer of a pipeline seals its output; close() is for the owner
//      that stops the pipeline and wants the values back. The two names
//      differ on purpose: a Go programmer's `close` would have been
//      today's take-back, which loses every queued value it returns when the
//      result is ignored (hence [[nodiscard]] on close()).
//
// Order: the lock orders all sends, and values are taken in that order (HQ1),
// so two values sent by one thread are taken in the order it sent them
// (FIFO per sender, the contract), whichever receivers take them.
//
// "Not consumed" on a refused send: the contract writes `bool send(T value)`;
// a by-value parameter would already hold the caller's value (moved in)
// when the mailbox finds itself closed. So send takes `const T&` (copied
// only when accepted) and `T&&` (moved from only when accepted): every call
// that compiles against `send(T)` compiles here, and after `false` the
// caller's object is exactly as it was.
#pragma once

#include <zap/callable_rules.hpp>
#include <zap/handoff_queue.hpp>

#include <chrono>
#include <concepts>
#include <optional>
#include <utility>
#include <vector>

namespace zap {

template <class Platform, move_constructs_without_throwing T>
class BasicMailbox {
public:
    BasicMailbox() = default;
    BasicMailbox(const BasicMailbox&) = delete;
    BasicMailbox& operator=(const BasicMailbox&) = delete;

    // Step 1: false once closed or sealed, and `value` is not moved from then.
    [[nodiscard("false: the mailbox is closed and the value stayed with the caller")]] bool send(T&& value) {
        return queue_.give(std::move(value));
    }
    [[nodiscard("false: the mailbox is closed and the value stayed with the caller")]] bool send(const T& value)
        requires std::copy_constructible<T>
    {
        return queue_.give(value);
    }

    // Step 2: the next value; nullopt once the mailbox is closed and drained
    // (after close(), at once: it took every value back; after seal(), once
    // the queued values have been received).
    [[nodiscard("a received value is lost unless it is used")]] std::optional<T> receive() {
        return queue_.take(nullptr);
    }

    // Step 2 with a timeout: nullopt also when the timeout expires first.
    [[nodiscard("a received value is lost unless it is used")]] std::optional<T> receive_for(
        std::chrono::nanoseconds timeout) {
        return queue_.take(&timeout);
    }

    // Step 3: idempotent; a second close() returns an empty vector. After
    // seal(), it takes back what the receivers have not taken yet.
    [[nodiscard("close() hands back the values nobody received; seal() lets the receivers drain them")]]
    std::vector<T> close() {
        return queue_.close();
    }

    // Step 4: idempotent; close() may follow.
    void seal() { queue_.seal(); }

    // True once close() or seal() was called: sends are refused.
    bool closed() const noexcept { return queue_.closed(); }

private:
    detail::HandoffQueue<Platform, T, detail::TakeOrder::fifo> queue_;
};

}  // namespace zap
