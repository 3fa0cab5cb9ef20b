// SPDX-License-Identifier: MIT
// zap/portable_platform.hpp - the Platform for any C++20 system: nothing but
// the standard library. The default where zap has no native platform (macOS,
// the BSDs); also built and tested on Linux (the `portable` preset).
//
//   futex_wait, no timeout   std::atomic::wait, except where it can lose a
//                            wake-up (below): then as with a timeout
//   futex_wake               std::atomic::notify_one / notify_all, then the
//                            timed waiters' condition variable (below)
//   futex_wait, timeout      a condition variable (C++20 has no timed atomic
//                            wait): Protocol T below
//   threads                  std::thread (joinable), one allocation each
//   thread names             none: std::thread cannot name a thread
//   stack size               the system's default: std::thread cannot set it
//                            (Config::stack_size is ignored, and so the
//                            default help bound of Config::max_help_depth,
//                            one level per KiB of stack_size, assumes a stack
//                            the thread may not have)
//
// Protocol T (a futex wait with a timeout, out of a mutex and a condition
// variable). Timed waits hash their word's address to one of `buckets`
// buckets; a bucket holds a mutex, a condition variable and the count of
// timed waiters inside it.
//   PF1 (wait) Under the bucket's mutex: count itself in (a relaxed RMW), a
//      seq_cst fence, then compare the word with `expected`: if it differs,
//      return; else sleep on the condition variable until notified or the
//      deadline (the wait releases the mutex atomically), then count itself out.
//   PF2 (wake) After the caller changed the word (and after the atomic
//      notify): a seq_cst fence, then read the count; if it is not zero,
//      take and release the bucket's mutex, then notify every timed waiter
//      of the bucket (waiters of other words sharing it see a spurious return).
//   Why no wake is lost: the two fences are ordered one way or the other
//   in the single total order S, and they alone order the count and the
//   word ([atomics.fences]): the count-in needs no order of its own. The
//   Relacy model (model/timed_waits_models.cpp) passes with it relaxed and
//   deadlocks with either fence weakened to acq_rel.
//   If PF1's fence comes first, PF2's read sees the waiter counted in; the
//   waiter held the mutex from before that count to its sleep, so PF2's
//   lock can only succeed once the waiter sleeps (or has returned), and the
//   notify reaches it. If PF2's fence comes first, PF1's compare reads the
//   changed word and the waiter does not sleep.
//
// Where std::atomic::wait loses wake-ups. libstdc++ 12 on a system without a
// Linux futex (MinGW-w64; any non-Linux build with GCC's library) waits
// through a mutex and condition variable of its own: it reads the word, then
// takes the mutex and sleeps, while notify_one/notify_all signal without
// that mutex. A notify between the read and the sleep reaches nobody, and
// the waiter sleeps through the change it was waiting for (read in the
// header bits/atomic_wait.h, __waiter_pool::_M_do_wait; seen under Wine: a
// std::latch and this platform's untimed wait both slept for good). There
// every untimed wait takes Protocol T too, with no deadline.
#pragma once

#include <zap/deadline.hpp>
#include <zap/std_primitives.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>

namespace zap {

namespace detail {

// False where std::atomic::wait can lose a wake-up (see the top of this header).
#if defined(__GLIBCXX__) && !defined(_GLIBCXX_HAVE_LINUX_FUTEX)
inline constexpr bool atomic_wait_keeps_wakes = false;
#else
inline constexpr bool atomic_wait_keeps_wakes = true;
#endif

// Protocol T, on the mutex, condition variable, counter and fence of
// `Sync`: StdTimedSync below, or the Relacy model's (model/timed_waits_models.cpp),
// which checks PF1 against PF2 on this same code.
template <class Sync>
class TimedWaits {
public:
    using Word = typename Sync::Word;

