// SPDX-License-Identifier: MIT
// model/genmc/genmc_platform.hpp - the Platform (src/zap/platform.hpp) that
// runs zap's templates inside GenMC, the stateless model checker for C and
// C++ under RC11 and IMM (docs/model.md, section 7).
//
// GenMC compiles one .cpp file to LLVM IR with its own clang and explores
// every execution of it that the chosen memory model allows, each once up to
// equivalence. Here:
//   - Atomic<T> is a std::atomic<T> (GenMC's <atomic>); each call consults
//     the ordering override table first: the same PATH:LINE=ORDER entries as
//     the Relacy model's ZAP_MUTATE (model/mutation.hpp), compiled in by
//     model/genmc/run (GenMC has no use for an environment read at run time).
//   - Cell<T> is a plain T: GenMC reports two conflicting accesses that
//     happens-before does not order, one of them non-atomic, as a race.
//   - futex_wait/futex_wake model the kernel: a lock for the futex bucket, a
//     read-modify-write that reads the word's latest value (the kernel
//     compares against it), and one wake flag per sleeping thread. A sleeper
//     nobody wakes blocks in a spin GenMC knows: under --check-liveness it
//     reports an execution where nobody ever will.
//     Spurious wake-ups and timeouts are GenMC choices (switches below).
//   - spawn()/join() are pthread_create/pthread_join; current_context is a
//     thread_local; allocate() is malloc, so GenMC checks every access to
//     freed memory against the free by happens-before.
//
// Include this before any zap header: it installs the ZAP_ASSERT hook and the
// one name GenMC's C library puts elsewhere (stderr, in namespace std).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <genmc.h>
#include <pthread.h>

// GenMC's <cstdio> declares stderr inside namespace std; zap/assert.hpp
// names it unqualified, as the C library allows.
using std::stderr;

// ZAP_ASSERT failures become GenMC assertion violations (with the execution
// graph), not aborts.
#define ZAP_ASSERT_FAILED(rule, file, line) __VERIFIER_assert_fail(rule, file, line)

#include <zap/platform.hpp>

#include "mutation_rules.hpp"

// Switches, set by the harness or the runner's -D flags:
//   ZAP_GENMC_RING      slots per ring (default 2)
//   ZAP_GENMC_SPURIOUS  1: futex_wait may return without a wake (safety
//                       runs); 0: only a wake or the word's change ends it
//                       (liveness runs, where a spurious return would hide
//                       a lost wake-up)
#ifndef ZAP_GENMC_RING
#define ZAP_GENMC_RING 2
#endif
#ifndef ZAP_GENMC_SPURIOUS
#define ZAP_GENMC_SPURIOUS 0
#endif

namespace zap_genmc {

// ---- the ordering override table ------------------------------------------
// model/genmc/run writes one {"PATH", LINE, ORDER} entry per ZAP_MUTATE
// entry into zap_genmc_mutations.inc; the rules are the Relacy model's
// (mutation_rules.hpp), so a mutant is the same program under both checkers.
struct Override {
    const char* path;
    unsigned line;
    std::memory_order order;
};

inline constexpr Override overrides[] = {
#if __has_include("zap_genmc_mutations.inc")
#include "zap_genmc_mutations.inc"
#endif
    {nullptr, 0, std::memory_order_relaxed}};
inline constexpr std::size_t override_count = sizeof(overrides) / sizeof(overrides[0]) - 1;

// Which overrides this thread has reported, a bit each (once per thread and
// execution: run turns the lines into its "never matched a call site"
// check). Scalars: GenMC's interpreter has no thread_local arrays.
inline thread_local std::uint64_t override_reported = 0;
static_assert(override_count <= 64, "at most 64 ordering overrides in one GenMC run");

// The index of the override for a call site, or -1.
constexpr int find_override(const char* file, unsigned line) noexcept {
    for (std::size_t i = 0; i < override_count; ++i)
        if (overrides[i].line == line && zap_model::path_matches(file, overrides[i].path)) return static_cast<int>(i);
    return -1;
}

// The Platform's call-site type: the override of the call site, found when
// the call is compiled. Every Platform operation takes `Loc loc =
// Loc::current()` (platform.hpp), and current() is consteval, so the lookup
// (a loop over the table, string compares) never runs in GenMC: a loop
// there would be cut by --unroll, and clang's code for it trips GenMC's
// interpreter (a `freeze`). Helpers that pass their caller's site on (the
// pool's load_sync/cas_sync) take a Loc too (Platform::Loc), so their
// callers' overrides are found when those calls are compiled. The
// conversion from a SourceLocation, at run time, serves any other caller.
struct Loc {
    int override_index = -1;

