// SPDX-License-Identifier: MIT
// zap/helping_wait.hpp - a worker that waits for a WaitGroup runs its pool's
// tasks meanwhile, and when there is none it sleeps where both new work and
// the group's last done() wake it: woken, not polled (outside isolate(), I4).
//
// The parties: the waiter W (a worker of pool P, inside a task, calling
// WaitGroup::wait on group G), P's notify (Protocol A of pool_core.hpp),
// G's done() (wait_group.hpp), and W's helper word H (helper_word.hpp): one
// futex word per worker, on which that worker's helping waits sleep (only
// its innermost wait can be asleep). Bit 0 of H says a helping wait has
// entered it to sleep, bit 1 an isolated one (isolation.hpp I4); bits 2..31
// are an epoch that every wake advances.
//
// Protocol H (helping wait):
//   H1. W reads G's count (relaxed: a stale non-zero only costs a search;
//       H5's re-read is ordered by HW1). Zero: leave (H8); wait() then
//       acquires the count before returning (step 3 of wait_group.hpp). A
//       timed wait (WaitGroup::wait_for, wait_group.hpp step 5) also leaves
//       once its deadline has passed (deadline.hpp): it looks here, before
//       every search, so between two tasks; a task it has started runs to
//       its end, and the wait returns that much later.
//   H2. W searches for a task in worker.hpp's order - its own ring first,
//       newest task first (buffer.hpp step 6: the children it scheduled just
//       before waiting, so nested waits follow the program's recursion), then
//       its overflow queue, other workers - and runs it, as a worker does
//       (A4: a waking W, one whose search left work, or one that consumed a
//       notification and sees work left, calls notify first). The global
//       queue, where tasks from outside the pool wait, it searches only
//       while it owes a notification (H4) or after shutdown (H6): such a task
//       is unrelated work, announced to whoever takes the notification, and
//       a wait that took it would return only after it (latency inversion).
//       Then H1. While W runs a task from a helping wait, its help depth is
//       one more; a wait at the depth bound (Config::max_help_depth) does not
//       help at all: it sleeps on G's own word as a thread outside the pool
//       does (woken by zero only). In an isolation region the search is
//       isolation.hpp's I3, and with nothing found W sleeps as its I4 says
//       (on H, not counted for K1, with a timeout).
//   H3. Nothing found: W arms G, once per wait: it names H in G's helper
//       slot (CAS null -> &H; a slot that names another word makes W wait as
//       an outside thread, like the depth bound) and sets HELPERS in G's word
//       (CAS, release), unless the count is zero (then H1). A slot that
//       names H already was armed by an outer wait of this worker on G (a
//       task that the outer wait runs waits on G too): the nested wait
//       sleeps on H as that one does, and leaves the disarming to it (H8).
//   H4. W waits through the same wait() as an idle worker (A5), but is not
//       counted idle: if `notified` is set and nobody is bound to look for
//       it (state pending: no worker signaled, none waking), or W itself
//       holds the waking role, it consumes it (CAS, acquire), owes it, and
//       goes back to H1; a notification meant for a signaled worker it
//       leaves to that worker (so new work goes to a free worker, not into
//       a wait, whose return a long task would delay). A waking W gives the role up
//       (CAS state pending) before it sleeps. A W that finds G's count zero
//       goes to H1.
//   H5. To sleep, W enters H: fetch_add(1) (acquire) returns the word value
//       v it will sleep on; then a seq_cst fence (HW1). Then it re-reads G's
//       count and Sync: zero, a notification for it (as in H4) or shutdown
//       -> leave H without sleeping. Else futex_wait(H, v), for no longer
//       than a timed wait's deadline leaves. After the futex (woken,
//       spurious, timed out or not), W leaves H (fetch_sub 1) and loops in
//       H4, which leaves the wait once the deadline has passed (H1).
//   H6. After shutdown W acquires Sync (pairs with shutdown()'s CAS, so it
//       sees every task scheduled before), searches again (H2, the global
//       queue included), and with nothing found sleeps on H (entered as in
//       H5, no fence, no Sync re-read) until G's count is zero (K2) or a
//       timeout of its backoff (backoff.hpp: doubling from 1 us to 1 ms),
//       then searches again. No notify() wakes anyone after shutdown (B1
//       leaves `notified` set for good), so the timeout is what finds a task
//       moved after it - half a ring a search stole, the tasks an outside
//       wait put back (OC4b) - when the worker that moved it no longer runs
//       its loop (its task blocks, or it is not a worker). TLC found that
//       case with an outside wait (tla/Help.tla, HelpShutdownOutside) when
//       the sleep had no timeout; a task scheduled after shutdown by a
//       running worker goes into that worker's own ring as well.
//   H7. Wakers. K1: a notify (A3) whose CAS leaves
//       `notified` set with nobody idle to signal and nobody to spawn - so
//       nobody bound to look - issues a seq_cst fence, then looks for one
//       worker whose H has a helping sleeper entered (bit 0; an isolated
//       sleeper may not take the work) and wakes that H:
//       fetch_add(one epoch, release), then futex_wake. K2: the done() that
//       takes G to zero with HELPERS set swaps HELPERS for WAKING in the same
//       CAS (acquire), reads the slot, wakes the H it names as in K1, then
//       clears WAKING (W1 of wait_group.hpp: G outlives the wake). So a
//       group's last done() wakes its own waiter only, and new work wakes a
//       helper only when no idle worker or new one can take it (in the first
//       design every sleeping helper of the pool slept on one word and K1
//       and K2 woke them all). K3: shutdown() (B1), after its CAS and a
//       seq_cst fence, wakes every H with a helping sleeper entered, as K1
//       wakes one: such a helper watches Sync, not the idle event that B1
//       shuts down, and a task queued before the shutdown, whose
//       notification another helper took and did not pass on (it saw the
//       shutdown first, or its H8 re-post came after it and returned at
//       once), would otherwise wait for its count. TLC found that
//       (tla/Help.tla, HelpMutNoShutWake) once the spec had a shutdown;
//       before K3 the pool hung there (tests/test_helping_wakes.cpp).
//   H8. Leaving: a W that consumed a notification (H4) and has not found
//       the queues empty since (it may have run one task of several that
//       notification covered), or that holds the waking role, re-posts it
//       with notify(is_waking) before returning, so the work it was woken
//       for is not stranded (P4). Found by TLC (tla/Help.tla, HelpWork)
//       when the first version cleared the debt after any search. A W that
//       armed G disarms it (wait_group.hpp step 5, T3): once G's count is
//       zero and WAKING clear it clears the slot (CAS &H -> null); a timed
//       W whose deadline passed first takes HELPERS back (CAS, only while
//       the count is not zero), then clears the slot, so G is as before the
//       wait and the next wait, on any worker, may arm it.
//
// Invariants:
//   HW1 (no lost wake-up): a helper never sleeps through a wake that
//       happened before its futex_wait. K2: H is the word it sleeps on, and
//       every wake changes H before calling the futex. If the wake's
//       fetch_add comes after W's entering fetch_add in H's modification
//       order, it wakes the futex after changing H, so either W's futex_wait
//       finds H changed or W is queued and woken. If it comes before, W's
//       acquire fetch_add reads it (or a later value in its release
//       sequence), so the done()'s count CAS happens before W's re-reads in
//       H5, and W does not sleep. K1: the notifier's fence and W's fence are
//       ordered in the single total order; if the notifier's is first, W's
//       re-read of Sync sees `notified` and W does not sleep; if W's is
//       first, the notifier's look sees W entered and wakes H as K2 does.
//       K3 likewise, with shutdown()'s CAS and fence: W's re-read sees the
//       shutdown, or shutdown() sees W entered.
//   HW2 (no stranded work, P4 and P6 of pool_core.hpp): a helper is not an
//       idle worker, so a notify signals or spawns a real one when it can; a
//       notification that nobody is bound to look for (K1's case) wakes a
//       sleeping helper, which consumes it (it re-reads Sync after entering
//       H) and searches for it everywhere until a search finds nothing
//       (H2), or re-posts it (H8).
//   HW3 (G's slot): while HELPERS is set the slot names a live worker's H:
//       workers live as long as the pool, every helper that armed G is
//       inside G's wait() until G's count is zero and WAKING is clear, or
//       until it has taken HELPERS back (T3a of wait_group.hpp), its pool
//       cannot be joined meanwhile (the helper is one of its tasks), and
//       only such a returning helper clears the slot, after HELPERS is clear.
//
// What the pool does not promise (docs/helping_wait.md): a helping wait may
// run other tasks of the pool, not only the waiter's descendants (it
// prefers the newest task of its own ring, and steals from other rings when
// that is empty); inside ThreadPool::isolate() it runs only its region's
// (isolation.hpp). A task that needs a lock the waiter holds across the
// wait deadlocks on a non-recursive lock, or enters the critical section
// twice on a recursive one: do not hold a lock across a wait on a worker,
// or isolate the wait. A wait at the depth bound, or on a group already
// armed by another worker, helps no more: it is woken by zero only, so work
// that only this worker could run then waits for the count, which may never
// come (a hang once every worker is past the bound). Taking its own newest
// task first, a wait nests as deep as the program's recursion, plus the
// tasks it steals when its own ring is empty; the default bound is 4096
// levels.
#pragma once

