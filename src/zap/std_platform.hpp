// zap/std_platform.hpp - the production Platform: std::atomic, the Linux futex
// system call, joinable pthreads with the configured stack size.
//
// Every member is a thin inline wrapper: once inlined, the source_location
// arguments are unused constants and vanish, so the seam costs nothing.
#pragma once

#include <zap/platform.hpp>

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <limits>
#include <new>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace zap {

struct StdPlatform {
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

        // The futex syscall needs the address of the 32-bit word itself.
        std::uint32_t* futex_word() noexcept
            requires(sizeof(T) == sizeof(std::uint32_t))
        {
            return reinterpret_cast<std::uint32_t*>(&value_);
        }

    private:
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

    static void fence(std::memory_order order, Loc = Loc::current()) noexcept { std::atomic_thread_fence(order); }

    static void spin_hint() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }

    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc = Loc::current()) noexcept {
        timespec ts{};
        timespec* tsp = nullptr;
        if (timeout != nullptr) {
            const auto ns = std::max<std::int64_t>(0, timeout->count());
            ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
            ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
            tsp = &ts;
        }
        const long rc =
            syscall(SYS_futex, word.futex_word(), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
        return !(rc == -1 && errno == ETIMEDOUT);
    }

    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc = Loc::current()) noexcept {
        const int n = static_cast<int>(std::min<std::uint32_t>(count, std::numeric_limits<int>::max()));
        syscall(SYS_futex, word.futex_word(), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
    }

    using Thread = pthread_t;

    // The worker learns its own handle with this_thread(), so the spawner
    // does not keep the one pthread_create writes.
    static bool spawn(const ThreadOptions& options, void* (*entry)(void*), void* arg) noexcept {
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0) return false;
        pthread_t thread;
        const bool ok = pthread_attr_setstacksize(&attr, stack_bytes(options.stack_size)) == 0 &&
                        pthread_create(&thread, &attr, entry, arg) == 0;
        pthread_attr_destroy(&attr);
        return ok;
    }

    static Thread this_thread() noexcept { return pthread_self(); }
    static void join(Thread thread) noexcept { pthread_join(thread, nullptr); }

    static void name_this_thread(const char* name) noexcept {
        char truncated[16] = {};  // Linux thread names hold 15 bytes plus the terminator
        for (std::size_t i = 0; i + 1 < sizeof truncated && name[i] != '\0'; ++i) truncated[i] = name[i];
        pthread_setname_np(pthread_self(), truncated);
    }

    static void* current_context() noexcept { return context_slot(); }
    static void set_current_context(void* context) noexcept { context_slot() = context; }

    static void* allocate(std::size_t size, std::size_t align) {
        return ::operator new(size, std::align_val_t{align});
    }
    static void deallocate(void* p, std::size_t, std::size_t align) noexcept {
        ::operator delete(p, std::align_val_t{align});
    }

    static constexpr bool recycles_closures = true;  // spawn.hpp's heap tasks: closure_alloc.hpp
    static constexpr std::size_t cache_line = 64;
    static constexpr std::uint32_t ring_capacity = 256;  // the seed's trade-off of space against steal traffic

private:
    static std::size_t stack_bytes(std::size_t requested) noexcept {
        const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        const std::size_t at_least = std::max<std::size_t>(requested, PTHREAD_STACK_MIN);
        return (at_least + page - 1) / page * page;
    }

    static void*& context_slot() noexcept {
        thread_local void* context = nullptr;
        return context;
    }
};

}  // namespace zap
