// SPDX-License-Identifier: MIT
// tests/counting_new.hpp - counts every operator new of the test binary that
// includes it (include it in one source file only: it replaces the global
// operator new and delete), for the allocation-free claims: parallel_invoke,
// parallel_reduce, `co_await pool.schedule()`.
//
// A file that defines ZAP_TEST_COUNT_ALIGNED_NEW before including it also
// replaces the aligned forms (what Platform::allocate and deallocate call)
// and counts their allocations and frees, on Linux (glibc's aligned_alloc
// returns what free() takes; elsewhere ZAP_TEST_COUNTS_ALIGNED_NEW is 0).
//
// Not under ThreadSanitizer, whose runtime defines operator new itself:
// there ZAP_TEST_COUNTS_NEW is 0 and the tests that count report SKIPPED.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_THREAD__)
#define ZAP_TEST_COUNTS_NEW 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ZAP_TEST_COUNTS_NEW 0
#endif
#endif
#ifndef ZAP_TEST_COUNTS_NEW
#define ZAP_TEST_COUNTS_NEW 1
#endif

inline std::atomic<long> heap_allocations{0};
inline std::atomic<long> heap_frees{0};
inline std::atomic<long> aligned_allocations{0};
inline std::atomic<long> aligned_frees{0};

#if ZAP_TEST_COUNTS_NEW && defined(ZAP_TEST_COUNT_ALIGNED_NEW) && defined(__linux__)
#define ZAP_TEST_COUNTS_ALIGNED_NEW 1
#else
#define ZAP_TEST_COUNTS_ALIGNED_NEW 0
#endif

#if ZAP_TEST_COUNTS_NEW
// Not inlined: GCC would otherwise see free() called on what a new expression
// returned and warn (-Wmismatched-new-delete), not knowing the pair is ours.
[[gnu::noinline]] void* operator new(std::size_t bytes) {
    heap_allocations.fetch_add(1, std::memory_order_relaxed);  // a counter only
    if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* memory) noexcept {
    if (memory != nullptr) heap_frees.fetch_add(1, std::memory_order_relaxed);  // a counter only
    std::free(memory);
}
[[gnu::noinline]] void operator delete(void* memory, std::size_t) noexcept { operator delete(memory); }
#endif
#if ZAP_TEST_COUNTS_ALIGNED_NEW
[[gnu::noinline]] void* operator new(std::size_t bytes, std::align_val_t align) {
    aligned_allocations.fetch_add(1, std::memory_order_relaxed);  // a counter only
    const auto a = static_cast<std::size_t>(align);
    // aligned_alloc takes a size that is a whole number of alignments.
    if (void* memory = std::aligned_alloc(a, (bytes == 0 ? a : bytes + a - 1) / a * a)) return memory;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* memory, std::align_val_t) noexcept {
    if (memory != nullptr) aligned_frees.fetch_add(1, std::memory_order_relaxed);  // a counter only
    std::free(memory);
}
[[gnu::noinline]] void operator delete(void* memory, std::size_t, std::align_val_t align) noexcept {
    operator delete(memory, align);
}
#endif