#include <zap/backoff.hpp>
#include <zap/core_config.hpp>
#include <zap/deadline.hpp>
#include <zap/helper_word.hpp>
#include <zap/isolation.hpp>
#include <zap/sync.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace zap {
template <class Platform>
class BasicWaitGroup;
}

namespace zap::detail {

template <class Platform>
class PoolCore;

// Protocol H on the pool's side: the target of Context::help, and the depth
// bound. A friend of the pool's core (which forwards to it), so that the
// core's header keeps Protocols A and B and this one keeps H.
template <class Pool>
class HelpingWait;

template <class Platform>
class HelpingWait<PoolCore<Platform>> {
    using Pool = PoolCore<Platform>;
    using Context = typename Pool::Context;
    using Worker = typename Pool::Worker;
    using Stole = typename Pool::Stole;
    using Group = BasicWaitGroup<Platform>;

public:
    // Context::help. Returns the helper word this wait armed the group with
    // (the caller disarms it, H8), or null.
    static Helpers<Platform>* help(Context& context, Group& group, Deadline<Platform>& deadline) noexcept {
        Pool& pool = *static_cast<Pool*>(const_cast<void*>(context.pool));
        if (at_help_bound(context)) return nullptr;  // H2: the depth bound
        context.help_depth += 1;
        Arming arming{group, context.worker->helper};
        if (isolates(context.region)) {  // a caller region does not isolate (outside_wait.hpp OC3)
            help_isolated(pool, context, arming, deadline);
        } else {
            help_until_zero(pool, context, arming, deadline);
        }
        context.help_depth -= 1;
        return arming.owner ? &context.worker->helper : nullptr;
    }

