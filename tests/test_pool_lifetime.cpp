// SPDX-License-Identifier: MIT
// shutdown() and join() on other threads while the destructor runs
// (pool_core.hpp B7). The destructor's own join() is held open by a
// running task, so the other call provably starts while the pool is alive;
// the pool lives on the heap, so that AddressSanitizer (a use after free)
// and ThreadSanitizer (an access unordered with the free) see a call that
// touches the pool after the destructor freed it. The plain builds check
// that each call returns and every task ran.
//
// A losing shutdown() is quick: to make its window wide, the test platform
// stalls the caller's first atomic load of the pool (SlowFirstLoad). Before
// B7 that load was the call's first touch of the pool, so it landed after
// the free; now the call has counted itself (a fetch_add) before it, and
// the destructor waits for it.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <thread>

namespace {

// StdPlatform whose atomic loads stall once, on a thread that asks for it.
struct SlowFirstLoad : zap::StdPlatform {
    static inline thread_local bool stall_next_load = false;
    template <class T>
    class Atomic : public zap::StdPlatform::Atomic<T> {
    public:
        using zap::StdPlatform::Atomic<T>::Atomic;
        T load(std::memory_order order, Loc loc = Loc::current()) const noexcept {
            if (stall_next_load) {
                stall_next_load = false;
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            return zap::StdPlatform::Atomic<T>::load(order, loc);
        }
    };
};

// A task that runs until released: it keeps the pool's join() waiting.
template <class Platform>
struct BasicGate : zap::BasicTask<Platform> {
    std::atomic<bool> open{false};
    std::atomic<bool> entered{false};
    std::atomic<int> runs{0};
    BasicGate() : zap::BasicTask<Platform>(&run) {}
    static void run(zap::BasicTask<Platform>* t) {
        auto* self = static_cast<BasicGate*>(t);
        self->entered.store(true);
        while (!self->open.load()) std::this_thread::yield();
        self->runs.fetch_add(1);
    }
    void wait_entered() const {
        while (!entered.load()) std::this_thread::yield();
    }
};

// Long enough for a thread to be well inside the call it just started (a
// started call is counted at its first step, B7); no result depends on it.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// StdPlatform that holds a shutdown() call inside the pool, counted in (B7),
// until the destructor sleeps on the count (call_count.hpp step 3: a short
// spin, then timed futex waits, backoff.hpp) or frees the pool's memory,
// and records which. The call is held at its first load, right after its
// fetch_add on the count: that fetch_add names the count's word.
struct HeldCall : zap::StdPlatform {
    static inline thread_local bool hold_call = false;  // the calling thread's next call is held
    static inline std::atomic<const void*> count_word{nullptr};
    static inline std::atomic<bool> holding{false};
    static inline std::atomic<bool> slept_on_count{false};
    static inline std::atomic<bool> freed_while_held{false};

    template <class T>
    class Atomic : public zap::StdPlatform::Atomic<T> {
        using Base = zap::StdPlatform::Atomic<T>;

    public:
        using Base::Base;
        T fetch_add(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            if (hold_call && count_word.load() == nullptr) count_word = this;  // the call counts itself in
            return Base::fetch_add(value, order, loc);
        }
        T load(std::memory_order order, Loc loc = Loc::current()) const noexcept {
            if (hold_call && count_word.load() != nullptr) {
                hold_call = false;
                hold();
            }
            return Base::load(order, loc);
        }
    };

    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc loc = Loc::current()) noexcept {
        if (holding.load() && static_cast<const void*>(&word) == count_word.load()) slept_on_count = true;
        return zap::StdPlatform::futex_wait(word, expected, timeout, loc);
    }
    static void deallocate(void* p, std::size_t size, std::size_t align) noexcept {
        if (holding.load()) freed_while_held = true;
        zap::StdPlatform::deallocate(p, size, align);
    }

    // Until the destructor sleeps on the count or frees; 10 s end it if it
    // does neither (a destructor that spins on the count).
    static void hold() {
        holding = true;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!slept_on_count.load() && !freed_while_held.load() && std::chrono::steady_clock::now() < until)
            std::this_thread::yield();
        holding = false;
    }
};

