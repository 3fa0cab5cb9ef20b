// SPDX-License-Identifier: MIT
// stress/chaos_platform.hpp - the production platform with noise injected at
// every primitive the pool uses, so that the real code meets schedules that a
// quiet 2-core machine rarely produces.
//
// ChaosPlatform derives from zap::StdPlatform and only wraps its primitives;
// every algorithm (each CAS loop included) is the pool's own, instantiated
// unchanged from src/zap/. What it injects, all drawn from a seeded per-thread
// generator:
//   - at each atomic operation and fence: now and then a sched_yield(), more
//     rarely a sleep of a few microseconds (the thread loses its core in the
//     middle of a protocol step);
//   - compare_exchange_weak failing spuriously (the standard allows it; the
//     caller gets the current value back, as from a real spurious failure);
//   - futex_wait returning early at random (at once, or after a short nap)
//     as if woken spuriously, and futex_wake waking every sleeper instead of
//     the one asked for;
//   - spawn() refusing to start a thread, under a policy (SpawnFaults below).
//
// Seeding: set_seed() starts a new epoch; each thread reseeds its generator
// from the seed and the order in which it first touched a primitive in that
// epoch. The OS still decides the interleaving, so a seed replays the same
// injection pattern per thread, not the same schedule; in practice a failing
// seed makes the failure far more likely to come back.
#pragma once

#include "trace.hpp"

#include <zap/std_platform.hpp>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>

