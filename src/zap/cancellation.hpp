// SPDX-License-Identifier: MIT
// zap/cancellation.hpp - a TaskGroup's cancel flag, and the std::stop_source
// behind its stop_token(), made only when someone asks for a token.
//
// Both live in one 32-bit stop word: CANCELED (cancel() was called this
// round), CLAIMED (a thread is making the stop_source) and SOURCE (the
// stop_source exists, at the address in `source_`). A round runs from the
// group's construction, or from the end of a wait(), to the end of the next
// wait(). Why the source is made lazily: std::stop_source allocates its
// shared state, and most groups never hand out a token, so making one in the
// constructor would add an allocation to every fork of a TaskGroup.
//
// Protocol C (task_group.hpp calls it):
//   C1. cancel(): fetch_or(CANCELED) (acq_rel). If the value it replaced has
//       SOURCE, request stop on the source.
//   C2. A child about to start, and run() about to schedule one, load the word
//       (relaxed): CANCELED means skip - the callable is destroyed without
//       being called, and a child still counts itself done (task_group.hpp
//       steps 1-2).
//   C3. token(): load the word (acquire). SOURCE: return a token of the
//       source. CLAIMED: another thread is making it; wait (Backoff: it has
//       a constructor call left) and load again. Neither: claim it (CAS,
//       + CLAIMED), construct the stop_source in the group's storage, write
//       its address to `source_`, then fetch_or(SOURCE) (acq_rel); if the
//       value that replaced has CANCELED, request stop on the source.
//   C4. is_canceled(): load the word (acquire), test CANCELED.
//   C5. reset(), by the waiter once every child of the round has ended
//       (wait() returned from the group's count): if CANCELED, destroy the
//       source if there is one and store 0 (relaxed).
//   C6. The group's loops (parallel_for.hpp step 6, parallel_reduce.hpp
//       step 5): while a child runs, its thread's Context names the group
//       (CancelScope), together with the thread's help depth at that moment:
//       a task that a helping wait inside the child runs is one level deeper
//       and sees no group. A loop started in a child reads the group once;
//       each of its pieces runs in a scope of that group, on whichever
//       thread runs the piece, so loops nested in the body belong to it too.
//   C7. A loop about to split its range or to start a piece (a reduction: a
//       part of its tree) loads the word (relaxed) as C2 does: CANCELED means
//       it starts nothing more.
//   C8. token() for run(f) with an f that takes a std::stop_token: run()
//       asks for the token before it counts the child (task_group.hpp step
//       9), so a stop_source that cannot be allocated throws std::bad_alloc
//       from run(). The claimer of C3 whose construction throws clears
//       CLAIMED (fetch_and, relaxed: it made nothing to publish) before the
//       exception goes on; a concurrent C3 caller then sees neither bit and
//       claims the making itself.
//
// Invariants:
//   CS1 (cancel stops every token): once cancel() happens before a check, a
//      token from C3 reports stop_requested(). C1 and C3's fetch_or are
//      read-modify-writes of one word, so one of them comes second in its
//      modification order and reads the other's bit: cancel() reads SOURCE
//      and requests stop, or the maker reads CANCELED and does. (A token of
//      a source made after the cancel: its maker's fetch_or comes second.)
//   CS2 (the source is whole when used): every use of `source_` follows an
//      acquire that read SOURCE (C1, C3), which synchronizes with the maker's
//      release fetch_or, made after the construction and the write.
//   CS3 (a skip is final, and comes after cancel()): a child whose start
//      happens after a cancel() of its round reads CANCELED in C2 (coherence:
//      the only later value without CANCELED is C5's store, which happens
//      after every child of the round has ended, so after this load).
//   CS4 (cancel() publishes): what the canceler wrote before cancel() is
//      visible to whoever then reads CANCELED with C4 (release in C1,
//      acquire in C4), and to the maker that reads it in C3 before it
//      requests stop (its acquire half): std::stop_source's own rule, a
//      request synchronizes with the stop_requested() that sees it, then
//      carries it on to the token's holders.
//   CS5 (a canceled loop starts nothing more, and the reset comes after): a
//      split or piece whose start happens after a cancel() of its round
//      reads CANCELED in C7, by CS3's argument: every piece of a loop ends
//      before the loop returns, so before the child that called it ends, so
//      before C5's store.
//
// Callers: cancel(), is_canceled() and token() may be called by the group's
// owner and its running children at any time, and by any other thread whose
// call returns before the owner's wait() does (C5 must not run under it).
#pragma once

#include <zap/backoff.hpp>
#include <zap/worker.hpp>

#include <cstddef>
#include <cstdint>
#include <new>
#include <stop_token>