// The destructor runs on its own thread and claims the join; `other` runs
// on a third thread once the destructor waits for the gate's task.
template <class Platform = zap::StdPlatform, class Call>
void destroy_while(Call other) {
    BasicGate<Platform> gate;
    auto* pool = new zap::BasicThreadPool<Platform>(zap::Config{.max_threads = 1});
    pool->schedule(gate);
    gate.wait_entered();
    std::thread destroyer([pool] { delete pool; });  // shutdown() wins, join() claims and waits
    settle();
    std::thread caller([pool, &other] { other(*pool); });
    settle();
    gate.open.store(true);  // the destructor's join() may now return
    destroyer.join();
    caller.join();
    EXPECT_EQ(gate.runs.load(), 1);
}

// The second join() loses the claim and sleeps in the joined_ WaitGroup;
// before B7 the destructor returned from its join() and freed the pool while
// that join() still read the group's word (AddressSanitizer:
// heap-use-after-free in WaitGroup::wait).
TEST(PoolLifetime, JoinOnAnotherThreadDuringTheDestructor) {
    for (int round = 0; round < 20; ++round) destroy_while([](zap::ThreadPool& pool) { pool.join(); });
}

// The second shutdown() finds the pool shut down and returns; before B7 its
// load of Sync had no happens-before edge to the destructor's free. Its
// first load stalls (SlowFirstLoad): before B7 it read freed memory
// (AddressSanitizer: heap-use-after-free in shutdown()).
TEST(PoolLifetime, ShutdownOnAnotherThreadDuringTheDestructor) {
    for (int round = 0; round < 5; ++round) {
        destroy_while<SlowFirstLoad>([](zap::BasicThreadPool<SlowFirstLoad>& pool) {
            SlowFirstLoad::stall_next_load = true;
            pool.shutdown();
        });
    }
}

// Both, with the join() first: every call returns, the pool is freed once.
TEST(PoolLifetime, ShutdownAndJoinOnTwoThreadsDuringTheDestructor) {
    for (int round = 0; round < 10; ++round) {
        destroy_while([](zap::ThreadPool& pool) {
            std::thread joiner([&pool] { pool.join(); });
            pool.shutdown();
            joiner.join();
        });
    }
}

// B7 without AddressSanitizer: a shutdown() call counted in and held inside
// the pool while the destructor waits for the gate's task. The destructor
// must wait for the call, sleeping (call_count.hpp step 3), and free the
// pool's memory only after it. The pool lives in storage of the test's, so
// a call that outlives the destructor reads memory that is still there.
TEST(PoolLifetime, TheDestructorSleepsUntilACallStillInsideThePoolReturns) {
    using Pool = zap::BasicThreadPool<HeldCall>;
    HeldCall::count_word = nullptr;
    HeldCall::slept_on_count = false;
    HeldCall::freed_while_held = false;
    BasicGate<HeldCall> gate;
    alignas(Pool) unsigned char storage[sizeof(Pool)];
    auto* pool = new (storage) Pool(zap::Config{.max_threads = 1});
    pool->schedule(gate);
    gate.wait_entered();
    std::thread destroyer([pool] { pool->~Pool(); });  // its join() waits for the gate's task
    std::thread caller([pool] {
        HeldCall::hold_call = true;
        pool->shutdown();
    });
    while (!HeldCall::holding.load()) std::this_thread::yield();  // the call is counted in and held
    gate.open.store(true);  // the destructor's join() returns; it reaches B7's wait
    destroyer.join();
    caller.join();
    EXPECT_EQ(gate.runs.load(), 1);
    EXPECT_FALSE(HeldCall::freed_while_held.load())
        << "the destructor freed the pool while a shutdown() call was still inside it (B7)";
    EXPECT_TRUE(HeldCall::slept_on_count.load())
        << "the destructor never slept on the count of calls while it waited for one (call_count.hpp step 3)";
}

}  // namespace
