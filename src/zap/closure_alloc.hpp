// SPDX-License-Identifier: MIT
// zap/closure_alloc.hpp - memory for the drop-in layer's heap tasks
// (spawn.hpp: spawn, submit, TaskGroup::run) without the general allocator
// on the common path.
//
// A heap task is allocated by the thread that spawns it and freed by the
// worker that runs it. With malloc that is an allocation and a free on
// another thread per task: the free fills the worker's cache, the spawner's
// never refills, and both keep going to the allocator's shared arena
// (measured: 57% of the instructions of bench/run's drop-in spawn). Here
// each thread carves blocks out of slabs of its own; whoever frees a block
// sends it back to the thread that carved it, and that thread takes all of
// them back with one exchange once its own free list is empty.
//
// Blocks are of one size (`block_bytes`: a header and the payload); a task
// larger or more aligned than the payload, or one past a thread's
// `keep_blocks`, is allocated from Platform::allocate (its header's owner is
// null). Used only by a Platform that opts in (`Platform::recycles_closures`,
// true for StdPlatform); the others (the models) allocate every task.
//
// Protocol (CA):
//   CA1. A thread's first allocate() makes its Cache (Platform::allocate)
//       and asks the Platform to run CA5 when the thread exits
//       (Platform::at_thread_exit); if it cannot, the thread's allocations
//       are blocks of their own from then on.
//   CA2. allocate(): pop the thread's `local` list; empty: take the whole
//       `returned` stack as the new local list (exchange); still empty: carve
//       the next block of the current slab, or of a new slab (Platform::
//       allocate) while the thread has fewer than `keep_blocks`; past that,
//       a block of its own from Platform::allocate.
//   CA2'. Allocation failure: every Platform::allocate above may throw
//       (std::bad_alloc); allocate() then throws it to its caller having
//       changed nothing that counts - no Cache made (the next call tries
//       again), no slab counted (the count is raised once the slab is
//       there: a failed slab does not use up the thread's keep_blocks), no
//       block carved.
//   CA3. deallocate() by the owner: push onto `local` (plain).
//   CA4. deallocate() by another thread: push onto the owner's `returned`
//       stack (CAS). Seeing ABANDONED: count the block out (CA6).
//   CA5. Thread exit: exchange `returned` to ABANDONED; the blocks still out
//       are those carved less those in the two lists; trade the thread's
//       `bias` in `out` for that count (CA6).
//   CA6. `out` is the bias while the thread lives, then the count of blocks
//       still out; whoever takes it to zero - the last block counted out, or
//       CA5 when none is out - frees the slabs and the Cache.
//
// Invariants:
//   CK1 (ownership): a carved block is in exactly one place: a task, its
//      owner's `local` list (only the owner touches it), or its owner's
//      `returned` stack; once `returned` holds ABANDONED, nothing is pushed.
//   CK2 (lifetime): `out` cannot reach zero while the thread lives (the bias
//      exceeds any count of blocks) nor while a block is out after CA5, so the
//      slabs and the Cache outlive every block's CA4.
//
// Memory: a thread keeps the slabs of its peak of blocks out at once (at
// most keep_blocks * block_bytes, 4 MiB) until it exits and they are back.
// Under AddressSanitizer a block in a list is poisoned, so a use of a task
// after it ran is still reported.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace zap::detail {

template <class Platform>
class ClosureMemory {
public:
    static constexpr std::size_t block_bytes = 128;
    static constexpr std::size_t slab_blocks = 64;        // the first holds the slab's link
    static constexpr std::size_t keep_blocks = 1 << 15;   // per thread, in slabs: 4 MiB

    static void* allocate(std::size_t size, std::size_t align) {
        if (!fits(size, align)) return Platform::allocate(size, align);
        Cache* cache = own_cache();
        return (cache != nullptr ? take(*cache) : own_block())->payload;  // CA2
    }

    static void deallocate(void* p, std::size_t size, std::size_t align) noexcept {
        if (!fits(size, align)) return Platform::deallocate(p, size, align);
        give_back(reinterpret_cast<Block*>(static_cast<unsigned char*>(p) - offsetof(Block, payload)));
    }

private:
    struct Cache;
    struct Block {
        Cache* owner;  // null: a block of its own (CA2's last case)
        Block* next;   // in a list: the next block; a slab's first block: the next slab
        alignas(16) unsigned char payload[block_bytes - 16];
    };
    static_assert(sizeof(Block) == block_bytes && offsetof(Block, payload) == 16);

    static constexpr std::uint64_t bias = std::uint64_t{1} << 62;  // more than any count of blocks

    struct Cache {
        // The owner thread's only.
        Block* local = nullptr;
        Block* slabs = nullptr;      // each slab's first block, linked
        std::size_t next_block = 0;  // of the newest slab; slab_blocks: full
        std::size_t slab_count = 0;
        std::size_t carved = 0;
        // Shared.
        typename Platform::template Atomic<std::uintptr_t> returned{0};  // a Treiber stack, or ABANDONED
        typename Platform::template Atomic<std::uint64_t> out{bias};     // CA6
    };
    static constexpr std::uintptr_t abandoned = 1;  // no Block is at address 1

    static constexpr bool fits(std::size_t size, std::size_t align) noexcept {
        return size <= sizeof(Block::payload) && align <= alignof(Block);
    }

