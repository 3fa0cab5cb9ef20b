// SPDX-License-Identifier: MIT
// closure_alloc.hpp: the heap tasks' recycled blocks. A Platform of its own
// counts the memory ClosureMemory takes from it, so each test sees its slabs
// come and go (the production instantiation, used by spawn.hpp, is apart).
#include <zap/closure_alloc.hpp>
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

struct TrackedPlatform : zap::StdPlatform {
    static inline std::atomic<long> live_bytes{0};
    static inline std::atomic<long> peak_bytes{0};
    static inline std::atomic<long> single_blocks{0};  // blocks of their own (CA2's last case)
    static void* allocate(std::size_t size, std::size_t align) {
        if (size == zap::detail::ClosureMemory<TrackedPlatform>::block_bytes) single_blocks.fetch_add(1);  // a counter only
        const long now = live_bytes.fetch_add(static_cast<long>(size)) + static_cast<long>(size);  // a counter only
        long peak = peak_bytes.load();
        while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
        }
        return zap::StdPlatform::allocate(size, align);
    }
    static void deallocate(void* p, std::size_t size, std::size_t align) noexcept {
        live_bytes.fetch_sub(static_cast<long>(size));  // a counter only
        zap::StdPlatform::deallocate(p, size, align);
    }
};
using Memory = zap::detail::ClosureMemory<TrackedPlatform>;
constexpr std::size_t small = 48;  // a typical heap task
constexpr std::size_t align = alignof(std::max_align_t);

// Runs `body` on a thread of its own and waits until that thread has exited
// (its thread_local Holder has run CA5).
template <class Body>
void on_own_thread(Body&& body) {
    std::thread(std::forward<Body>(body)).join();
}