    static consteval Loc current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) noexcept {
        return Loc{find_override(file, line)};
    }
    Loc(const zap::SourceLocation& at) noexcept : override_index(find_override(at.file_name(), at.line())) {}

private:
    constexpr explicit Loc(int index) noexcept : override_index(index) {}
};

// Reports an override's first use in this thread. Out of line: inlined, its
// printf made every helper that passes a Loc on (the pool's cas_sync) too
// big for clang to inline once an override named its caller, so a local
// Sync stayed in memory, written as two 8-byte stores and read a 4-byte
// field at a time, which GenMC's mixed-size check reads as uninitialized.
[[gnu::noinline]] inline void report_override(int i) noexcept {
    if ((override_reported & (std::uint64_t{1} << i)) != 0) return;
    override_reported |= std::uint64_t{1} << i;
    std::printf("zap-genmc: override %s:%u matched\n", overrides[i].path, overrides[i].line);
}

inline std::memory_order mutate(std::memory_order coded, const Loc& loc) noexcept {
    const int i = loc.override_index;
    if (i < 0) return coded;
    report_override(i);
    return overrides[i].order;
}

// ---- threads -----------------------------------------------------------------
// Every thread of a test gets a small index (main is 0) for the futex model's
// sleeper table; threads start through start_thread(), the pool's and the
// harness's alike.
inline constexpr unsigned max_threads = 10;
inline thread_local unsigned thread_index = 0;
inline std::atomic<unsigned> threads_started{1};

struct Start {
    void* (*entry)(void*);
    void* arg;
    unsigned index;
};

inline void* trampoline(void* p) {
    Start start = *static_cast<Start*>(p);
    std::free(p);
    thread_index = start.index;
    return start.entry(start.arg);
}

inline pthread_t start_thread(void* (*entry)(void*), void* arg) {
    // Relaxed: a ticket only; pthread_create orders the start.
    const unsigned index = threads_started.fetch_add(1, std::memory_order_relaxed);
    if (index >= max_threads) __VERIFIER_assert_fail("model: more threads than max_threads", __FILE__, __LINE__);
    auto* start = static_cast<Start*>(std::malloc(sizeof(Start)));
    *start = Start{entry, arg, index};
    pthread_t thread;
    pthread_create(&thread, nullptr, &trampoline, start);
    return thread;
}

// ---- choices -------------------------------------------------------------------
// GenMC's __VERIFIER_nondet_int() is a random number, not a choice it
// explores. A choice GenMC explores is a read with two writes to read from:
// each thread has a coin per kind of choice, initially 0, and the coin
// thread (started first by ZAP_GENMC_MAIN, ordered with nobody) sets every
// coin to 1. A read of a coin may see either value; by read-read coherence
// a thread that saw 1 sees 1 from then on, so a thread's choices of one kind
// are "no" for a while, then "yes" for good: a timeout that fires once fires
// again at once, a spurious wake-up repeats (its loop is then cut by
// --unroll). Not every sequence of choices, but every point of the first "yes".
enum Choice : unsigned { spurious_wakeup, timeout_expired, spawn_failure, choice_kinds };
inline std::atomic<int> coins[choice_kinds][max_threads];