    static void poison(Block* block) noexcept {
#if defined(__SANITIZE_ADDRESS__)
        ASAN_POISON_MEMORY_REGION(block->payload, sizeof block->payload);
#else
        (void)block;
#endif
    }
    static Block* unpoisoned(Block* block) noexcept {
#if defined(__SANITIZE_ADDRESS__)
        ASAN_UNPOISON_MEMORY_REGION(block->payload, sizeof block->payload);
#endif
        return block;
    }

    // CA1. The thread's Cache: null before its first allocation, `exited`
    // once CA5 has run. A plain pointer (no destructor), so a thread_local
    // destructor that spawns or frees a task after CA5 still reads it.
    static Cache*& current() noexcept {
        static thread_local Cache* cache = nullptr;
        return cache;
    }
    static Cache* exited() noexcept { return reinterpret_cast<Cache*>(alignof(Cache)); }  // no Cache lives there
    // Null after the thread's exit began, or when the Platform could not
    // arrange CA5: the thread's tasks then take blocks of their own. CA5
    // (exit_thread, below) is handed its Cache rather than reading
    // current(): under MinGW-w64 a thread_local may already be freed when
    // the thread's exit calls run.
    static Cache* own_cache() {
        Cache*& cache = current();
        if (cache == nullptr) {
            cache = new (Platform::allocate(sizeof(Cache), alignof(Cache))) Cache;  // CA2': may throw, cache stays null
            if (!Platform::template at_thread_exit<&exit_thread>(cache)) free_cache(*std::exchange(cache, exited()));
        }
        return cache == exited() ? nullptr : cache;
    }

    static void free_cache(Cache& cache) noexcept {
        cache.~Cache();
        Platform::deallocate(&cache, sizeof(Cache), alignof(Cache));
    }

    // CA2.
    static Block* take(Cache& cache) {
        if (cache.local == nullptr) {
            // Acquire: synchronizes with every CA4 push it takes, so each
            // block's last use by its task happens before its reuse here.
            cache.local = reinterpret_cast<Block*>(cache.returned.exchange(0, std::memory_order_acquire));
        }
        if (Block* block = cache.local) {
            cache.local = block->next;
            return unpoisoned(block);
        }
        if (cache.slabs == nullptr || cache.next_block == slab_blocks) {
            if ((cache.slab_count + 1) * slab_blocks > keep_blocks) return own_block();
            void* memory = Platform::allocate(slab_blocks * sizeof(Block), Platform::cache_line);  // CA2': may throw
            cache.slab_count += 1;
            cache.slabs = make_block(memory, nullptr, cache.slabs);
            cache.next_block = 1;
        }
        Block* block = make_block(&cache.slabs[cache.next_block++], &cache, nullptr);
        cache.carved += 1;
        return block;
    }

    static Block* own_block() { return make_block(Platform::allocate(sizeof(Block), alignof(Block)), nullptr, nullptr); }

    static Block* make_block(void* memory, Cache* owner, Block* next) noexcept {
        Block* block = new (memory) Block;  // the payload left uninitialized
        block->owner = owner;
        block->next = next;
        return block;
    }

    // CA3 and CA4.
    static void give_back(Block* block) noexcept {
        Cache* owner = block->owner;
        if (owner == nullptr) return Platform::deallocate(block, sizeof(Block), alignof(Block));
        poison(block);
        if (owner == current()) {
            block->next = owner->local;  // CA3 (CK1: only the owner touches local)
            owner->local = block;
            return;
        }
        std::uintptr_t head = owner->returned.load(std::memory_order_relaxed);  // a guess for the CAS
        do {
            if (head == abandoned) return count_out(*owner, 1);  // CK1: nothing is pushed after CA5
            block->next = reinterpret_cast<Block*>(head);
            // Release: the task's last use of the block happens before the
            // owner's acquire exchange (CA2) that takes it back.
        } while (!owner->returned.compare_exchange_weak(head, reinterpret_cast<std::uintptr_t>(block),
                                                        std::memory_order_release, std::memory_order_relaxed));
    }

    // CA5.
    static void abandon(Cache& cache) noexcept {
        // Acquire: synchronizes with the CA4 pushes it takes.
        auto* returned = reinterpret_cast<Block*>(cache.returned.exchange(abandoned, std::memory_order_acquire));
        std::uint64_t listed = 0;
        for (Block* list : {cache.local, returned}) {
            for (; list != nullptr; list = list->next) listed += 1;
        }
        // The bias becomes the count of blocks still out: out ends at zero
        // once each of them has been counted out (CA4), before or after this.
        count_out(cache, bias - (cache.carved - listed));
    }

    // CA6.
    static void count_out(Cache& cache, std::uint64_t n) noexcept {  // CK2
        // acq_rel: every count-out happens before the frees below.
        if (cache.out.fetch_sub(n, std::memory_order_acq_rel) != n) return;
        for (Block* slab = cache.slabs; slab != nullptr;) {
            Block* next = slab->next;
            Platform::deallocate(slab, slab_blocks * sizeof(Block), Platform::cache_line);
            slab = next;
        }
        free_cache(cache);
    }

    // CA5, called by the Platform at the thread's exit.
    static void exit_thread(void* cache) noexcept {
        current() = exited();
        abandon(*static_cast<Cache*>(cache));
    }
};

}  // namespace zap::detail
