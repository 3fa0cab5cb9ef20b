// SPDX-License-Identifier: MIT
// tests/counting_platform.hpp - the production platform with a count of the
// allocations made through Platform::allocate, for the drop-in layer's
// allocation claims (one block per heap task, none for parallel_for).
#pragma once

#include <zap/std_platform.hpp>

#include <atomic>
#include <cstddef>

struct CountingPlatform : zap::StdPlatform {
    static inline std::atomic<int> allocations{0};
    static void* allocate(std::size_t size, std::size_t align) {
        allocations.fetch_add(1);  // a counter only
        return zap::StdPlatform::allocate(size, align);
    }
};
