// SPDX-License-Identifier: MIT
// zap/linux_platform.hpp - the Linux Platform: the futex system call for
// futex_wait/futex_wake, joinable pthreads with the configured stack size,
// thread names through pthread_setname_np (the first 15 bytes).
#pragma once

#include <zap/std_primitives.hpp>

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <limits>

namespace zap {

struct LinuxPlatform : detail::StdPrimitives {
    // spawn.hpp's heap tasks come from closure_alloc.hpp's per-thread blocks.
    static constexpr bool recycles_closures = true;

    // Calls Fn(arg) when the calling thread exits; once per Fn and thread.
    // A thread_local's destructor: glibc runs those while the thread's
    // other thread_locals can still be read and written.
    template <void (*Fn)(void*)>
    static bool at_thread_exit(void* arg) noexcept {
        struct Exit {
            void* arg;
            ~Exit() { Fn(arg); }
        };
        static thread_local Exit registered{arg};  // constructed by the thread's one call
        return registered.arg == arg;
    }

    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc = Loc::current()) noexcept {
        timespec ts{};
        timespec* tsp = nullptr;
        if (timeout != nullptr) {
            const std::int64_t ns = std::max<std::int64_t>(0, timeout->count());
            ts.tv_sec = ns / 1'000'000'000;  // the same type as time_t and long on 64-bit Linux
            ts.tv_nsec = ns % 1'000'000'000;
            tsp = &ts;
        }
        const long rc = syscall(SYS_futex, futex_word(word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
        return !(rc == -1 && errno == ETIMEDOUT);
    }

    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc = Loc::current()) noexcept {
        const int n = static_cast<int>(std::min<std::uint32_t>(count, std::numeric_limits<int>::max()));
        syscall(SYS_futex, futex_word(word), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
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

private:
    // The futex system call takes the address of the 32-bit word itself.
    static std::uint32_t* futex_word(Atomic<std::uint32_t>& word) noexcept {
        static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
        return reinterpret_cast<std::uint32_t*>(&word.underlying());
    }

    static std::size_t stack_bytes(std::size_t requested) noexcept {
        const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        // PTHREAD_STACK_MIN is a call to sysconf (a long) in glibc 2.34 and later.
        const std::size_t at_least = std::max(requested, static_cast<std::size_t>(PTHREAD_STACK_MIN));
        return (at_least + page - 1) / page * page;
    }
};

}  // namespace zap