inline bool choose(Choice kind) noexcept {
    return coins[kind][thread_index].load(std::memory_order_relaxed) != 0;  // orders nothing
}

// ---- the futex ---------------------------------------------------------------
// The kernel's side of one futex bucket: sleepers register under the bucket
// lock after comparing the word, wakers scan them under the same lock. So a
// waker's scan either comes after a sleeper registered (and wakes it), or
// before its compare: then the waker's change of the word, made before its
// futex_wake, happens before the sleeper's compare, which reads it (the
// compare is a read-modify-write: it reads the latest value).
struct FutexBucket {
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const void* sleeping_on[max_threads] = {};  // under lock
    std::atomic<int> woken[max_threads] = {};   // set under lock, polled by the sleeper
};
inline FutexBucket bucket;

}  // namespace zap_genmc

// GenMC bounds every loop by --unroll, the Platform's own included. Its two
// loops (the futex bucket's scan, the coin thread's stores) are C functions
// of their own, never inlined (clang's noinline; run turns GenMC's own
// inliner off, which ignores it), and run exempts them by name
// (--no-unroll): the model's bookkeeping is never cut.

// Wakes up to `count` sleepers on `word`.
extern "C" [[gnu::noinline]] inline void zap_genmc_futex_wake(const void* word, std::uint32_t count) noexcept {
    using zap_genmc::bucket;
    pthread_mutex_lock(&bucket.lock);
    for (unsigned i = 0; i < zap_genmc::max_threads && count > 0; ++i) {
        if (bucket.sleeping_on[i] != word) continue;
        bucket.sleeping_on[i] = nullptr;
        bucket.woken[i].store(1, std::memory_order_relaxed);
        --count;
    }
    pthread_mutex_unlock(&bucket.lock);
}

// The coin thread's body.
extern "C" [[gnu::noinline]] inline void* zap_genmc_flip_coins(void*) noexcept {
    for (auto& kind : zap_genmc::coins)
        for (auto& coin : kind) coin.store(1, std::memory_order_relaxed);
    return nullptr;
}

namespace zap_genmc {

// Sleeps until woken. An untimed sleeper is a spin loop GenMC knows (its
// own annotations: one read of the wake flag, and the thread blocks there
// unless it read 1); under --check-liveness GenMC reports an execution in
// which every such sleeper read the latest value of its flag and still
// sleeps: nobody will ever wake it (a lost wake-up). A timed sleeper
// nobody wakes would time out in the end: its branch is only cut (an
// assume), since futex_wait explored the timeout already.
inline void sleep_until_woken(unsigned me, bool timed) noexcept {
    if (timed) {
        __VERIFIER_assume(bucket.woken[me].load(std::memory_order_relaxed) != 0);
        return;
    }
    __VERIFIER_loop_begin();
    __VERIFIER_spin_start();
    __VERIFIER_spin_end(bucket.woken[me].load(std::memory_order_relaxed) != 0);
}

}  // namespace zap_genmc

namespace zap {

struct GenmcPlatform {
    using Loc = zap_genmc::Loc;

    template <class T>
    class Atomic {
    public:
        Atomic() noexcept : value_(T{}) {}
        explicit Atomic(T initial) noexcept : value_(initial) {}
        Atomic(const Atomic&) = delete;
        Atomic& operator=(const Atomic&) = delete;

        T load(std::memory_order order, Loc loc = Loc::current()) const noexcept {
            return value_.load(at(order, loc));
        }
        void store(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            value_.store(value, at(order, loc));
        }
        T exchange(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.exchange(value, at(order, loc));
        }
        bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                   Loc loc = Loc::current()) noexcept {
            const std::memory_order s = at(success, loc);
            return value_.compare_exchange_weak(expected, desired, s, zap_model::clamp_failure(failure, s));
        }
        bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                     Loc loc = Loc::current()) noexcept {
            const std::memory_order s = at(success, loc);
            return value_.compare_exchange_strong(expected, desired, s, zap_model::clamp_failure(failure, s));
        }
        T fetch_add(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_add(value, at(order, loc));
        }
        T fetch_sub(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_sub(value, at(order, loc));
        }
        T fetch_or(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_or(value, at(order, loc));
        }
        T fetch_and(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_and(value, at(order, loc));
        }

