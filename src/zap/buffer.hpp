// SPDX-License-Identifier: MIT
// zap/buffer.hpp - a worker's bounded ring of tasks: the owner pushes at the
// tail and pops at the head (FIFO); thieves take half from the head; the
// owner may take back the task it pushed last, at the tail (LIFO, step 5),
// or whichever task is newest (step 6).
//
// `head_` and `tail_` are free-running 64-bit indices; a slot is
// `index % capacity`. Only the owner writes `tail_` and the slots; the owner
// and thieves race on `head_` with CAS. Beside each slot the ring keeps the
// isolation region of its task (isolation.hpp), written and published with
// the slot: a search that may take only one region's tasks reads it where
// it cannot read the task (a thief's task may be gone by then, run and freed
// by whoever claimed it first).
//
// Protocol:
//   1. push (owner): write tasks into the free slots from tail (relaxed; a
//      thief may be reading a slot it will not win), then publish them with a
//      release store of tail. When the ring is full, migrate: CAS head
//      forward by half the ring (acquire), link the claimed tasks into a list
//      followed by the tasks that did not fit, and hand that list back for the
//      owner's overflow queue.
//   2. pop (owner): CAS head forward by one, then read the slot; the owner is
//      the only writer of slots, so the slot cannot change under it.
//   3. steal (thief, its own ring empty):
//      a. the lone task (Go's `runnext` rule): look at the victim's head and
//         tail (relaxed: a guess, b decides). When the ring holds exactly one
//         task, its owner pushed it last and is likely to run it itself
//         within nanoseconds - a helping wait takes its own newest child
//         first (step 6), a fork takes its child back (step 5) - and a thief
//         that takes it turns that into a hand-off between threads. So the
//         thief leaves it alone for Platform::steal_delay_rounds spin hints,
//         watching head (relaxed). If head moves, that task is gone, run by
//         its owner or claimed by another thief: report empty (DL2). If it
//         does not, go on to b, which claims it: the delay ends, it never
//         becomes a refusal (DL1).
//      b. load victim head, then tail (both
//      seq_cst, for step 5; the tail load is also the acquire that makes the
//      slots below it visible). tail == head - 1 means the owner is inside a
//      take-back of the last task (RB3): report empty. Otherwise read the slot
//      at head, CAS head forward by one (seq_cst, for step 5; its release
//      half is RB5) and keep the task in the thief's own ring; repeat
//      (reloading both) until it holds half, rounded up, of the first size
//      it saw, or the victim looks empty. Reading before the CAS matters:
//      once head moves, the victim may overwrite the slot.
//   4. consume (owner, ring empty): take up to capacity tasks from a Queue
//      into the ring and one more to run (the last one taken, which is
//      never written into the ring), then publish with a release store
//      of tail. `more` when it put tasks into the ring or left some in the
//      queue (pushed while it held the queue, or beyond capacity).
//   5. take_back(task) (owner): undo the owner's latest push if no thief won
//      it (Chase-Lev's pop at the bottom, with thieves that take half one
//      task at a time). t is the tail before the call:
//        a. if slot(t - 1) is not `task`, something was pushed after it, or
//           it never went into the ring (overflow): false;
//        b. load head (relaxed, a guess: head only grows). If it is t - 1,
//           ours is the last task or gone: go to f, tail untouched;
//        c. store t - 1 into tail (seq_cst): from here on, a thief that
//           reads the new tail leaves slot t - 1 alone;
//        d. load head (seq_cst) -> h;
//        e. h < t - 1: another task lies below ours; no thief can win slot
//           t - 1 (below), so it is ours without a CAS: true;
//        f. h == t - 1: ours is the last one; CAS head to t (seq_cst, for
//           the cycle below), racing the thieves' CAS for it; restore
//           tail = t if c lowered it (the ring is empty either way); true
//           if we won;
//        g. h == t: a thief took it already; restore tail = t: false.
//      Why no thief wins slot t - 1 in 5e, and why c, d, the thief's loads
//      and its CAS in step 3 are seq_cst: a thief claims only the slot at
//      the head it loaded (RB4), so to take slot t - 1 it must load head ==
//      t - 1 (written by an earlier steal's CAS) and a tail above t - 1: the
//      old tail, not our store. We loaded h < t - 1, a value older than that
//      CAS. Among seq_cst operations, the single total order S follows
//      program order, reads-from (a load after the store it reads) and
//      from-read (a load before the store that overwrote what it read)
//      ([atomics.order]/4 in C++20). So: our head load < that steal's CAS
//      < the thief's head load < its tail load < our tail store < our head
//      load, a cycle: that execution does not exist. Weaken any of the five
//      and C++ allows it; model/take_back_models.cpp (take_back_nested)
//      finds it when the CAS is acq_rel, because then the CAS that wrote the
//      head the thief read has no place in S. The head value may also come
//      from our own next take-back's 5f CAS (the last task, taken back right
//      after this one): the same cycle runs through 5f, which is why 5f is
//      seq_cst too; GenMC found that execution under RC11 and IMM with 5f
//      relaxed (docs/orderings.md, "Step 5f"). (A thief that reads a newer
//      tail than our store reads a slot pushed after it: a new task.)
//   6. pop_back (owner): the newest task, whichever it is. Load head
//      (relaxed): equal to tail, the ring is empty (head only grows, and
//      never passes the owner's tail outside step 5's window, RB3), so return
//      nothing. Otherwise read slot(tail - 1), the owner's latest push into
//      the ring, and take it back (step 5: 5a holds by construction), so
//      the argument of step 5 is the whole argument. Used by a helping wait
//      (helping_wait.hpp H2), so that it runs its own newest child first.
//   7. pop_back_of(region) (owner, isolation.hpp I3a): the newest task of
//      one region. Read the regions of the slots from tail down to head (the
//      owner's own writes; a stale head only adds slots already taken), and
//      take back that many tasks with step 6, newest first: the ones above
//      go to the caller, which pushes them back (step 1) before it runs
//      anything. Thieves may empty the ring meanwhile: then step 6 says so.
//   8. claim_of(victim, region) (thief, isolation.hpp I3c): the oldest task
//      of one region in another ring. Read the victim's head (relaxed, a
//      bound) and tail (acquire: the regions below it are visible), find
//      the oldest slot of the region between them, then claim slots at the
//      head one by one exactly as step 3 does, handing the tasks of other
//      regions to the caller, until it claims one of the region, or claims
//      that slot's index with another region in it (the read-ahead was of
//      an older round of the slot), or the ring is empty.
//
// Invariants:
//   RB1 (bounded, no ABA): 0 <= tail - head <= capacity as seen by the owner,
//      except inside take_back (RB3). A thief can load a head older than the
//      tail it loads; a difference above capacity means "reload". The
//      indices are 64 bits wide so that head never returns to a value a
//      stalled thief loaded: with 32 bits, a thief stalled between its load
//      of head and its CAS while 2^32 tasks leave the ring (seconds of work
//      at a few nanoseconds per task: a preempted or stopped thread) would
//      win its CAS with stale slots, running one task twice and losing
//      another. 2^64 moves of head take centuries. The ring therefore needs
//      lock-free 64-bit atomics: every 64-bit target has them, and so do
//      32-bit x86 and ARMv7 (cmpxchg8b, ldrexd); a target without them
//      does not compile (the Platform's static_assert, std_platform.hpp).
//   RB2 (ownership): slots in [head, tail) hold tasks owned by the ring; a task
//      leaves the ring through a successful CAS of head, or through step 5e
//      (the owner lowers tail over it while another task stays below).
//   RB3 (take-back window): tail == head - 1 only between step 5c and the
//      restoring store of 5f/5g, when the ring is empty; nobody else lowers
//      tail.
//   RB4 (one claim, one task): every CAS of head by a thief claims the one
//      slot at the head it loaded. A CAS that claimed several (the seed's
//      steal of half in one CAS) would break 5e: a thief whose head and tail
//      were loaded before two take-backs could claim a slot the second one
//      takes without a CAS (model/seed/steal-half-one-cas.patch).
//   RB5 (slot reuse): the owner overwrites a slot only after an acquire of a
//      head value at or past the thieves' CASes that read it (push, and
//      empty_tail() before consume/steal refill the ring): the release half
//      of each thief's CAS makes its slot reads happen before the overwrite.
//   DL1 (the delay ends): a thief that leaves a lone task alone (3a) watches
//      it for a bounded number of rounds, then either sees it gone or claims
//      at the head as step 3b does. No task that a steal's look saw is left
//      in the ring by that steal's report of empty: a thief that refused the
//      lone task instead would leave a worker asleep beside it while its
//      owner runs something that may wait for it (model/seed/
//      steal-refuses-lone.patch; pool_core.hpp P6).
//   DL2 (what 3a gives up on is covered): when head moved during the delay,
//      the ring held one task at the look, and that one is gone. What it
//      holds now was pushed after the look's load of tail - or the look
//      read an older tail, as any steal's load may - so it is work the
//      steal would have missed had it run a moment earlier, and the push's
//      own notify() answers for it (pool_core.hpp A2-A4), as for any task
//      pushed behind a search.
#pragma once

