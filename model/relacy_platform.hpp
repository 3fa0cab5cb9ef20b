// SPDX-License-Identifier: MIT
// model/relacy_platform.hpp - the Platform (src/zap/platform.hpp) that runs
// zap's templates inside Relacy, the C++ memory-model checker.
//
// Relacy runs every thread of a test as a fiber on one OS thread and decides,
// at each atomic operation, which thread goes next and which store a load
// may read (within what the memory orders allow). Here:
//   - Atomic<T> is an rl::atomic<T>; each call passes the caller's
//     std::source_location as Relacy's debug info, so every line of a
//     history names a line of src/zap, and consults the ordering override
//     table (mutation.hpp) first.
//   - Cell<T> is an rl::var<T>: two unordered accesses, one a write, are a
//     data race.
//   - futex_wait/futex_wake use the rl::atomic's own wait set. Spurious
//     wake-ups are a switch (on for safety runs; off for liveness runs,
//     where a spurious wake-up could rescue a lost one).
//   - spawn() starts a Relacy dynamic thread, or fails (when the test asks,
//     as a choice Relacy explores); join() waits for it.
//   - allocate() uses Relacy's heap: a touch of freed pool memory is reported.
//   - the current context lives in a table indexed by Relacy's thread index
//     (thread_local would be shared by all fibers of the one OS thread).
//
// Include order matters: <atomic> and all of zap first, then Relacy, whose
// relacy.hpp #defines new, delete, malloc, free, assert, errno and the
// memory_order_* names; those macros are #undef'd below so that neither zap
// nor the model's tests see them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <source_location>

// ZAP_ASSERT failures become Relacy failures (history printed), not aborts.
namespace zap_model {
void assertion_failed(const char* rule, const char* file, int line) noexcept;
}
#define ZAP_ASSERT_FAILED(rule, file, line) ::zap_model::assertion_failed(rule, file, line)

#include <zap/batch.hpp>
#include <zap/buffer.hpp>
#include <zap/event.hpp>
#include <zap/handoff_queue.hpp>
#include <zap/lock.hpp>
#include <zap/mailbox.hpp>
#include <zap/object_pool.hpp>
#include <zap/parker.hpp>
#include <zap/platform.hpp>
#include <zap/queue.hpp>
#include <zap/sync.hpp>
#include <zap/task.hpp>
#include <zap/thread_pool.hpp>
#include <zap/wait_group.hpp>
#include <zap/worker.hpp>

#include "mutation.hpp"

#include <relacy/relacy.hpp>

#undef new
#undef delete
#undef malloc
#undef calloc
#undef realloc
#undef free
#undef assert
#undef errno
#undef memory_order_relaxed
#undef memory_order_consume
#undef memory_order_acquire
#undef memory_order_release
#undef memory_order_acq_rel
#undef memory_order_seq_cst

namespace zap_model {

inline void assertion_failed(const char* rule, const char* file, int line) noexcept {
    rl::ctx().fail_test(rule, rl::test_result_user_assert_failed,
                        rl::debug_info("ZAP_ASSERT", file, static_cast<unsigned>(line)));
}

inline rl::memory_order to_rl(std::memory_order order) noexcept {
    switch (order) {
        case std::memory_order_relaxed: return rl::mo_relaxed;
        case std::memory_order_consume: return rl::mo_consume;
        case std::memory_order_acquire: return rl::mo_acquire;
        case std::memory_order_release: return rl::mo_release;
        case std::memory_order_acq_rel: return rl::mo_acq_rel;
        case std::memory_order_seq_cst: return rl::mo_seq_cst;
    }
    return rl::mo_seq_cst;
}

inline rl::debug_info info_of(const std::source_location& loc) noexcept {
    return rl::debug_info(loc.function_name(), loc.file_name(), loc.line());
}

// The coded order after the override table has had its say.
inline rl::memory_order order_at(std::memory_order coded, const std::source_location& loc) noexcept {
    return to_rl(mutate(coded, loc.file_name(), loc.line()));
}

}  // namespace zap_model

namespace zap {

struct RelacyPlatform {
    using Loc = std::source_location;

