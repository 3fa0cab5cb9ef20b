// zap/helping_wait.hpp - a worker that waits for a WaitGroup runs its pool's
// tasks meanwhile, and when there is none it sleeps where both new work and
// the group's last done() wake it: woken, never polled.
//
// The parties: the waiter W (a worker of pool P, inside a task, calling
// WaitGroup::wait on group G), P's notify (Protocol A of thread_pool.hpp),
// G's done() (wait_group.hpp), and P's helper word H, defined below: one
// futex word per pool on which every sleeping helper of that pool sleeps.
// Bits 0..13 of H count the helpers that entered it (about to sleep or
// asleep); bits 14..31 are an epoch that every wake advances.
//
// Protocol H (helping wait):
//   H1. W reads G's count (relaxed: a stale non-zero only costs a search;
//       H5's re-read is ordered by HW1). Zero: leave (H8); wait() then
//       acquires the count before returning (step 3 of wait_group.hpp).
//   H2. W searches for a task in worker.hpp's order - its own ring first,
//       newest task first (buffer.hpp step 6: the children it scheduled just
//       before waiting, so nested waits follow the program's recursion), then
//       its overflow queue, the global queue, other workers - and runs it, as
//       a worker does (A4: a waking W, or one whose steal moved extra tasks
//       into its ring, calls notify first). Then H1. While W runs a task
//       from a helping wait, its help depth is one more; a wait at the
//       depth bound (Config::max_help_depth) does not help at all: it sleeps
//       on G's own word as a thread outside the pool does (woken by zero
//       only).
//   H3. Nothing found: W arms G, once per wait: it names H in G's helper
//       slot (CAS null -> &H; a slot that names another pool's word makes W
//       wait as an outside thread, like the depth bound) and sets HELPERS in
//       G's word (CAS, release), unless the count is zero (then H1).
//   H4. W sleeps as an idle worker, through the same wait() as A5: if
//       `notified` is set it consumes it (CAS, acquire; signaled -> waking)
//       and goes back to H1 with the waking role if it took one; else it
//       counts itself idle (CAS idle + 1; a waking W gives the role up).
//       A W that finds G's count zero in this loop leaves the idle set
//       (CAS idle - 1, only on a word without `notified`) and goes to H1.
//   H5. To sleep, W enters H: fetch_add(1) (acquire) returns the word value
//       v it will sleep on. Then it re-reads G's count and Sync: zero,
//       `notified` or shutdown -> leave H without sleeping. Else
//       futex_wait(H, v). After the futex (woken, spurious or not), W leaves
//       H (fetch_sub 1) and loops in H4.
//   H6. After shutdown W is no longer counted idle (shutdown zeroed idle,
//       and notify wakes nobody after shutdown). It acquires Sync (pairs
//       with shutdown()'s CAS, so it sees every task scheduled before),
//       searches again (H2), and with nothing found sleeps on H (H5 without
//       the Sync re-read) until G's count is zero: every task scheduled after
//       shutdown is pushed by a running worker into its own ring, and that
//       worker runs it (B2).
//   H7. Wakers. K1: a notify (A3) whose CAS signals an idle worker also wakes
//       H: fetch_add(one epoch, release), then futex_wake(all) if the count
//       it read is not zero. K2: the done() that takes G to zero with
//       HELPERS set swaps HELPERS for WAKING in the same CAS (acquire), reads
//       the slot, wakes H as in K1, then clears WAKING (W1 of
//       wait_group.hpp: G outlives the wake).
//   H8. Leaving: a W that consumed a notification (H4) and has not found
//       the queues empty since (it may have run one task of several that
//       notification covered), or that holds the waking role, re-posts it
//       with notify(is_waking) before returning, so the work it was woken
//       for is not stranded (P4). Found by TLC (tla/Help.tla, HelpWork) when
//       the first version cleared the debt after any search. A W that armed G clears the slot if it still
//       names H (CAS &H -> null), after G's count is zero and WAKING clear.
//
// Invariants:
//   HW1 (no lost wake-up): a helper never sleeps through a wake that
//       happened before its futex_wait. H is the word it sleeps on, and every
//       wake changes H before calling the futex. If the wake's fetch_add
//       comes after W's entering fetch_add in H's modification order, it
//       sees W counted and wakes the futex after changing H, so either W's
//       futex_wait finds H changed or W is queued and woken. If it comes
//       before, W's acquire fetch_add reads it (or a later value in its
//       release sequence), so the notify's Sync CAS or the done()'s count
//       CAS happens before W's re-reads in H5, and W does not sleep.
//   HW2 (no stranded work, P4 of thread_pool.hpp): a sleeping helper is
//       counted idle in Sync (H4) and K1 wakes it like any idle worker; it
//       leaves the idle set only on a Sync word without `notified`, and a
//       notification it consumed is searched for until a search finds
//       nothing (H2), or re-posted (H8).
//   HW3 (G's slot): while HELPERS is set the slot names a live pool's H:
//       every helper that armed G is inside G's wait() until G's count is
//       zero and WAKING is clear, its pool cannot be joined meanwhile (the
//       helper is one of its tasks), and only such a returning helper
//       clears the slot.
//
// What the pool does not promise (docs/helping_wait.md): a helping wait may
// run any task of the pool, not only the waiter's descendants (it prefers
// the newest task of its own ring, but steals when that is empty). A task
// that needs a lock the waiter holds across the wait deadlocks on a
// non-recursive lock, or enters the critical section twice on a recursive
// one: do not hold a lock across a wait on a worker. A wait at the depth bound, or on a group already armed
// by another pool, helps no more: it is woken by zero only, so work that
// only this worker could run then waits for the count, which may never come
// (a hang once every worker is past the bound). Taking its own newest task
// first, a wait nests as deep as the program's recursion, plus the tasks it
// steals when its own ring is empty; the default bound is 4096 levels.
#pragma once

#include <cstdint>
#include <limits>

namespace zap::detail {

// The word a pool's helping waiters sleep on (H5, H7).
template <class Platform>
class Helpers {
public:
    // H5: announces a sleeper; returns the value to pass to sleep().
    std::uint32_t enter() noexcept {
        // Acquire: reads every wake's release fetch_add, so a wake that came
        // first is seen by the caller's re-reads (HW1).
        return word_.fetch_add(1, std::memory_order_acquire) + 1;
    }

    // H5: sleeps while the word still holds `entered`.
    void sleep(std::uint32_t entered) noexcept { Platform::futex_wait(word_, entered, nullptr); }

    // H5: withdraws the sleeper entered by enter().
    void leave() noexcept {
        word_.fetch_sub(1, std::memory_order_relaxed);  // a counter only: wake() reads it in the same modification order
    }

    // H7 (K1, K2): changes the word, then wakes every sleeper if any entered.
    void wake() noexcept {
        // Release: synchronizes with enter()'s acquire, publishing the caller's
        // Sync CAS (notify) or count CAS (done) to the helper's re-reads (HW1).
        const std::uint32_t before = word_.fetch_add(one_epoch, std::memory_order_release);
        if ((before & count_mask) != 0) Platform::futex_wake(word_, std::numeric_limits<std::uint32_t>::max());
    }

private:
    static constexpr std::uint32_t count_bits = 14;  // at most Sync::max_count workers help at once
    static constexpr std::uint32_t count_mask = (1u << count_bits) - 1;
    static constexpr std::uint32_t one_epoch = 1u << count_bits;

    typename Platform::template Atomic<std::uint32_t> word_{0};
};

}  // namespace zap::detail