#include <zap/assert.hpp>
#include <zap/queue.hpp>
#include <zap/spin.hpp>
#include <zap/task.hpp>

#include <cstdint>

namespace zap::detail {

template <class Platform>
class Buffer {
public:
    using Task = BasicTask<Platform>;
    using Index = std::uint64_t;  // RB1
    static constexpr Index capacity = Platform::ring_capacity;
    static_assert(capacity >= 2 && (capacity & (capacity - 1)) == 0, "ring capacity is a power of two, at least 2");

    // What consume() and steal() return: a task to run now, and whether the
    // search left more work that others may not know of: tasks it put into
    // the ring, or left in the queue it held (then the pool wakes another
    // worker to share them, pool_core.hpp A4).
    struct Stole {
        Task* task;
        bool more;
    };

    Buffer() noexcept : Buffer(0) {}
    // `start` positions both indices; tests start next to the 2^64 wrap.
    explicit Buffer(Index start) noexcept : head_(start), tail_(start) {}

    // Step 1. True when the whole list went into the ring; false when it
    // overflowed: `list` then holds the migrated half followed by the rest,
    // null-terminated (BT1 of batch.hpp), for the caller's overflow queue.
    bool push(List<Task>& list) noexcept {
        // Synchronizes with the release half of a thief's CAS in steal(): the
        // thief's reads of the slots it took happen before we overwrite them.
        Index head = head_.load(std::memory_order_acquire);
        Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        for (;;) {
            Index size = tail - head;
            ZAP_ASSERT(size <= capacity, "internal: ring over capacity (RB1)");
            if (size < capacity) {
                Task* rest = list.head;
                for (; size < capacity && rest != nullptr; ++size, ++tail) {
                    put(tail, rest, Region::of(*rest));
                    rest = Link::next(*rest);
                }
                // Publishes the slots to a thief's acquire load of tail in steal().
                tail_.store(tail, std::memory_order_release);
                if (rest == nullptr) return true;
                list.head = rest;
                Platform::spin_hint();
                head = head_.load(std::memory_order_acquire);  // as above
                continue;
            }
            const Index migrate = size / 2;
            // Success and failure both acquire, like the load of head above:
            // a failure means thieves moved head, and the loop may then
            // overwrite the slots they read (release half of steal()'s CAS).
            if (head_.compare_exchange_weak(head, head + migrate, std::memory_order_acquire,
                                            std::memory_order_acquire)) {
                list = link_migrated(head, migrate, list);
                return false;
            }
        }
    }

