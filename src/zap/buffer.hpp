// zap/buffer.hpp - a worker's bounded ring of tasks: the owner pushes at the
// tail and pops at the head; thieves take half from the head.
//
// `head_` and `tail_` are free-running 32-bit indices (they wrap); a slot is
// `index % capacity`. Only the owner writes `tail_` and the slots; the owner
// and thieves race on `head_` with CAS.
//
// Protocol:
//   1. push (owner): write tasks into the free slots from tail (relaxed; a
//      thief may be reading a slot it will not win), then publish them with a
//      release store of tail. When the ring is full, migrate: CAS head
//      forward by half the ring (acquire), link the claimed tasks into a list
//      followed by the tasks that did not fit, and hand that list back for the
//      owner's overflow queue.
//   2. pop (owner): CAS head forward by one (acquire), then read the slot;
//      the owner is the only writer of slots, so the slot cannot change under it.
//   3. steal (thief, its own ring empty): load victim head and tail (acquire),
//      copy the first ceil(size/2) tasks into its own ring, then CAS the
//      victim's head past them (acq_rel). Copying before the CAS matters:
//      once head moves, the victim may overwrite those slots.
//   4. consume (owner, ring empty): take up to capacity tasks from a Queue
//      into the ring and one more to run, then publish with a release store
//      of tail.
//
// Invariants:
//   B1 (bounded): 0 <= tail - head <= capacity (in wrapping arithmetic), as
//      seen by the owner. A thief can load a head older than the tail it
//      loads; a difference above capacity means "reload".
//   B2 (ownership): slots in [head, tail) hold tasks owned by the ring; a task
//      leaves the ring only through a successful CAS of head.
#pragma once

#include <zap/assert.hpp>
#include <zap/queue.hpp>
#include <zap/task.hpp>

#include <cstdint>

namespace zap::detail {

template <class Platform>
class Buffer {
public:
    using Task = BasicTask<Platform>;
    using Index = std::uint32_t;
    static constexpr Index capacity = Platform::ring_capacity;
    static_assert(capacity >= 2 && (capacity & (capacity - 1)) == 0, "ring capacity is a power of two, at least 2");

    // What consume() and steal() return: a task to run now, and whether more
    // were put into the ring (then the pool wakes another worker to share them).
    struct Stole {
        Task* task;
        bool pushed;
    };

    Buffer() noexcept : Buffer(0) {}
    // `start` positions both indices; tests start next to the 2^32 wrap.
    explicit Buffer(Index start) noexcept : head_(start), tail_(start) {}