    // H7 (K1), from notify_slow(): it left `notified` set with nobody idle to
    // wake and nobody to spawn. Wakes one sleeping helper, if any.
    static void wake_one(Pool& pool) noexcept {
        // Pairs with the fence in Sleep::sleep() (HW1): either that helper's
        // re-read of Sync sees the caller's CAS, or we see it entered.
        Platform::fence(std::memory_order_seq_cst);  // K1, the notifier's side
        wake_entered(pool, true);
    }

    // H7 (K3), from shutdown() after its CAS, holding a closer (P5): wakes
    // every sleeping helper, which then sees the shutdown and searches (H6).
    static void wake_all(Pool& pool) noexcept {
        // Pairs with the fence in Sleep::sleep() (HW1): either that helper's
        // re-read of Sync sees shutdown()'s CAS, or we see it entered.
        Platform::fence(std::memory_order_seq_cst);  // K3, shutdown()'s side
        wake_entered(pool, false);
    }

    static bool at_help_bound(const Context& context) noexcept { return context.help_depth >= context.help_bound; }

    // Config::max_help_depth, or one level per help_frame_budget bytes of stack.
    static std::uint32_t max_help_depth(const Pool& pool) noexcept {
        if (pool.config_.max_help_depth != 0) return pool.config_.max_help_depth;
        return levels_in(pool.config_.stack_size);
    }