        // The kernel's compare in futex_wait: the latest value in the word's
        // modification order (an RMW that adds nothing; orders nothing).
        T latest() noexcept { return value_.fetch_add(T{}, std::memory_order_relaxed); }

    private:
        static std::memory_order at(std::memory_order coded, const Loc& loc) noexcept {
            return zap_genmc::mutate(coded, loc);
        }
        std::atomic<T> value_;
    };

    template <class T>
    class Cell {
    public:
        Cell() noexcept : value_(T{}) {}
        explicit Cell(T initial) noexcept : value_(initial) {}
        T read(Loc = Loc::current()) const noexcept { return value_; }
        void write(T value, Loc = Loc::current()) noexcept { value_ = value; }

    private:
        T value_;
    };

    // A fence overridden to `relaxed` is removed.
    static void fence(std::memory_order order, Loc loc = Loc::current()) noexcept {
        const std::memory_order o = zap_genmc::mutate(order, loc);
        if (o != std::memory_order_relaxed) std::atomic_thread_fence(o);
    }

    // Nothing: GenMC explores every interleaving, a hint changes none.
    static void spin_hint() noexcept {}

    // Safety runs (ZAP_GENMC_SPURIOUS=1) may return without a wake; a timed
    // wait may time out before sleeping (a timeout later changes nothing
    // another thread can see: the sleeper is then simply gone from the
    // bucket, as if it had never come).
    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                           const std::chrono::nanoseconds* timeout, Loc = Loc::current()) noexcept {
        using namespace zap_genmc;
        if (ZAP_GENMC_SPURIOUS && choose(spurious_wakeup)) return true;
        if (timeout != nullptr && choose(timeout_expired)) return false;
        const unsigned me = thread_index;
        pthread_mutex_lock(&bucket.lock);
        if (word.latest() != expected) {
            pthread_mutex_unlock(&bucket.lock);
            return true;
        }
        bucket.sleeping_on[me] = &word;
        bucket.woken[me].store(0, std::memory_order_relaxed);
        pthread_mutex_unlock(&bucket.lock);
        sleep_until_woken(me, timeout != nullptr);
        return true;
    }

    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc = Loc::current()) noexcept {
        zap_genmc_futex_wake(&word, count);
    }

    using Thread = pthread_t;

    static bool spawn(const ThreadOptions&, void* (*entry)(void*), void* arg) noexcept {
        zap_genmc::start_thread(entry, arg);
        return true;
    }
    static Thread this_thread() noexcept { return pthread_self(); }
    static void join(Thread thread) noexcept { pthread_join(thread, nullptr); }
    static void name_this_thread(const char*) noexcept {}

    static void* current_context() noexcept { return context(); }
    static void set_current_context(void* c) noexcept { context() = c; }

    static void* allocate(std::size_t size, std::size_t align) {
        if (align > alignof(std::max_align_t))
            __VERIFIER_assert_fail("model: over-aligned allocation", __FILE__, __LINE__);
        return std::malloc(size);
    }
    static void deallocate(void* p, std::size_t, std::size_t) noexcept { std::free(p); }

    static constexpr std::size_t cache_line = alignof(std::max_align_t);
    static constexpr std::uint32_t ring_capacity = ZAP_GENMC_RING;
    // One look before a WaitGroup's outside wait or a park() sleeps (spin.hpp):
    // GenMC explores every value that load may read.
    static constexpr std::uint32_t wait_spin_rounds = 1;
    // One look at a lone task's head before a thief claims it (buffer.hpp 3a).
    static constexpr std::uint32_t steal_delay_rounds = 1;

private:
    static void*& context() noexcept {
        static thread_local void* current = nullptr;
        return current;
    }
};

}  // namespace zap