    // ---- switches a test sets before rl::simulate ----------------------------
    // Let futex_wait return without a wake (safety runs) or not (liveness runs).
    static inline bool spurious_wakeups = true;
    // never: spawn always works; maybe: Relacy explores both outcomes of
    // every spawn; always: every spawn fails; first: the first spawn of each
    // execution fails, later ones work; after_first: the first spawn of each
    // execution works, every later one fails.
    enum class SpawnFailure { never, maybe, always, first, after_first };
    static inline SpawnFailure spawn_failure = SpawnFailure::never;

    static constexpr unsigned max_rl_threads = 8;  // static + dynamic threads of any model test

    template <class T>
    class Atomic {
    public:
        Atomic() noexcept : value_(T{}) {}
        explicit Atomic(T initial) noexcept : value_(initial) {}
        Atomic(const Atomic&) = delete;
        Atomic& operator=(const Atomic&) = delete;

        T load(std::memory_order order, Loc loc = Loc::current()) const noexcept {
            return value_.load(zap_model::order_at(order, loc), zap_model::info_of(loc));
        }
        void store(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            value_.store(value, zap_model::order_at(order, loc), zap_model::info_of(loc));
        }
        T exchange(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.exchange(value, zap_model::order_at(order, loc), zap_model::info_of(loc));
        }
        bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                   Loc loc = Loc::current()) noexcept {
            const std::memory_order s = zap_model::mutate(success, loc.file_name(), loc.line());
            const rl::debug_info info = zap_model::info_of(loc);
            return value_.compare_exchange_weak(expected, desired, zap_model::to_rl(s), info,
                                                zap_model::to_rl(zap_model::clamp_failure(failure, s)), info);
        }
        bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                     Loc loc = Loc::current()) noexcept {
            const std::memory_order s = zap_model::mutate(success, loc.file_name(), loc.line());
            const rl::debug_info info = zap_model::info_of(loc);
            return value_.compare_exchange_strong(expected, desired, zap_model::to_rl(s), info,
                                                zap_model::to_rl(zap_model::clamp_failure(failure, s)), info);
        }
        T fetch_add(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_add(value, zap_model::order_at(order, loc), zap_model::info_of(loc));
        }
        T fetch_sub(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_sub(value, zap_model::order_at(order, loc), zap_model::info_of(loc));
        }
        T fetch_or(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_or(value, zap_model::order_at(order, loc), zap_model::info_of(loc));
        }
        T fetch_and(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            return value_.fetch_and(value, zap_model::order_at(order, loc), zap_model::info_of(loc));
        }

        rl::atomic<T>& relacy() noexcept { return value_; }