    // The drain runs on the thread that joins, whose stack is not the pool's
    // to size: it nests no deeper than a worker would, nor than a worker with
    // the default stack would (4096 levels).
    static std::uint32_t drain_help_depth(const Pool& pool) noexcept {
        return std::min(max_help_depth(pool), levels_in(CoreConfig::default_stack_size));
    }

private:
    // K1 and K3 after their fence: wakes the helper words with a helping
    // sleeper entered, in slot order; only the first one when `one`.
    static void wake_entered(Pool& pool, bool one) noexcept {
        const std::uint32_t started = pool.registered_.load(std::memory_order_relaxed);  // workers_ exists from the start
        for (std::uint32_t i = 0; i < std::max(started, 1u); ++i) {  // slot 0: the drain's too
            if (!pool.workers_[i].helper.entered()) continue;
            pool.workers_[i].helper.wake();
            if (one) return;
        }
    }

    static std::uint32_t levels_in(std::size_t stack_size) noexcept {
        // A helping level's frames measured 368 B (-O2), 544 B (-O0), 928 B
        // (AddressSanitizer) around a small task (docs/helping_wait.md).
        constexpr std::size_t help_frame_budget = 1024;
        const std::size_t levels = std::max<std::size_t>(
            1, std::min<std::size_t>(stack_size / help_frame_budget, std::numeric_limits<std::uint32_t>::max()));
        return static_cast<std::uint32_t>(levels);
    }

    // H3, once per wait, and who disarms (H8).
    struct Arming {
        Group& group;
        Helpers<Platform>& word;
        bool tried = false;  // arm() was called
        bool owner = false;  // this wait named its word in the slot: it disarms

        // Arms the group (once: the caller looks at `tried`); false when the
        // slot names another word (the caller then waits as an outside thread).
        bool arm() noexcept {
            tried = true;
            const typename Group::Arm arm = group.arm(word);
            owner = arm == Group::Arm::armed;
            return arm != Group::Arm::foreign;
        }
    };

    // H1: the wait goes on while the count is not zero and the deadline has not passed.
    static bool waiting(Group& group, Deadline<Platform>& deadline) noexcept {
        return !group.zero() && !deadline.passed();
    }

    // H4-H5: a helping waiter's sleep, done once the group's count is zero
    // or the deadline has passed; sleeps on its own worker's helper word,
    // re-reading the count and Sync after entering it. A helper is not
    // counted idle in Sync (H4).
    struct Sleep {
        Pool& pool;
        Worker& self;
        Group& group;
        Deadline<Platform>& deadline;
        static constexpr bool counts_idle = false;
        bool done() const noexcept { return !waiting(group, deadline); }
        void sleep() noexcept {
            const std::uint32_t entered = self.helper.enter(Helpers<Platform>::Sleeper::helping);
            // Pairs with the fence in wake_one() and in wake_all() (HW1). Also
            // the acquire of a wake that enter() read (K2): enter()'s own
            // acquire is needed only by the sleeps without this fence (the
            // isolated one, and H6's).
            Platform::fence(std::memory_order_seq_cst);  // K1 and K3, the helper's side
            // Both re-reads are ordered after any wake that came before enter() (HW1).
            const Sync sync = pool.load_sync();
            const bool woken = (sync.notified && sync.state == State::pending) || sync.state == State::shutdown;
            if (!group.zero() && !woken) self.helper.sleep(entered, deadline);
            self.helper.leave(Helpers<Platform>::Sleeper::helping);
        }
    };

