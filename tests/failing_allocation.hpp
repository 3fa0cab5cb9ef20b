// SPDX-License-Identifier: MIT
// tests/failing_allocation.hpp - allocation failure injected on the calling
// thread: through the Platform's allocate() (FailingPlatform) and through
// the global operator new (which this header replaces: include it in one
// source file of a test binary only), for the allocations the drop-in layer
// makes through the standard library (a std::promise's shared state, a
// std::stop_source, a Mailbox's deque).
//
// fail_after(k) arms this thread: its next k allocations succeed, the one
// after throws std::bad_alloc, and the thread is disarmed again (so what
// runs after the failure may allocate). Other threads never fail.
//
// Not under ThreadSanitizer, whose runtime defines operator new itself:
// there ZAP_TEST_FAILS_NEW is 0, and only the Platform's allocations fail.
#pragma once

#include <zap/std_platform.hpp>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_THREAD__)
#define ZAP_TEST_FAILS_NEW 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ZAP_TEST_FAILS_NEW 0
#endif
#endif
#ifndef ZAP_TEST_FAILS_NEW
#define ZAP_TEST_FAILS_NEW 1
#endif

namespace failing {

// -1: disarmed; otherwise the allocations of this thread still to let through.
inline thread_local long countdown = -1;
inline std::atomic<long> injected{0};
// The injected failures that new(std::nothrow) reported as null: its caller
// handles a null by design (windows_platform.hpp's at_thread_exit: the
// thread's tasks then take blocks of their own, closure_alloc.hpp CA1), so
// such a failure is absorbed, not one the call must throw.
inline std::atomic<long> absorbed{0};

inline void fail_after(long k) noexcept { countdown = k; }
inline void disarm() noexcept { countdown = -1; }

// Called by every allocation of both kinds: true when this one must fail.
inline bool fails_now() noexcept {
    if (countdown < 0) return false;
    if (countdown-- > 0) return false;
    countdown = -1;
    injected.fetch_add(1, std::memory_order_relaxed);  // a counter only
    return true;
}

}  // namespace failing

// The production platform whose allocate() fails when the thread is armed;
// it counts blocks and slabs of closure_alloc.hpp by their sizes.
struct FailingPlatform : zap::StdPlatform {
    static inline std::atomic<long> allocations{0};
    static inline std::atomic<long> single_blocks{0};  // closure_alloc.hpp's 128-byte blocks of their own
    static inline std::atomic<long> slabs{0};          // its slabs of 64 blocks

    static void* allocate(std::size_t size, std::size_t align) {
        if (failing::fails_now()) throw std::bad_alloc();
        allocations.fetch_add(1, std::memory_order_relaxed);  // counters only
        if (size == 128) single_blocks.fetch_add(1, std::memory_order_relaxed);
        if (size == 64 * 128) slabs.fetch_add(1, std::memory_order_relaxed);
        return zap::StdPlatform::allocate(size, align);
    }
};

#if ZAP_TEST_FAILS_NEW
// Not inlined: GCC would otherwise see free() called on what a new expression
// returned and warn (-Wmismatched-new-delete), not knowing the pair is ours.
[[gnu::noinline]] void* operator new(std::size_t bytes) {
    if (failing::fails_now()) throw std::bad_alloc();
    if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
    if (failing::fails_now()) {
        failing::absorbed.fetch_add(1, std::memory_order_relaxed);  // a counter only
        return nullptr;
    }
    return std::malloc(bytes == 0 ? 1 : bytes);
}
[[gnu::noinline]] void operator delete(void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
#endif
