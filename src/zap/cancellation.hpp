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
//
// Invariants:
//   S1 (cancel stops every token): once cancel() happens before a check, a
//      token from C3 reports stop_requested(). C1 and C3's fetch_or are
//      read-modify-writes of one word, so one of them comes second in its
//      modification order and reads the other's bit: cancel() reads SOURCE
//      and requests stop, or the maker reads CANCELED and does. (A token of
//      a source made after the cancel: its maker's fetch_or comes second.)
//   S2 (the source is whole when used): every use of `source_` follows an
//      acquire that read SOURCE (C1, C3), which synchronizes with the maker's
//      release fetch_or, made after the construction and the write.
//   S3 (a skip is final, and comes after cancel()): a child whose start
//      happens after a cancel() of its round reads CANCELED in C2 (coherence:
//      the only later value without CANCELED is C5's store, which happens
//      after every child of the round has ended, so after this load).
//   S4 (cancel() publishes): what the canceler wrote before cancel() is
//      visible to whoever then reads CANCELED with C4 (release in C1,
//      acquire in C4), and to the maker that reads it in C3 before it
//      requests stop (its acquire half): std::stop_source's own rule, a
//      request synchronizes with the stop_requested() that sees it, then
//      carries it on to the token's holders.
//
// Callers: cancel(), is_canceled() and token() may be called by the group's
// owner and its running children at any time, and by any other thread whose
// call returns before the owner's wait() does (C5 must not run under it).
#pragma once

#include <zap/backoff.hpp>

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
        // Release: S4. Acquire: synchronizes with C3's release fetch_or, so
        // the source is whole before we use it (S2).
        if ((word_.fetch_or(canceled, std::memory_order_acq_rel) & source) != 0) source_.read()->request_stop();
    }

    // C2: true when a child that has not started must not start.
    bool skips() const noexcept {
        return (word_.load(std::memory_order_relaxed) & canceled) != 0;  // decides only: S3, no data read after
    }

    // C4.
    bool is_canceled() const noexcept {
        return (word_.load(std::memory_order_acquire) & canceled) != 0;  // synchronizes with C1's release (S4)
    }

    // C3. std::terminate if the stop_source cannot be allocated (token() is noexcept).
    std::stop_token token() const noexcept {
        Backoff<Platform> backoff;
        for (;;) {
            // Synchronizes with C3's release fetch_or below, on another thread (S2).
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
    std::stop_token make_source() const noexcept {
        std::stop_source* made = new (storage_) std::stop_source();
        source_.write(made);
        // Release: the construction and the write above happen before any
        // use that acquires SOURCE (S2). Acquire: a CANCELED read here
        // synchronizes with C1's release, which request_stop carries on (S4).
        if ((word_.fetch_or(source, std::memory_order_acq_rel) & canceled) != 0) made->request_stop();  // S1
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

}  // namespace zap::detail