    // H1-H6 and H8's re-post.
    static void help_until_zero(Pool& pool, Context& context, Arming& arming, Deadline<Platform>& deadline) noexcept {
        Worker& self = *context.worker;
        Group& group = arming.group;
        bool is_waking = false;
        bool owes = false;  // consumed a notification and has not found the queues empty since (H8)
        bool shut_down = false;
        Backoff<Platform> backoff;  // H6's sleeps
        Stole found;
        while (waiting(group, deadline)) {  // H1
            if (pool.find(self, found, true, owes || shut_down)) {  // H2
                // A waking helper always hands its role on (no A4 give-back:
                // tla/Help.tla models the helper that way).
                pool.run_found(context, found, is_waking, owes, false);
                backoff = Backoff<Platform>{};
                continue;
            }
            owes = false;  // searched everything after the notification (as a worker's A4 loop does)
            if (!arming.tried) {  // H3
                if (!arming.arm()) break;
                continue;
            }
            if (shut_down) {
                sleep_briefly(self, Helpers<Platform>::Sleeper::helping, group, backoff, deadline);  // H6
            } else if (pool.wait(is_waking, Sleep{pool, self, group, deadline})) {  // H4-H5
                owes = true;
            } else {
                // Synchronizes with shutdown()'s CAS: the search that follows
                // sees every task scheduled before it (H6).
                shut_down = pool.load_sync(std::memory_order_acquire).state == State::shutdown;
            }
        }
        if (owes || is_waking) pool.notify({.is_waking = is_waking});  // H8
    }

    // H6 and I4: a sleep that nothing but the count wakes (K2). After
    // shutdown every notify() returns at once; an isolated wait takes no
    // notification. So it also ends at the backoff's timeout, and the caller
    // searches again: a task moved after its search (by another search, an
    // outside wait's put-back, OC4b) is found within the backoff's cap.
    static void sleep_briefly(Worker& self, typename Helpers<Platform>::Sleeper sleeper, Group& group,
                              Backoff<Platform>& backoff, Deadline<Platform>& deadline) noexcept {
        const std::uint32_t entered = self.helper.enter(sleeper);
        if (!group.zero()) self.helper.sleep(entered, backoff, deadline);  // HW1 as for H5, for K2
        self.helper.leave(sleeper);
    }

    // isolation.hpp I3-I4: runs its region's tasks until the count is zero
    // (or the deadline has passed); finding none, it sleeps on its helper
    // word, armed in the group (K2), until the group's last done() wakes it
    // or the backoff's timeout ends the sleep, and searches again.
    static void help_isolated(Pool& pool, Context& context, Arming& arming, Deadline<Platform>& deadline) noexcept {
        Worker& self = *context.worker;
        Group& group = arming.group;
        bool is_waking = false;  // an isolated wait never takes a notification, nor the waking role (I4)
        Backoff<Platform> backoff;
        Stole found{nullptr, false};
        while (waiting(group, deadline)) {
            // Read again for every search: a worker that started since holds tasks too.
            const std::uint32_t started = pool.registered_.load(std::memory_order_relaxed);  // workers_ exists from the start
            if (self.find_in(context.region, pool.workers_, started, found)) {  // I3
                pool.run_found(context, found, is_waking, false, false);  // announces found.more (IS2)
                backoff = Backoff<Platform>{};
                continue;
            }
            if (found.more) pool.notify();  // IS2: tasks moved, none of them ours
            if (!arming.tried) {
                if (!arming.arm()) break;
                continue;
            }
            sleep_briefly(self, Helpers<Platform>::Sleeper::isolated, group, backoff, deadline);  // I4
        }
    }
};

}  // namespace zap::detail