    // Step 1. True when the whole list went into the ring; false when it
    // overflowed: `list` then holds the migrated half followed by the rest,
    // null-terminated (I1 of batch.hpp), for the caller's overflow queue.
    bool push(List<Task>& list) noexcept {
        // Synchronizes with the release half of a thief's CAS in steal(): the
        // thief's reads of the slots it took happen before we overwrite them.
        Index head = head_.load(std::memory_order_acquire);
        Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        for (;;) {
            Index size = tail - head;
            ZAP_ASSERT(size <= capacity, "internal: ring over capacity (B1)");
            if (size < capacity) {
                Task* rest = list.head;
                for (; size < capacity && rest != nullptr; ++size, ++tail) {
                    slot(tail).store(rest, std::memory_order_relaxed);  // published by the tail store below
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
            ZAP_ASSERT(tail - head <= capacity, "internal: ring over capacity (B1)");
            if (tail == head) return nullptr;
            // Races thieves for the slot at head (B2).
            if (head_.compare_exchange_weak(head, head + 1, std::memory_order_acquire, std::memory_order_relaxed))
                return slot(head).load(std::memory_order_relaxed);  // only the owner writes slots
        }
    }

    // Step 4. The ring must be empty. False when the queue is empty or busy.
    bool consume(Queue<Platform>& queue, Stole& out) noexcept {
        Task* cursor = nullptr;
        if (!queue.try_acquire_consumer(cursor)) return false;
        const Index tail = empty_tail();
        Index pushed = 0;
        for (; pushed < capacity; ++pushed) {
            Task* task = queue.pop(cursor);
            if (task == nullptr) break;
            slot(tail + pushed).store(task, std::memory_order_relaxed);  // published by the tail store below
        }
        Task* task = queue.pop(cursor);
        if (task == nullptr && pushed > 0) {
            --pushed;  // run the last one we stored instead
            task = slot(tail + pushed).load(std::memory_order_relaxed);
        }
        queue.release_consumer(cursor);
        if (task == nullptr) return false;
        // Publishes the slots to a thief's acquire load of tail in steal().
        if (pushed > 0) tail_.store(tail + pushed, std::memory_order_release);
        out = Stole{task, pushed > 0};
        return true;
    }

    // Step 3. Our ring must be empty. False when the victim looked empty.
    bool steal(Buffer& victim, Stole& out) noexcept {
        const Index tail = empty_tail();
        for (;; Platform::spin_hint()) {
            // Both synchronize with the victim's release store of tail in push()
            // or consume() (the slots), and with earlier thieves' CASes.
            const Index victim_head = victim.head_.load(std::memory_order_acquire);
            const Index victim_tail = victim.tail_.load(std::memory_order_acquire);
            const Index size = victim_tail - victim_head;
            if (size > capacity) continue;  // B1: head was stale; reload both
            const Index take = size - size / 2;
            if (take == 0) return false;
            for (Index i = 0; i < take; ++i) {
                // Relaxed: a slot read here is only kept if the CAS below wins,
                // which proves the victim had not reused it.
                Task* task = victim.slot(victim_head + i).load(std::memory_order_relaxed);
                slot(tail + i).store(task, std::memory_order_relaxed);  // published by our tail store
            }
            Index expected = victim_head;
            // Acquire: the tasks are ours only after this wins. Release: the
            // copies above happen before the victim's acquire load of head in
            // push(), so it cannot overwrite a slot we are still reading.
            if (victim.head_.compare_exchange_strong(expected, victim_head + take, std::memory_order_acq_rel,
                                                     std::memory_order_relaxed)) {
                const Index pushed = take - 1;
                Task* task = slot(tail + pushed).load(std::memory_order_relaxed);  // our own slot
                // Publishes the copied slots to thieves of our ring.
                if (pushed > 0) tail_.store(tail + pushed, std::memory_order_release);
                out = Stole{task, pushed > 0};
                return true;
            }
        }
    }

    // Approximate (the owner's view is exact): the number of tasks in the ring.
    Index size() const noexcept {
        return tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed);  // a snapshot only
    }

private:
    typename Platform::template Atomic<Task*>& slot(Index index) noexcept { return slots_[index % capacity]; }

    // The owner's tail, where consume/steal refill the (empty) ring from.
    Index empty_tail() noexcept {
        const Index tail = tail_.load(std::memory_order_relaxed);  // only the owner writes tail
        // Synchronizes with the release half of the thieves' CASes in steal():
        // the ring looked empty to pop() through a relaxed load of head, and
        // the slots we are about to overwrite were read by those thieves.
        [[maybe_unused]] const Index head = head_.load(std::memory_order_acquire);
        ZAP_ASSERT(tail == head, "internal: refilling a ring that is not empty");
        return tail;
    }

    // Links the `count` tasks claimed from `head` into a chain and appends the
    // unpushed remainder of `list`.
    List<Task> link_migrated(Index head, Index count, List<Task> list) noexcept {
        Task* first = slot(head).load(std::memory_order_relaxed);  // claimed by our CAS (B2)
        for (Index i = 1; i < count; ++i)
            Link::set_next(*slot(head + i - 1).load(std::memory_order_relaxed),
                           slot(head + i).load(std::memory_order_relaxed));
        Link::set_next(*slot(head + count - 1).load(std::memory_order_relaxed), list.head);
        Link::set_next(*list.tail, static_cast<Task*>(nullptr));  // I1 of batch.hpp
        return List<Task>{first, list.tail};
    }

    typename Platform::template Atomic<Index> head_;
    typename Platform::template Atomic<Index> tail_;
    typename Platform::template Atomic<Task*> slots_[capacity];
};

}  // namespace zap::detail
