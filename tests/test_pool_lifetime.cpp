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

}  // namespace