namespace zap::detail {

template <class Platform>
class Cancellation {
public:
    Cancellation() noexcept = default;
    Cancellation(const Cancellation&) = delete;
    Cancellation& operator=(const Cancellation&) = delete;
    ~Cancellation() { destroy_source(); }

    // C1.
    void cancel() noexcept {
        // Release: CS4. Acquire: synchronizes with C3's release fetch_or, so
        // the source is whole before we use it (CS2).
        if ((word_.fetch_or(canceled, std::memory_order_acq_rel) & source) != 0) source_.read()->request_stop();
    }

    // C2: true when a child that has not started must not start.
    bool skips() const noexcept {
        return (word_.load(std::memory_order_relaxed) & canceled) != 0;  // decides only: CS3, no data read after
    }

    // C4.
    bool is_canceled() const noexcept {
        return (word_.load(std::memory_order_acquire) & canceled) != 0;  // synchronizes with C1's release (CS4)
    }

    // C3 (and C8: std::bad_alloc when the stop_source cannot be made).
    std::stop_token token() const {
        Backoff<Platform> backoff;
        for (;;) {
            // Synchronizes with C3's release fetch_or below, on another thread (CS2).
            std::uint32_t seen = word_.load(std::memory_order_acquire);
            if ((seen & source) != 0) return source_.read()->get_token();
            if ((seen & claimed) != 0) {
                backoff.pause(word_, seen);  // the maker has a constructor call left
                continue;
            }
            // Decides who makes the source; publishes nothing (the fetch_or below does).
            if (word_.compare_exchange_weak(seen, seen | claimed, std::memory_order_relaxed,
                                            std::memory_order_relaxed))
                return make_source();
        }
    }

    // C5: the owner, once every child of the round has ended.
    void reset() noexcept {
        if (!skips()) return;  // not canceled: a source, if any, is still unrequested and stays
        destroy_source();
        word_.store(0, std::memory_order_relaxed);  // nobody else touches the word now (callers, above)
    }

private:
    static constexpr std::uint32_t canceled = 1;
    static constexpr std::uint32_t claimed = 2;
    static constexpr std::uint32_t source = 4;

    // C3, for the thread that claimed the source.
    std::stop_token make_source() const {
        std::stop_source* made = nullptr;
        try {
            made = new (storage_) std::stop_source();
        } catch (...) {
            word_.fetch_and(~claimed, std::memory_order_relaxed);  // C8: gives the claim back; publishes nothing
            throw;
        }
        source_.write(made);
        // Release: the construction and the write above happen before any
        // use that acquires SOURCE (CS2). Acquire: a CANCELED read here
        // synchronizes with C1's release, which request_stop carries on (CS4).
        if ((word_.fetch_or(source, std::memory_order_acq_rel) & canceled) != 0) made->request_stop();  // CS1
        return made->get_token();
    }

    void destroy_source() noexcept {
        std::stop_source* made = source_.read();
        if (made == nullptr) return;
        made->~stop_source();
        source_.write(nullptr);
    }

    mutable typename Platform::template Atomic<std::uint32_t> word_{0};
    mutable typename Platform::template Cell<std::stop_source*> source_{nullptr};  // null until C3 makes it
    alignas(std::stop_source) mutable std::byte storage_[sizeof(std::stop_source)];
};

// C6: while it lives, the calling thread's loops belong to `group` (null:
// to no group), at the thread's current help depth. Outside every pool's
// threads it does nothing: only a pool's threads run a group's children.
template <class Platform>
class CancelScope {
public:
    explicit CancelScope(const Cancellation<Platform>* group) noexcept : context_(Context<Platform>::current()) {
        if (context_ == nullptr) return;
        outer_ = context_->cancellation;
        outer_depth_ = context_->cancellation_depth;
        context_->cancellation = group;
        context_->cancellation_depth = context_->help_depth;
    }
    ~CancelScope() {
        if (context_ == nullptr) return;
        context_->cancellation = outer_;
        context_->cancellation_depth = outer_depth_;
    }
    CancelScope(const CancelScope&) = delete;
    CancelScope& operator=(const CancelScope&) = delete;

    // The group the calling thread's code belongs to, or null.
    static const Cancellation<Platform>* current() noexcept {
        const Context<Platform>* context = Context<Platform>::current();
        if (context == nullptr || context->cancellation_depth != context->help_depth) return nullptr;
        return context->cancellation;
    }

private:
    Context<Platform>* context_;
    const Cancellation<Platform>* outer_ = nullptr;
    std::uint32_t outer_depth_ = 0;
};

}  // namespace zap::detail