    // Step 2. The owner's next task, or null when the ring is empty.
    Task* pop() noexcept {
        Index head = head_.load(std::memory_order_relaxed);  // a guess for the CAS
        const Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        for (;;) {
            ZAP_ASSERT(tail - head <= capacity, "internal: ring over capacity (RB1)");
            if (tail == head) return nullptr;
            // Races thieves for the slot at head (RB2). The acquire is stronger
            // than needed (docs/orderings.md): the slot is our own write, and
            // RB5's acquires come before any overwrite.
            if (head_.compare_exchange_weak(head, head + 1, std::memory_order_acquire, std::memory_order_relaxed))
                return slot(head).load(std::memory_order_relaxed);  // only the owner writes slots
        }
    }

    // Step 4. The ring must be empty. False when the queue is empty or busy.
    bool consume(Queue<Platform>& queue, Stole& out) noexcept {
        Task* cursor = nullptr;
        if (!queue.try_acquire_consumer(cursor)) return false;
        const Index tail = empty_tail();
        // The last task popped is the one to run: it never goes into the
        // ring, so a lone task costs no write to the ring's lines.
        Task* task = queue.pop(cursor);
        ZAP_ASSERT(task != nullptr, "internal: a consumer took the queue with nothing to pop (Q1)");
        Index pushed = 0;
        for (Task* next = nullptr; pushed < capacity; ++pushed) {
            if ((next = queue.pop(cursor)) == nullptr) break;
            put(tail + pushed, task, Region::of(*task));
            task = next;
        }
        const bool left = queue.release_consumer(cursor);
        // Publishes the slots to a thief's acquire load of tail in steal().
        if (pushed > 0) tail_.store(tail + pushed, std::memory_order_release);
        out = Stole{task, pushed > 0 || left};
        return true;
    }

