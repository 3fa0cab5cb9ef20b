// SPDX-License-Identifier: MIT
// zap/sync.hpp - the pool's packed coordination word.
//
// All of the pool's sleep/wake bookkeeping lives in one 32-bit word so that
// one compare-and-swap moves it from one consistent state to the next. The
// protocol that drives it is written out in pool_core.hpp; this header only
// says what each bit means.
//
//   bit  0..13  idle      before shutdown: workers that have announced they
//                         are going to sleep (counted in wait() before
//                         blocking on the idle event).
//               closers   after shutdown (no worker counts itself idle any
//                         more, so the bits are free): threads that changed
//                         Sync in a way that can let join() return and still
//                         have event calls to make (pool_core.hpp, P5).
//   bit 14..27  spawned   worker threads reserved or running; a reservation is
//                         taken before the OS spawn and given back by a failed
//                         spawn or by the worker's exit
//   bit 28      (unused)  always zero
//   bit 29      notified  work was published since a worker last consumed a
//                         notification: some worker must look at the queues
//                         again before sleeping
//   bit 30..31  state     see State below
#pragma once

#include <cstdint>

namespace zap::detail {

enum class State : std::uint32_t {
    // No worker is on its way to search for work: the next notify may wake or
    // spawn one.
    pending = 0,
    // A notify woke or spawned a worker, which has not yet taken the signal.
    // The first worker to consume the notification becomes the waking worker.
    signaled = 1,
    // One worker is awake and searching ("the waking worker"). Until it finds
    // work (and passes the role on) or gives up, no other worker is woken:
    // this keeps a burst of schedule() calls from waking every sleeper.
    waking = 2,
    // shutdown() was called. Terminal: nothing is woken or spawned any more,
    // and workers leave once they find no work.
    shutdown = 3,
};

struct Sync {
    static constexpr std::uint32_t count_bits = 14;
    static constexpr std::uint32_t max_count = (1u << count_bits) - 1;  // 16383 workers

    std::uint32_t idle = 0;
    std::uint32_t spawned = 0;
    bool notified = false;
    State state = State::pending;

    static constexpr std::uint32_t idle_shift = 0;
    static constexpr std::uint32_t spawned_shift = idle_shift + count_bits;
    static constexpr std::uint32_t unused_shift = spawned_shift + count_bits;
    static constexpr std::uint32_t notified_shift = unused_shift + 1;
    static constexpr std::uint32_t state_shift = notified_shift + 1;

    // The word with spawned == 1 and nothing else: unregistering a worker
    // subtracts it with one fetch_sub.
    static constexpr std::uint32_t one_spawned = 1u << spawned_shift;
    // The word with idle (after shutdown: closers) == 1: a closer gives itself
    // back with one fetch_sub.
    static constexpr std::uint32_t one_closer = 1u << idle_shift;

    constexpr std::uint32_t encode() const noexcept {
        return (idle << idle_shift) | (spawned << spawned_shift) |
               (static_cast<std::uint32_t>(notified) << notified_shift) |
               (static_cast<std::uint32_t>(state) << state_shift);
    }

    static constexpr Sync decode(std::uint32_t word) noexcept {
        Sync s;
        s.idle = (word >> idle_shift) & max_count;
        s.spawned = (word >> spawned_shift) & max_count;
        s.notified = ((word >> notified_shift) & 1u) != 0;
        s.state = static_cast<State>(word >> state_shift);
        return s;
    }

    friend constexpr bool operator==(const Sync&, const Sync&) = default;
};

static_assert(Sync::state_shift + 2 == 32, "Sync fills exactly one 32-bit word");
static_assert(Sync{}.encode() == 0, "the all-zero word is the initial state");
static_assert(Sync::decode(Sync{.idle = Sync::max_count}.encode()).spawned == 0, "idle does not spill into spawned");
static_assert(Sync::decode(Sync{.spawned = Sync::max_count}.encode()).notified == false,
              "spawned does not spill into notified");
static_assert(Sync::decode(Sync{.state = State::shutdown}.encode()).state == State::shutdown, "state round-trips");
static_assert(Sync{.spawned = 1}.encode() == Sync::one_spawned, "one_spawned is spawned == 1");

}  // namespace zap::detail
