// SPDX-License-Identifier: MIT
// zap/std_primitives.hpp - what every production Platform shares: std::atomic,
// plain fields, fences, the CPU's spin hint, the thread-local context and
// aligned allocation. The three production platforms (linux_platform.hpp,
// windows_platform.hpp, portable_platform.hpp) derive from StdPrimitives and
// add only what differs between operating systems: the futex calls and the
// threads.
//
// Every member is a thin inline wrapper: once inlined, the source_location
// arguments are unused constants and vanish, so the seam costs nothing.
#pragma once

#include <zap/platform.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#include <immintrin.h>
#elif defined(_M_ARM64)
#include <intrin.h>
#endif

namespace zap::detail {

struct StdPrimitives {
    using Loc = SourceLocation;

    template <class T>
    class Atomic {
    public:
        constexpr Atomic() noexcept : value_{} {}
        constexpr explicit Atomic(T initial) noexcept : value_(initial) {}
        Atomic(const Atomic&) = delete;
        Atomic& operator=(const Atomic&) = delete;

        T load(std::memory_order order, Loc = Loc::current()) const noexcept { return value_.load(order); }
        void store(T value, std::memory_order order, Loc = Loc::current()) noexcept { value_.store(value, order); }
        T exchange(T value, std::memory_order order, Loc = Loc::current()) noexcept {
            return value_.exchange(value, order);
        }
        bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                   Loc = Loc::current()) noexcept {
            return value_.compare_exchange_weak(expected, desired, success, failure);
        }
        bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                     Loc = Loc::current()) noexcept {
            return value_.compare_exchange_strong(expected, desired, success, failure);
        }
        T fetch_add(T value, std::memory_order order, Loc = Loc::current()) noexcept {
            return value_.fetch_add(value, order);
        }
        T fetch_sub(T value, std::memory_order order, Loc = Loc::current()) noexcept {
            return value_.fetch_sub(value, order);
        }
        T fetch_or(T value, std::memory_order order, Loc = Loc::current()) noexcept {
            return value_.fetch_or(value, order);
        }
        T fetch_and(T value, std::memory_order order, Loc = Loc::current()) noexcept {
            return value_.fetch_and(value, order);
        }

        // The std::atomic itself, for a platform's futex calls: the OS waits
        // on its address (Linux, Windows), or on the object (std::atomic::wait).
        std::atomic<T>& underlying() noexcept { return value_; }

    private:
        // A lock-based std::atomic would put a lock inside every operation
        // the models check as lock-free; zap refuses to build instead.
        static_assert(std::atomic<T>::is_always_lock_free, "zap needs lock-free atomics");
        std::atomic<T> value_;
    };

    template <class T>
    class Cell {
    public:
        constexpr Cell() noexcept : value_{} {}
        constexpr explicit Cell(T initial) noexcept : value_(initial) {}
        T read(Loc = Loc::current()) const noexcept { return value_; }
        void write(T value, Loc = Loc::current()) noexcept { value_ = value; }

    private:
        T value_;
    };

    // The one fence of the production platforms. ThreadSanitizer does not
    // model fences (so it may report a race that a fence orders; it never
    // misses one because of them), and g++ 12 says so at compile time with
    // -Wtsan, an error under -Werror: silenced for this function only, so
    // that a user's `-fsanitize=thread -Werror` build compiles (the consumer
    // test unit.consumer.tsan). zap keeps its fences: each is a seq_cst fence
    // that orders a store before a later load (pool_core.hpp A2/A5,
    // helping_wait.hpp K1, portable_platform.hpp PF1/PF2), which no
    // release/acquire pair does. The Relacy models catch each of the
    // algorithm's fences weakened (docs/orderings.md); PF1/PF2 are argued in
    // their header and tested by tests/test_std_platform.cpp. zap's own TSan
    // runs (clang, which does not warn) report nothing from them.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
    static void fence(std::memory_order order, Loc = Loc::current()) noexcept { std::atomic_thread_fence(order); }
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif

    // Tells the CPU that this thread spins (x86 `pause`, arm64 `yield`): a
    // sibling hyperthread gets the core meanwhile. Elsewhere, nothing.
    static void spin_hint() noexcept {
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
        _mm_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#elif defined(_M_ARM64)
        __yield();
#endif
    }

    static void* current_context() noexcept { return context_slot(); }
    static void set_current_context(void* context) noexcept { context_slot() = context; }

    static void* allocate(std::size_t size, std::size_t align) {
        return ::operator new(size, std::align_val_t{align});
    }
    static void deallocate(void* p, std::size_t, std::size_t align) noexcept {
        ::operator delete(p, std::align_val_t{align});
    }

    static constexpr std::size_t cache_line = 64;
    static constexpr std::uint32_t ring_capacity = 256;  // the seed's trade-off of space against steal traffic
    // As Config::spin_rounds' default: about 36 us of `pause` on an AMD EPYC,
    // longer than a futex round trip (about 13 us), far shorter than a time slice.
    static constexpr std::uint32_t wait_spin_rounds = 2000;
    // How long a thief leaves a ring's lone task to its owner (buffer.hpp
    // step 3a): about 2 us of `pause` on the same EPYC, of the order of Go's
    // 3 us for a running P's `runnext`, and far below a futex round trip.
    static constexpr std::uint32_t steal_delay_rounds = 100;

private:
    static void*& context_slot() noexcept {
        thread_local void* context = nullptr;
        return context;
    }
};

}  // namespace zap::detail