TEST(ClosureMemory, TheOwnerReusesABlockItFreed) {
    on_own_thread([] {
        void* a = Memory::allocate(small, align);
        Memory::deallocate(a, small, align);
        EXPECT_EQ(Memory::allocate(small, align), a);
        Memory::deallocate(a, small, align);
    });
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

// The owner's free list hands each freed block out once, and never a block
// still in use: three freed among eight live ones come back, and only they.
TEST(ClosureMemory, TheOwnersFreeListHandsOutOnlyTheBlocksItFreed) {
    on_own_thread([] {
        std::vector<void*> out;
        for (int i = 0; i < 8; ++i) out.push_back(Memory::allocate(small, align));
        const std::set<void*> freed{out[0], out[2], out[4]};
        for (void* p : freed) Memory::deallocate(p, small, align);
        std::set<void*> again;
        for (int i = 0; i < 3; ++i) again.insert(Memory::allocate(small, align));
        EXPECT_EQ(again, freed) << "a block still in use, or one twice, came back";
        for (int i : {1, 3, 5, 6, 7}) Memory::deallocate(out[i], small, align);
        for (void* p : again) Memory::deallocate(p, small, align);
    });
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

TEST(ClosureMemory, ABlockFreedByAnotherThreadGoesBackToItsOwner) {
    on_own_thread([] {
        void* a = Memory::allocate(small, align);
        on_own_thread([a] { Memory::deallocate(a, small, align); });  // CA4: onto the owner's returned stack
        EXPECT_EQ(Memory::allocate(small, align), a);                 // CA2: taken back with the exchange
        Memory::deallocate(a, small, align);
    });
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

TEST(ClosureMemory, BlocksStillOutWhenTheOwnerExitsAreFreedByTheLastFree) {
    std::vector<void*> out;
    on_own_thread([&] {
        for (int i = 0; i < 1000; ++i) out.push_back(Memory::allocate(small, align));
        Memory::deallocate(out.back(), small, align);  // one in the local list at exit
        out.pop_back();
    });
    EXPECT_GT(TrackedPlatform::live_bytes.load(), 0);  // the slabs wait for the blocks still out
    for (std::size_t i = 0; i + 1 < out.size(); ++i) Memory::deallocate(out[i], small, align);
    EXPECT_GT(TrackedPlatform::live_bytes.load(), 0);
    Memory::deallocate(out.back(), small, align);  // the last one frees the slabs (CA6)
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

// A thread_local destroyed after the thread's CA5 (constructed before its
// first allocation, so destroyed after) may still spawn and free a task.
TEST(ClosureMemory, AnAllocationAfterTheThreadsExitBeganIsABlockOfItsOwn) {
#if defined(_WIN32)
    // MinGW-w64 runs thread_local destructors before the fiber-local slot's
    // exit call (windows_platform.hpp at_thread_exit), so this destructor
    // runs before CA5, with the thread's Cache still alive: the premise of
    // the test does not hold there.
    GTEST_SKIP() << "MinGW-w64 destroys thread_locals before the thread's exit calls (CA5) run";
#endif
    struct LateUser {
        bool armed = false;
        ~LateUser() {
            if (!armed) return;
            void* p = Memory::allocate(small, align);
            EXPECT_EQ(TrackedPlatform::live_bytes.load() % static_cast<long>(Memory::block_bytes), 0);
            Memory::deallocate(p, small, align);
        }
    };
    on_own_thread([] {
        static thread_local LateUser late;
        late.armed = true;
        Memory::deallocate(Memory::allocate(small, align), small, align);  // makes the Cache after `late`
    });
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

TEST(ClosureMemory, LargeOrOveralignedTasksGoToThePlatform) {
    on_own_thread([] {
        for (auto [size, al] : {std::pair<std::size_t, std::size_t>{4096, align}, {small, 64}}) {
            void* p = Memory::allocate(size, al);
            EXPECT_EQ(TrackedPlatform::live_bytes.load(), static_cast<long>(size));
            Memory::deallocate(p, size, al);
            EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
        }
    });
}

TEST(ClosureMemory, AThreadKeepsAtMostKeepBlocksInSlabs) {
    TrackedPlatform::peak_bytes = 0;
    const long singles_before = TrackedPlatform::single_blocks.load();
    constexpr std::size_t extra = 100;
    on_own_thread([] {
        std::vector<void*> out;
        for (std::size_t i = 0; i < Memory::keep_blocks + extra; ++i) out.push_back(Memory::allocate(small, align));
        for (void* p : out) Memory::deallocate(p, small, align);
    });
    // At most keep_blocks in slabs (a slab's first block is its header), the
    // rest blocks of their own, and the thread's Cache (a Platform allocation
    // too, smaller than a block: counted as one).
    const std::size_t own = extra + Memory::keep_blocks / Memory::slab_blocks;
    EXPECT_LE(TrackedPlatform::peak_bytes.load(), static_cast<long>((Memory::keep_blocks + own + 1) * Memory::block_bytes));
    // And no fewer: the blocks of their own begin only once the slabs'
    // budget is used up.
    EXPECT_EQ(TrackedPlatform::single_blocks.load() - singles_before, static_cast<long>(own));
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

// Four threads allocate and hand their blocks to each other to free, while
// some of them exit: every byte comes back, each block is used by one task
// at a time (its bytes are checked), and ThreadSanitizer sees the handovers.
TEST(ClosureMemory, ManyThreadsFreeingEachOthersBlocks) {
    std::mutex lock;
    std::vector<unsigned char*> shared;
    std::atomic<int> corrupted{0};
    auto worker = [&](unsigned char mark) {
        for (int i = 0; i < 20000; ++i) {
            auto* mine = static_cast<unsigned char*>(Memory::allocate(small, align));
            for (std::size_t b = 0; b < small; ++b) mine[b] = mark;
            unsigned char* theirs = nullptr;
            {
                std::lock_guard<std::mutex> guard(lock);
                shared.push_back(mine);
                if (shared.size() > 8) {
                    theirs = shared.front();
                    shared.erase(shared.begin());
                }
            }
            if (theirs == nullptr) continue;
            for (std::size_t b = 1; b < small; ++b) corrupted += theirs[b] != theirs[0];
            Memory::deallocate(theirs, small, align);
        }
    };
    std::vector<std::thread> threads;
    for (unsigned char mark = 1; mark <= 4; ++mark) threads.emplace_back(worker, mark);
    for (auto& t : threads) t.join();
    for (unsigned char* p : shared) Memory::deallocate(p, small, align);
    EXPECT_EQ(corrupted.load(), 0);
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

// A block another thread freed and its owner never took back is on the
// owner's `returned` stack when the owner exits: CA5 counts it with the
// blocks of the free list, and the slabs go.
TEST(ClosureMemory, BlocksReturnedButNotTakenBackWhenTheOwnerExitsAreCounted) {
    on_own_thread([] {
        void* a = Memory::allocate(small, align);
        on_own_thread([a] { Memory::deallocate(a, small, align); });  // CA4: onto the owner's returned stack
    });
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

// compare_exchange_weak may fail although the value is what was expected
// (on load-linked/store-conditional machines such as arm64): a Platform
// whose weak CAS does so on every other call, so CA4's push must retry.
struct SpuriousCasPlatform : TrackedPlatform {
    template <class T>
    class Atomic : public zap::StdPlatform::Atomic<T> {
    public:
        using zap::StdPlatform::Atomic<T>::Atomic;
        bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                   Loc loc = Loc::current()) noexcept {
            if (!fails_.exchange(!fails_.load())) {
                return zap::StdPlatform::Atomic<T>::compare_exchange_weak(expected, desired, success, failure, loc);
            }
            expected = this->load(std::memory_order_relaxed);
            return false;
        }

    private:
        std::atomic<bool> fails_{true};
    };
};

TEST(ClosureMemory, AFreeByAnotherThreadRetriesACasThatFailed) {
    using Spurious = zap::detail::ClosureMemory<SpuriousCasPlatform>;
    on_own_thread([] {
        void* a = Spurious::allocate(small, align);
        on_own_thread([a] { Spurious::deallocate(a, small, align); });  // CA4: its first CAS fails
        EXPECT_EQ(Spurious::allocate(small, align), a) << "the block freed by the other thread was lost";
        Spurious::deallocate(a, small, align);
    });
    EXPECT_EQ(TrackedPlatform::live_bytes.load(), 0);
}

// Through the pool: spawned tasks from outside and from workers, recycled.
TEST(ClosureMemory, SpawnedTasksAllRunWithRecycledBlocks) {
    std::atomic<int> ran{0};
    {
        zap::ThreadPool pool(zap::Config{.max_threads = 2});
        for (int round = 0; round < 20; ++round) {
            zap::TaskGroup group(pool);
            for (int i = 0; i < 1000; ++i) {
                group.run([&] {
                    ran.fetch_add(1, std::memory_order_relaxed);
                    pool.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
                });
            }
            group.wait();
        }
    }  // the destructor runs the spawned ones
    EXPECT_EQ(ran.load(), 40000);
}

#if defined(__SANITIZE_ADDRESS__)
TEST(ClosureMemoryDeathTest, AUseOfAFreedBlockIsStillReported) {
    EXPECT_DEATH(
        {
            auto* p = static_cast<volatile unsigned char*>(Memory::allocate(small, align));
            Memory::deallocate(const_cast<unsigned char*>(p), small, align);
            p[0] = 1;  // the block is in the local list: poisoned
        },
        "use-after-poison");
}
#endif

}  // namespace
