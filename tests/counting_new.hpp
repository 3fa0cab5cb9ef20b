// SPDX-License-Identifier: MIT
// tests/counting_new.hpp - counts every operator new of the test binary that
// includes it (include it in one source file only: it replaces the global
// operator new and delete), for the allocation-free claims: parallel_invoke,
// parallel_reduce, `co_await pool.schedule()`.
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

#if ZAP_TEST_COUNTS_NEW
// Not inlined: GCC would otherwise see free() called on what a new expression
// returned and warn (-Wmismatched-new-delete), not knowing the pair is ours.
[[gnu::noinline]] void* operator new(std::size_t bytes) {
    heap_allocations.fetch_add(1, std::memory_order_relaxed);  // a counter only
    if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
#endif