namespace stress {

inline std::uint64_t splitmix64(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Rates of injection: "one in N" draws (0 disables that kind).
struct ChaosRates {
    std::atomic<std::uint32_t> yield_one_in{24};
    std::atomic<std::uint32_t> sleep_one_in{1500};
    std::atomic<std::uint32_t> max_sleep_us{40};
    std::atomic<std::uint32_t> cas_fail_one_in{12};
    std::atomic<std::uint32_t> spurious_wake_one_in{3};
    std::atomic<std::uint32_t> wake_all_one_in{6};
};
inline ChaosRates chaos_rates;

// What was injected (whole process), so a run can show that chaos happened.
struct ChaosStats {
    std::atomic<std::uint64_t> points{0};  // atomic operations and fences passed through
    std::atomic<std::uint64_t> yields{0};
    std::atomic<std::uint64_t> sleeps{0};
    std::atomic<std::uint64_t> cas_failures{0};
    std::atomic<std::uint64_t> spurious_wakes{0};
    std::atomic<std::uint64_t> wake_alls{0};
};
inline ChaosStats chaos_stats;

namespace detail {

inline std::atomic<std::uint64_t> chaos_seed{0};
inline std::atomic<std::uint64_t> chaos_epoch{0};
inline std::atomic<std::uint64_t> chaos_threads{0};  // threads seeded in this epoch

struct ThreadRng {
    std::uint64_t state = 0;
    std::uint64_t epoch = ~0ULL;
};

// The calling thread's generator, reseeded when a new run starts.
inline std::uint64_t draw() noexcept {
    thread_local ThreadRng rng;
    const std::uint64_t epoch = chaos_epoch.load(std::memory_order_acquire);
    if (rng.epoch != epoch) {
        rng.epoch = epoch;
        const std::uint64_t ordinal = chaos_threads.fetch_add(1, std::memory_order_relaxed);
        rng.state = splitmix64(chaos_seed.load(std::memory_order_relaxed) ^ splitmix64(ordinal + 1));
    }
    rng.state ^= rng.state << 13;
    rng.state ^= rng.state >> 7;
    rng.state ^= rng.state << 17;
    return rng.state;
}

inline bool one_in(std::uint64_t r, const std::atomic<std::uint32_t>& n) noexcept {
    const std::uint32_t k = n.load(std::memory_order_relaxed);
    return k != 0 && r % k == 0;
}

}  // namespace detail

// Starts a new chaos epoch (one per scenario run).
inline void set_chaos_seed(std::uint64_t seed) noexcept {
    detail::chaos_seed.store(seed, std::memory_order_relaxed);
    detail::chaos_threads.store(0, std::memory_order_relaxed);
    detail::chaos_epoch.fetch_add(1, std::memory_order_release);
}

// A point where the pool touches shared state: note it, then maybe lose the CPU.
inline void chaos_point(const char* op, zap::SourceLocation loc) noexcept {
    note(op, loc);
    chaos_stats.points.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t r = detail::draw();
    if (detail::one_in(r, chaos_rates.yield_one_in)) {
        chaos_stats.yields.fetch_add(1, std::memory_order_relaxed);
        sched_yield();
    } else if (detail::one_in(r >> 8, chaos_rates.sleep_one_in)) {
        chaos_stats.sleeps.fetch_add(1, std::memory_order_relaxed);
        const std::uint32_t max = chaos_rates.max_sleep_us.load(std::memory_order_relaxed);
        std::this_thread::sleep_for(std::chrono::microseconds(1 + (r >> 32) % (max == 0 ? 1 : max)));
    }
}

// Spawn failures, shared by ChaosPlatform and the spawn-failure scenario's
// variant of StdPlatform.
enum class SpawnPolicy {
    never,        // every spawn goes to the OS
    first,        // the first attempt after reset() fails
    all,          // every attempt fails: tasks run on the joining thread
    random,       // one in `fail_one_in` attempts fails
    random_safe,  // as random, but never while no spawned thread is alive, so a
                  // pool always keeps a worker and waits from outside cannot
                  // stall (the contract lets an all-failed pool run tasks only at join)
};

struct SpawnFaults {
    static inline std::atomic<SpawnPolicy> policy{SpawnPolicy::never};
    static inline std::atomic<std::uint32_t> fail_one_in{3};
    static inline std::atomic<std::uint64_t> attempts{0};
    static inline std::atomic<std::uint64_t> failures{0};
    static inline std::atomic<std::uint64_t> total_failures{0};  // never reset
    static inline std::atomic<std::uint64_t> live{0};  // spawned threads that have not returned

    static void reset(SpawnPolicy p) noexcept {
        policy.store(p);
        attempts.store(0);
        failures.store(0);
    }

    static bool should_fail() noexcept {
        const std::uint64_t n = attempts.fetch_add(1, std::memory_order_relaxed);
        const std::uint64_t r = detail::draw();
        const std::uint32_t k = fail_one_in.load(std::memory_order_relaxed);
        switch (policy.load(std::memory_order_relaxed)) {
            case SpawnPolicy::never: return false;
            case SpawnPolicy::first: return n == 0;
            case SpawnPolicy::all: return true;
            case SpawnPolicy::random: return r % k == 0;
            case SpawnPolicy::random_safe: return live.load(std::memory_order_acquire) > 0 && r % k == 0;
        }
        return false;
    }

    // Base::spawn, unless the policy says no. Counts live threads through a
    // trampoline around the pool's entry.
    template <class Base>
    static bool spawn(const zap::ThreadOptions& options, void* (*entry)(void*), void* arg) noexcept {
        if (should_fail()) {
            failures.fetch_add(1, std::memory_order_relaxed);
            total_failures.fetch_add(1, std::memory_order_relaxed);
            note("spawn refused");
            return false;
        }
        auto* start = new (std::nothrow) Start{entry, arg};
        if (start == nullptr) return false;
        live.fetch_add(1, std::memory_order_relaxed);
        if (Base::spawn(options, &trampoline, start)) return true;
        live.fetch_sub(1, std::memory_order_relaxed);
        delete start;
        return false;
    }

private:
    struct Start {
        void* (*entry)(void*);
        void* arg;
    };
    static void* trampoline(void* p) noexcept {
        const Start start = *static_cast<Start*>(p);
        delete static_cast<Start*>(p);
        set_role("worker");
        void* result = start.entry(start.arg);
        note("worker exited");
        // Release: pairs with should_fail()'s acquire (a worker that left is not counted).
        live.fetch_sub(1, std::memory_order_release);
        return result;
    }
};

struct ChaosPlatform : zap::StdPlatform {
    using Loc = zap::SourceLocation;

    template <class T>
    class Atomic : public zap::StdPlatform::Atomic<T> {
        using Base = zap::StdPlatform::Atomic<T>;

    public:
        constexpr Atomic() noexcept = default;
        constexpr explicit Atomic(T initial) noexcept : Base(initial) {}

        T load(std::memory_order order, Loc loc = Loc::current()) const noexcept {
            chaos_point("load", loc);
            return Base::load(order, loc);
        }
        void store(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            chaos_point("store", loc);
            Base::store(value, order, loc);
        }
        T exchange(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            chaos_point("exchange", loc);
            return Base::exchange(value, order, loc);
        }
        bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                   Loc loc = Loc::current()) noexcept {
            chaos_point("cas_weak", loc);
            if (detail::one_in(detail::draw(), chaos_rates.cas_fail_one_in)) {
                // A spurious failure: report the current value, as a real one does.
                chaos_stats.cas_failures.fetch_add(1, std::memory_order_relaxed);
                expected = Base::load(failure, loc);
                return false;
            }
            return Base::compare_exchange_weak(expected, desired, success, failure, loc);
        }
        bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                     Loc loc = Loc::current()) noexcept {
            chaos_point("cas_strong", loc);
            return Base::compare_exchange_strong(expected, desired, success, failure, loc);
        }
        T fetch_add(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            chaos_point("fetch_add", loc);
            return Base::fetch_add(value, order, loc);
        }
        T fetch_sub(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            chaos_point("fetch_sub", loc);
            return Base::fetch_sub(value, order, loc);
        }
        T fetch_or(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            chaos_point("fetch_or", loc);
            return Base::fetch_or(value, order, loc);
        }
        T fetch_and(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            chaos_point("fetch_and", loc);
            return Base::fetch_and(value, order, loc);
        }
    };