    // No timeout (nullptr): sleeps until notified.
    bool wait(Word& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout) {
        const auto deadline = timeout != nullptr ? deadline_after(*timeout) : DeadlineClock::time_point{};
        Bucket& bucket = bucket_of(&word);
        typename Sync::Lock hold(bucket.lock);
        bucket.waiters.fetch_add(1, std::memory_order_relaxed);  // PF1: read by PF2 after its fence
        Sync::fence(std::memory_order_seq_cst);                  // PF1: pairs with PF2's fence
        bool woke = true;
        if (word.load(std::memory_order_relaxed) == expected) {
            if (timeout == nullptr) {
                bucket.changed.wait(hold);
            } else {
                woke = bucket.changed.wait_until(hold, deadline) == std::cv_status::no_timeout;
            }
        }
        bucket.waiters.fetch_sub(1, std::memory_order_relaxed);  // a count only: the mutex orders the rest
        return woke;
    }

    void wake(const void* address) {
        Bucket& bucket = bucket_of(address);
        Sync::fence(std::memory_order_seq_cst);  // PF2: pairs with PF1's fence
        if (bucket.waiters.load(std::memory_order_relaxed) == 0) return;
        { const typename Sync::Lock wait_for_sleeper(bucket.lock); }  // PF2: the waiter sleeps or is gone
        bucket.changed.notify_all();
    }

private:
    static constexpr std::size_t buckets = 64;

    struct Bucket {
        typename Sync::Mutex lock;
        typename Sync::CondVar changed;
        typename Sync::Counter waiters{0};
    };

    Bucket& bucket_of(const void* address) noexcept {
        // The low bits of an aligned word's address are zero: skip them.
        return table_[(reinterpret_cast<std::uintptr_t>(address) / sizeof(std::uint32_t)) % buckets];
    }

    Bucket table_[buckets];
};

// Protocol T's primitives in production: the standard library's (the fence
// is StdPrimitives').
struct StdTimedSync : StdPrimitives {
    using Word = std::atomic<std::uint32_t>;
    using Counter = std::atomic<std::uint32_t>;
    using Mutex = std::mutex;
    using Lock = std::unique_lock<std::mutex>;
    using CondVar = std::condition_variable;
};

// The process's one table: every pool's timed waits hash into it.
inline TimedWaits<StdTimedSync>& timed_waits() {
    static TimedWaits<StdTimedSync> table;
    return table;
}

}  // namespace detail

// A worker thread: the std::thread is constructed in place, and its
// constructor's completion happens before the worker's first step ([thread.
// thread.constr]), so join() - which synchronizes with the worker - reads a
// fully written std::thread.
struct PortableThread {
    std::thread thread;
    PortableThread(void* (*entry)(void*), void* arg) : thread(&PortableThread::start, this, entry, arg) {}

    static PortableThread*& current() noexcept {
        thread_local PortableThread* self = nullptr;
        return self;
    }

private:
    static void start(PortableThread* self, void* (*entry)(void*), void* arg) {
        current() = self;
        entry(arg);
    }
};

struct PortablePlatform : detail::StdPrimitives {
    // The caller re-reads the word with its own ordering after any return,
    // as after a futex wait: the compare itself orders nothing.
    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc = Loc::current()) noexcept {
        if (timeout != nullptr || !detail::atomic_wait_keeps_wakes) {
            return detail::timed_waits().wait(word.underlying(), expected, timeout);
        }
        word.underlying().wait(expected, std::memory_order_relaxed);
        return true;
    }

    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc = Loc::current()) noexcept {
        if (count == 1) {
            word.underlying().notify_one();
        } else {
            word.underlying().notify_all();
        }
        detail::timed_waits().wake(&word.underlying());
    }

    using Thread = PortableThread*;

    static bool spawn(const ThreadOptions&, void* (*entry)(void*), void* arg) noexcept {
        try {
            new PortableThread(entry, arg);  // owned by the worker's join()
            return true;
        } catch (...) {  // std::bad_alloc, or std::system_error: the system refused a thread
            return false;
        }
    }

    static Thread this_thread() noexcept { return PortableThread::current(); }

    static void join(Thread thread) noexcept {
        thread->thread.join();
        delete thread;
    }

    static void name_this_thread(const char*) noexcept {}  // std::thread has no name
};

}  // namespace zap
