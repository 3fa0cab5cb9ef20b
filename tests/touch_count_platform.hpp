// SPDX-License-Identifier: MIT
// tests/touch_count_platform.hpp - the production platform with a count of
// the atomic operations its Atomics make, on this thread. For the claims
// that an operation touches a shared word once: a read-modify-write from a
// guess instead of a load and then a read-modify-write (the load would
// fetch the word's cache line shared from the last writer, the
// read-modify-write fetch it again to own it; docs/benchmarks.md, the
// round trip's cache lines).
#pragma once

#include <zap/std_platform.hpp>

#include <algorithm>
#include <atomic>

struct TouchCountPlatform : zap::StdPlatform {
    static int& touches() noexcept {
        thread_local int count = 0;
        return count;
    }

    template <class T>
    class Atomic : public zap::StdPlatform::Atomic<T> {
        using Base = zap::StdPlatform::Atomic<T>;

    public:
        using Base::Base;
        T load(std::memory_order order) const noexcept { return ++touches(), Base::load(order); }
        void store(T value, std::memory_order order) noexcept { ++touches(), Base::store(value, order); }
        T exchange(T value, std::memory_order order) noexcept { return ++touches(), Base::exchange(value, order); }
        T fetch_add(T value, std::memory_order order) noexcept { return ++touches(), Base::fetch_add(value, order); }
        T fetch_sub(T value, std::memory_order order) noexcept { return ++touches(), Base::fetch_sub(value, order); }
        T fetch_and(T value, std::memory_order order) noexcept { return ++touches(), Base::fetch_and(value, order); }
        bool compare_exchange_weak(T& expected, T desired, std::memory_order success,
                                   std::memory_order failure) noexcept {
            return ++touches(), Base::compare_exchange_weak(expected, desired, success, failure);
        }
    };

    // The fewest touches `operation` made in three tries on fresh state (a
    // weak CAS may fail spuriously, and count one more).
    template <class Operation>
    static int fewest_touches(Operation operation) {
        int fewest = 1 << 30;
        for (int attempt = 0; attempt < 3; ++attempt) {
            touches() = 0;
            operation();
            fewest = std::min(fewest, touches());
        }
        return fewest;
    }
};