    // Step 3. Our ring must be empty. False when the victim looked empty, or
    // its lone task was taken while we left it alone (3a).
    bool steal(Buffer& victim, Stole& out) noexcept {
        const Index tail = empty_tail();
        if (victim.lone_task_taken()) return false;  // 3a (DL2)
        Index want = 0;  // half of the first non-empty size seen, rounded up
        Index got = 0;
        while (got == 0 || got < want) {
            const Claim claim = claim_head(victim);
            if (claim.size == 0) break;  // empty, or RB3: the owner takes back its last task
            if (want == 0 && claim.size <= capacity) want = claim.size - claim.size / 2;
            if (claim.task == nullptr) continue;
            put(tail + got, claim.task, claim.region);
            ++got;
        }
        if (got == 0) return false;
        const Index pushed = got - 1;
        Task* task = slot(tail + pushed).load(std::memory_order_relaxed);  // our own slot
        // Publishes the copied slots to thieves of our ring.
        if (pushed > 0) tail_.store(tail + pushed, std::memory_order_release);
        out = Stole{task, pushed > 0};
        return true;
    }

    // Step 8. Null when it claimed no task of `region`; `pass(task)` takes
    // every task of another region it claimed on the way.
    template <class Pass>
    static Task* claim_of(Buffer& victim, std::uint64_t region, Pass&& pass) noexcept {
        const Index target = victim.oldest_of(region);
        if (target == none) return nullptr;
        for (;;) {
            const Claim claim = claim_head(victim);
            if (claim.size == 0) return nullptr;
            if (claim.task == nullptr) {
                if (claim.index > target) return nullptr;  // someone else claimed the target
                continue;
            }
            if (claim.region == region) return claim.task;
            pass(*claim.task);
            if (claim.index >= target) return nullptr;  // the read-ahead saw an older round of the slot
        }
    }

    // Step 5. True when `task`, the owner's latest push, is back in the
    // owner's hands (to run now); false when a thief or the owner's own pop()
    // took it, or it is not the newest task in the ring.
    bool take_back(Task& task) noexcept {
        const Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        const Index newest = tail - 1;
        // 5a. Our own write: the last one ever made to slot(newest) (RB2).
        if (slot(newest).load(std::memory_order_relaxed) != &task) return false;
        // 5b. A guess, relaxed: a stale head is only lower, and then 5c-d decide.
        Index head = head_.load(std::memory_order_relaxed);
        const bool lowered = head != newest;
        if (lowered) {
            // 5c. The owner's half of step 5's cycle in S with the thief's loads.
            tail_.store(newest, std::memory_order_seq_cst);
            // 5d. As 5c. Nothing to acquire: the task is our own write, and
            // RB5's acquires come before any overwrite of a slot a thief read.
            head = head_.load(std::memory_order_seq_cst);
            if (head == tail) {  // 5g: a thief won it
                restore_tail(tail);
                return false;
            }
            ZAP_ASSERT(newest - head < capacity, "internal: ring over capacity (RB1)");
            if (head != newest) return true;  // 5e
        }
        // 5f. Races the thieves' CAS for the last task (RB2). seq_cst: a thief
        // whose seq_cst head load reads this CAS's value must come after our
        // earlier 5d in S (step 5's cycle; docs/orderings.md, "Step 5f").
        // Publishes and acquires nothing: the slot is ours, RB5 covers thieves.
        const bool won =
            head_.compare_exchange_strong(head, tail, std::memory_order_seq_cst, std::memory_order_relaxed);
        if (lowered) restore_tail(tail);
        return won;
    }

