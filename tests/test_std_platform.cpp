// SPDX-License-Identifier: MIT
// The production platforms on their own: the futex calls, threads, names,
// stack sizes and the thread-local, for each platform this system can run
// (its native one and the portable one; docs/platforms.md). The rest of the
// suite runs the pool on zap::StdPlatform; this file holds each platform to
// the contract of platform.hpp directly, including the portable platform's
// timed waits (Protocol T of portable_platform.hpp) in every build.
#include <zap/portable_platform.hpp>
#if defined(__linux__)
#include <zap/linux_platform.hpp>
#elif defined(_WIN32)
#include <zap/windows_platform.hpp>
#endif

#include <gtest/gtest.h>

#include "os_probe.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Named, not through zap::StdPlatform: in the portable build (ZAP_PORTABLE_PLATFORM)
// the native platform is still tested here.
#if defined(__linux__)
using Platforms = ::testing::Types<zap::LinuxPlatform, zap::PortablePlatform>;
#elif defined(_WIN32)
using Platforms = ::testing::Types<zap::WindowsPlatform, zap::PortablePlatform>;
#else
using Platforms = ::testing::Types<zap::PortablePlatform>;
#endif

template <class Platform>
class StdPlatform : public ::testing::Test {
protected:
    using Word = typename Platform::template Atomic<std::uint32_t>;
    static constexpr bool names_and_stacks = !std::is_same_v<Platform, zap::PortablePlatform>;

    // Runs f on a thread started by Platform::spawn; returns its handle (from
    // the thread's own this_thread()) once the thread has run f.
    template <class F>
    static typename Platform::Thread run_on_platform_thread(F& f, std::size_t stack = 1u << 20) {
        struct Start {
            F* f;
            std::atomic<typename Platform::Thread> self{};
            std::atomic<bool> ran{false};
        } start{&f};
        auto entry = +[](void* arg) -> void* {
            auto* s = static_cast<Start*>(arg);
            (*s->f)();
            s->self.store(Platform::this_thread());
            s->ran.store(true);
            return nullptr;
        };
        EXPECT_TRUE(Platform::spawn(zap::ThreadOptions{stack}, entry, &start));
        while (!start.ran.load()) std::this_thread::yield();
        return start.self.load();
    }
};
TYPED_TEST_SUITE(StdPlatform, Platforms);

TYPED_TEST(StdPlatform, WaitReturnsAtOnceWhenTheWordDiffers) {
    typename TestFixture::Word word{1};
    const std::chrono::nanoseconds long_timeout = 60s;
    EXPECT_TRUE(TypeParam::futex_wait(word, 0, &long_timeout));  // a timeout would take a minute
    TypeParam::futex_wait(word, 0, nullptr);                     // would never return if it slept
}

TYPED_TEST(StdPlatform, TimedWaitReturnsFalseOnlyAfterItsTimeout) {
    typename TestFixture::Word word{0};
    for (const std::chrono::nanoseconds timeout : {std::chrono::nanoseconds{1us}, std::chrono::nanoseconds{30ms}}) {
        const auto start = Clock::now();
        bool woke = true;
        while (woke) woke = TypeParam::futex_wait(word, 0, &timeout);  // true: a spurious return, allowed
        EXPECT_GE(Clock::now() - start, timeout);
    }
    const std::chrono::nanoseconds none{0};
    bool woke = true;
    while (woke) woke = TypeParam::futex_wait(word, 0, &none);  // a zero timeout expires too
}

// A sleeper woken by futex_wake: with a timeout of a minute, a wake that did
// not reach it would show as `false` a minute later (or as ctest's timeout).
TYPED_TEST(StdPlatform, WakeReachesUntimedAndTimedSleepers) {
    for (const bool timed : {false, true}) {
        typename TestFixture::Word word{0};
        std::atomic<bool> returned_woken{false}, waiting{false};
        std::thread sleeper([&] {
            const std::chrono::nanoseconds minute = 60s;
            waiting = true;
            bool woke = true;
            while (word.load(std::memory_order_acquire) == 0) {
                woke = TypeParam::futex_wait(word, 0, timed ? &minute : nullptr);
            }
            returned_woken = woke;
        });
        while (!waiting) std::this_thread::yield();
        std::this_thread::sleep_for(20ms);  // most likely asleep by now; if not, its wait returns at once
        word.store(1, std::memory_order_release);
        TypeParam::futex_wake(word, 1);
        sleeper.join();
        EXPECT_TRUE(returned_woken) << (timed ? "timed" : "untimed");
    }
}

TYPED_TEST(StdPlatform, WakeAllReachesEverySleeper) {
    typename TestFixture::Word word{0};
    std::atomic<int> waiting{0}, woken{0};
    std::vector<std::thread> sleepers;
    for (int i = 0; i < 6; ++i) {
        sleepers.emplace_back([&, i] {
            const std::chrono::nanoseconds minute = 60s;
            waiting++;
            bool woke = true;
            while (word.load(std::memory_order_acquire) == 0) {
                woke = TypeParam::futex_wait(word, 0, i % 2 == 0 ? &minute : nullptr);
            }
            if (woke) woken++;  // not after a minute's timeout
        });
    }
    while (waiting < 6) std::this_thread::yield();
    std::this_thread::sleep_for(20ms);
    word.store(1, std::memory_order_release);
    TypeParam::futex_wake(word, std::numeric_limits<std::uint32_t>::max());
    for (std::thread& t : sleepers) t.join();
    EXPECT_EQ(woken.load(), 6);
}

TYPED_TEST(StdPlatform, SpawnedThreadIsJoinedThroughItsOwnHandle) {
    int written = 0;  // plain: join() must order the thread's write before our read (TSan checks it)
    auto body = [&] { written = 42; };
    const auto handle = TestFixture::run_on_platform_thread(body);
    TypeParam::join(handle);
    EXPECT_EQ(written, 42);
}

TYPED_TEST(StdPlatform, ContextIsPerThread) {
    int mine = 0;
    TypeParam::set_current_context(&mine);
    void* seen_there = &mine;
    auto body = [&] { seen_there = TypeParam::current_context(); };
    TypeParam::join(TestFixture::run_on_platform_thread(body));
    EXPECT_EQ(seen_there, nullptr);
    EXPECT_EQ(TypeParam::current_context(), &mine);
    TypeParam::set_current_context(nullptr);
}

TYPED_TEST(StdPlatform, NamesThreadAndSizesItsStack) {
    if (!TestFixture::names_and_stacks) GTEST_SKIP() << "std::thread cannot name a thread or size its stack";
    std::optional<std::string> name;
    std::optional<std::size_t> stack;
    auto body = [&] {
        TypeParam::name_this_thread("zap platform test");
        name = zap_test::thread_name();
        stack = zap_test::stack_size();
    };
    TypeParam::join(TestFixture::run_on_platform_thread(body, std::size_t{24} << 20));
    if (!name || !stack) GTEST_SKIP() << "this system reports no thread name or stack size";
#if defined(__linux__)
    EXPECT_EQ(*name, "zap platform te");  // Linux keeps 15 bytes
#else
    EXPECT_EQ(*name, "zap platform test");
#endif
    EXPECT_GE(*stack, std::size_t{24} << 20);
    EXPECT_LT(*stack, std::size_t{25} << 20);
}

}  // namespace