    static void fence(std::memory_order order, Loc loc = Loc::current()) noexcept {
        chaos_point("fence", loc);
        zap::StdPlatform::fence(order, loc);
    }

    static void spin_hint() noexcept {
        if (detail::one_in(detail::draw(), chaos_rates.yield_one_in)) sched_yield();
        zap::StdPlatform::spin_hint();
    }

    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                           const std::chrono::nanoseconds* timeout, Loc loc = Loc::current()) noexcept {
        chaos_point("futex_wait", loc);
        const std::uint64_t r = detail::draw();
        if (detail::one_in(r, chaos_rates.spurious_wake_one_in)) {
            // Wake up early for no reason: at once, or after a nap of up to 200 us.
            const std::chrono::nanoseconds nap{(r >> 16) % 3 == 0 ? 0 : (r >> 24) % 200'000};
            if (timeout != nullptr && *timeout <= nap) return zap::StdPlatform::futex_wait(word, expected, timeout, loc);
            if (nap.count() > 0) zap::StdPlatform::futex_wait(word, expected, &nap, loc);
            note("spurious wake", loc);
            chaos_stats.spurious_wakes.fetch_add(1, std::memory_order_relaxed);
            return true;
        }
        return zap::StdPlatform::futex_wait(word, expected, timeout, loc);
    }

    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc loc = Loc::current()) noexcept {
        chaos_point("futex_wake", loc);
        const bool all = detail::one_in(detail::draw(), chaos_rates.wake_all_one_in);
        if (all) chaos_stats.wake_alls.fetch_add(1, std::memory_order_relaxed);
        zap::StdPlatform::futex_wake(word, all ? std::numeric_limits<std::uint32_t>::max() : count, loc);
    }

    static bool spawn(const zap::ThreadOptions& options, void* (*entry)(void*), void* arg) noexcept {
        return SpawnFaults::spawn<zap::StdPlatform>(options, entry, arg);
    }
};

// Production primitives, with only spawn() failing by policy: the "std" side
// of the spawn-failure scenario.
struct StdSpawnFaultPlatform : zap::StdPlatform {
    static bool spawn(const zap::ThreadOptions& options, void* (*entry)(void*), void* arg) noexcept {
        return SpawnFaults::spawn<zap::StdPlatform>(options, entry, arg);
    }
};

}  // namespace stress