    private:
        rl::atomic<T> value_;
    };

    template <class T>
    class Cell {
    public:
        Cell() noexcept : value_(T{}) {}
        explicit Cell(T initial) noexcept : value_(initial) {}
        T read(Loc loc = Loc::current()) const noexcept { return value_(zap_model::info_of(loc)).load(); }
        void write(T value, Loc loc = Loc::current()) noexcept { value_(zap_model::info_of(loc)).store(value); }

    private:
        rl::var<T> value_;
    };

    // A fence overridden to `relaxed` is removed.
    static void fence(std::memory_order order, Loc loc = Loc::current()) noexcept {
        const std::memory_order o = zap_model::mutate(order, loc.file_name(), loc.line());
        if (o != std::memory_order_relaxed) rl::atomic_thread_fence(zap_model::to_rl(o), zap_model::info_of(loc));
    }

    // Relacy runs fibers: a spin hint is a yield, so spin loops stay finite.
    static void spin_hint() noexcept { rl::yield(1, RL_INFO); }

    // The kernel compares the word with `expected` and blocks atomically, and
    // compares against the word's latest value (futex(2): totally ordered with
    // other operations on the word). A relaxed load in Relacy may read an
    // older store, so the comparison is a relaxed read-modify-write that adds
    // zero: it reads the latest value and orders nothing. A wake-up does
    // synchronize waker and sleeper in Relacy (its futex set has a
    // release/acquire pair); zap never relies on that, every waiter
    // re-reads the word with its own ordering after waking.
    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                           const std::chrono::nanoseconds* timeout, Loc loc = Loc::current()) noexcept {
        rl::context& c = rl::ctx();
        const rl::debug_info info = zap_model::info_of(loc);
        std::uint32_t current;
        {
            rl::preemption_disabler no_switch(c);  // compare and block as one step
            current = word.relacy().fetch_add(0, rl::mo_relaxed, info);
        }
        if (current != expected) return true;
        const rl::unpark_reason reason = word.relacy().wait(c, timeout != nullptr, spurious_wakeups, info);
        return reason != rl::unpark_reason_timeout;
    }

    // Relacy checks the atomic is alive: a wake on freed memory is reported
    // as ACCESS TO FREED MEMORY (docs/model.md says why zap forbids it).
    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc loc = Loc::current()) noexcept {
        rl::context& c = rl::ctx();
        c.sched();  // the syscall is a point where another thread may run
        const rl::thread_id_t n = count < max_rl_threads ? count : max_rl_threads;
        word.relacy().wake(c, n, zap_model::info_of(loc));
    }

    // A thread's handle is its Relacy waitable object (signaled at exit).
    using Thread = rl::win_waitable_object*;

    static bool spawn(const ThreadOptions&, void* (*entry)(void*), void* arg) noexcept {
        auto& s = state();
        const unsigned attempt = s.attempts++;
        if (spawn_failure == SpawnFailure::always) return false;
        if (spawn_failure == SpawnFailure::maybe && rl::rand(2) == 0) return false;  // Relacy explores both
        if (spawn_failure == SpawnFailure::first && attempt == 0) return false;
        if (spawn_failure == SpawnFailure::after_first && attempt > 0) return false;
        if (s.spawned == max_rl_threads) {
            zap_model::assertion_failed("model: more spawns than max_rl_threads", __FILE__, __LINE__);
            return false;
        }
        Start& start = s.starts[s.spawned++];
        start = Start{entry, arg, nullptr};
        // create_thread() does not switch threads, so the handle is stored
        // before the new thread can run.
        start.handle = rl::ctx().create_thread(&trampoline, &start);
        return true;
    }

    // How many spawns this execution has tried so far. Timing only (a plain
    // counter, no happens-before): lets a model wait until a spawner is past
    // its reservation.
    static unsigned spawn_attempts() noexcept { return state().attempts; }

    static Thread this_thread() noexcept { return state().handles[rl::thread_index()]; }

    static void join(Thread thread) noexcept { thread->wait(false, false, RL_INFO); }

    static void name_this_thread(const char*) noexcept {}

    static void* current_context() noexcept { return state().contexts[rl::thread_index()]; }
    static void set_current_context(void* context) noexcept { state().contexts[rl::thread_index()] = context; }

    // Relacy's heap: freed blocks are poisoned (and sometimes kept back), so
    // any later touch of an rl::atomic or rl::var in them is reported.
    static void* allocate(std::size_t size, std::size_t align) {
        if (align > alignof(std::max_align_t)) zap_model::assertion_failed("model: over-aligned allocation", __FILE__, __LINE__);
        return rl::rl_malloc(size, RL_INFO);
    }
    static void deallocate(void* p, std::size_t, std::size_t) noexcept { rl::rl_free(p, RL_INFO); }

    // alignas() above the default new alignment would route `new` to the
    // aligned operator new, which Relacy does not track.
    static constexpr std::size_t cache_line = alignof(std::max_align_t);
#ifdef ZAP_MODEL_RING
    static constexpr std::uint32_t ring_capacity = ZAP_MODEL_RING;
#else
    static constexpr std::uint32_t ring_capacity = 2;
#endif
    // Two looks before a WaitGroup's outside wait or a park() sleeps (spin.hpp):
    // a wake that lands between them, or after them, is explored.
    static constexpr std::uint32_t wait_spin_rounds = 2;
    // One look at a lone task's head before a thief claims it (buffer.hpp
    // step 3a): the owner's take-back before, during or after it is explored.
    static constexpr std::uint32_t steal_delay_rounds = 1;

    // Per-execution state; every model test calls reset() in before().
    static void reset() noexcept { state() = State{}; }

private:
    struct Start {
        void* (*entry)(void*);
        void* arg;
        Thread handle;
    };
    struct State {
        void* contexts[max_rl_threads] = {};
        Thread handles[max_rl_threads] = {};
        Start starts[max_rl_threads] = {};
        unsigned spawned = 0;
        unsigned attempts = 0;
    };
    static State& state() noexcept {
        static State s;
        return s;
    }

    // Runs first on the new thread: records its handle for this_thread().
    static void* trampoline(void* p) {
        Start& start = *static_cast<Start*>(p);
        state().handles[rl::thread_index()] = start.handle;
        return start.entry(start.arg);
    }
};

}  // namespace zap
