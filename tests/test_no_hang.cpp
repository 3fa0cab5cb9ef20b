// SPDX-License-Identifier: MIT
// Calls that must return, each under a watchdog of its own: a call that
// hangs fails the test with a message naming it (instead of holding ctest
// until its time limit, which says nothing). The watchdog's limit is far
// above the calls' cost (microseconds): it tells a hang from a slow machine,
// it measures no speed.
#include <zap/portable_platform.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <thread>
#include <vector>

namespace {

constexpr std::chrono::seconds limit{20};

// Runs `call` on a thread of its own; if it has not returned after `limit`,
// reports the hang and ends the process (a hung thread cannot be joined).
template <class F>
void returns_in_time(const char* what, F call) {
    std::packaged_task<void()> task(call);
    std::future<void> done = task.get_future();
    std::thread runner(std::move(task));
    if (done.wait_for(limit) != std::future_status::ready) {
        std::fprintf(stderr, "hang: %s has not returned after %lld s\n", what, static_cast<long long>(limit.count()));
        ADD_FAILURE() << what << " hangs";
        std::fflush(nullptr);
        std::_Exit(1);
    }
    runner.join();
    done.get();
}

// The portable platform's futex_wake for more than one waiter wakes every
// untimed waiter whose word changed.
TEST(NoHang, PortableWakeAllWakesEveryWaiter) {
    using P = zap::PortablePlatform;
    P::Atomic<std::uint32_t> word{0};
    returns_in_time("three untimed portable futex_waits after a wake of all", [&] {
        std::vector<std::thread> waiters;
        std::atomic<int> started{0};
        for (int i = 0; i < 3; ++i) waiters.emplace_back([&] {
            started++;
            while (word.load(std::memory_order_acquire) == 0) P::futex_wait(word, 0, nullptr);
        });
        while (started.load() < 3) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let them reach the wait
        word.store(1, std::memory_order_release);
        P::futex_wake(word, std::numeric_limits<std::uint32_t>::max());
        for (auto& t : waiters) t.join();
    });
}

}  // namespace