    // Step 6. The newest task of the ring, taken back; null when the ring is
    // empty or a thief won the last task.
    Task* pop_back() noexcept {
        const Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        // A guess, as in 5b: a stale head is only lower, and then step 5 decides.
        if (head_.load(std::memory_order_relaxed) == tail) return nullptr;
        Task* const newest = slot(tail - 1).load(std::memory_order_relaxed);  // our own write (RB2)
        return take_back(*newest) ? newest : nullptr;
    }

    // Step 7. Null when the ring holds no task of `region`, or thieves took
    // it first; `pass(task)` takes every task above it, newest first.
    template <class Pass>
    Task* pop_back_of(std::uint64_t region, Pass&& pass) noexcept {
        const Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        const Index head = head_.load(std::memory_order_relaxed);  // a guess: a stale head is only lower
        for (Index above = 0; above < tail - head; ++above) {
            if (region_at(tail - 1 - above) != region) continue;  // our own write
            for (;; --above) {
                Task* task = pop_back();
                if (task == nullptr || above == 0) return task;
                pass(*task);
            }
        }
        return nullptr;
    }

    // Approximate (the owner's view is exact): the number of tasks in the ring.
    Index size() const noexcept {
        return tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed);  // a snapshot only
    }

private:
    // Step 3's claim of one slot (RB4), and step 8's: the task at the
    // victim's head, claimed with one CAS, and its region. `size`: the
    // victim's size as seen, 0 when it looked empty; with a size but no
    // task, reload (head was stale, or another claim won the slot).
    struct Claim {
        Task* task;
        std::uint64_t region;
        Index index;
        Index size;
    };
    static Claim claim_head(Buffer& victim) noexcept {
        // seq_cst, with the load of tail below: the thief's half of step
        // 5's cycle in S against take_back()'s store of tail and load of
        // head. Nothing is acquired through it: the slot comes with the
        // tail load, and it cannot be overwritten before our CAS wins (RB5),
        // which a stale head only makes fail.
        const Index victim_head = victim.head_.load(std::memory_order_seq_cst);
        // seq_cst for step 5 as above; its acquire half synchronizes with
        // the victim's release store of tail in push() or consume(): the
        // slots below that tail are visible to the slot load below.
        const Index victim_tail = victim.tail_.load(std::memory_order_seq_cst);
        const Index size = victim_tail - victim_head;
        if (size == 0 || size == ~Index{0}) return Claim{nullptr, 0, victim_head, 0};  // empty, or RB3
        if (size > capacity) {  // RB1: head was stale; reload both
            Platform::spin_hint();
            return Claim{nullptr, 0, victim_head, size};
        }
        // Both relaxed: kept only if the CAS below wins, which proves the
        // victim had not reused the slot (RB5).
        const std::uint64_t region = victim.region_at(victim_head);
        Task* task = victim.slot(victim_head).load(std::memory_order_relaxed);
        Index expected = victim_head;
        // One task per CAS (RB4). seq_cst: the head value a later thief's
        // head load reads in step 5's cycle must come from a seq_cst write.
        // Its release half is RB5: the slot load above happens before the
        // victim's acquire of head in push() or empty_tail(), so it cannot
        // overwrite a slot we are still reading. Its acquire half is not
        // needed: the task reaches us through the tail load above.
        if (!victim.head_.compare_exchange_strong(expected, victim_head + 1, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed)) {
            Platform::spin_hint();
            return Claim{nullptr, 0, victim_head, size};
        }
        ZAP_ASSERT(task != nullptr, "internal: a thief claimed a slot never published to it (RB2)");
        return Claim{task, region, victim_head, size};
    }

    // Step 3a, on the victim's ring: true when it held exactly one task and
    // that task was taken within the delay; false otherwise, and then the
    // thief claims as step 3b says (DL1).
    bool lone_task_taken() noexcept {
        const Index head = head_.load(std::memory_order_relaxed);  // a look only: 3b's loads decide
        if (tail_.load(std::memory_order_relaxed) - head != 1) return false;  // a look only, as above
        return spin_until<Platform>(Platform::steal_delay_rounds, [&] {
            return head_.load(std::memory_order_relaxed) != head;  // a look only: head only grows (RB1)
        });
    }

    typename Platform::template Atomic<Task*>& slot(Index index) noexcept { return slots_[index % capacity]; }

    // The owner's write of a slot and its task's region.
    void put(Index index, Task* task, std::uint64_t region) noexcept {
        slot(index).store(task, std::memory_order_relaxed);  // published by the owner's next release store of tail
        regions_[index % capacity].store(region, std::memory_order_relaxed);  // likewise
    }

    std::uint64_t region_at(Index index) noexcept {
        return regions_[index % capacity].load(std::memory_order_relaxed);  // ordered like the slot's load
    }

    static constexpr Index none = ~Index{0};

    // Step 8's read-ahead: the index of the oldest slot of `region`, or none.
    Index oldest_of(std::uint64_t region) noexcept {
        const Index head = head_.load(std::memory_order_relaxed);  // a bound only: the claims decide
        // Synchronizes with the owner's release stores of tail in push(),
        // consume() and steal(): the regions below that tail are visible.
        const Index tail = tail_.load(std::memory_order_acquire);
        if (tail - head > capacity) return none;  // a stale head, or RB3: nothing to go by
        for (Index index = head; index != tail; ++index)
            if (region_at(index) == region) return index;
        return none;
    }

    // 5f/5g: ends the take-back window (RB3) with an empty ring.
    void restore_tail(Index tail) noexcept {
        // Relaxed: no slot to publish, every slot below tail was published
        // by an earlier release store; a thief that reads it sees head >= tail.
        tail_.store(tail, std::memory_order_relaxed);
    }

    // The owner's tail, where consume/steal refill the (empty) ring from.
    Index empty_tail() noexcept {
        const Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        // RB5: synchronizes with the release half of the thieves' CASes in
        // steal(): the ring looked empty to pop() or take_back() without an
        // acquire of head, and the slots we are about to overwrite were read
        // by those thieves.
        [[maybe_unused]] const Index head = head_.load(std::memory_order_acquire);
        ZAP_ASSERT(tail == head, "internal: refilling a ring that is not empty");
        return tail;
    }

    // Links the `count` tasks claimed from `head` into a chain and appends the
    // unpushed remainder of `list`.
    List<Task> link_migrated(Index head, Index count, List<Task> list) noexcept {
        Task* first = slot(head).load(std::memory_order_relaxed);  // claimed by our CAS (RB2)
        for (Index i = 1; i < count; ++i)
            Link::set_next(*slot(head + i - 1).load(std::memory_order_relaxed),
                           slot(head + i).load(std::memory_order_relaxed));
        Link::set_next(*slot(head + count - 1).load(std::memory_order_relaxed), list.head);
        ZAP_ASSERT(Link::next(*list.tail) == nullptr, "internal: a list given to push() ends in a null link (BT1)");
        return List<Task>{first, list.tail};
    }

    typename Platform::template Atomic<Index> head_;
    typename Platform::template Atomic<Index> tail_;
    typename Platform::template Atomic<Task*> slots_[capacity];
    typename Platform::template Atomic<std::uint64_t> regions_[capacity];  // each slot's task's region
};

}  // namespace zap::detail
