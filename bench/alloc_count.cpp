// SPDX-License-Identifier: MIT
// bench/alloc_count.cpp - counts every heap allocation of the process.
//
// Defining malloc and friends in the executable interposes them for the whole
// process (shared libraries included: libstdc++'s operator new, TBB, libgomp,
// Boost.Asio all call malloc). Each forwards to glibc's own entry point
// (__libc_malloc, ...) after bumping one counter; free needs no wrapper.
#include "harness.hpp"

#include <cstddef>

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {
std::atomic<std::uint64_t> count{0};
void counted() noexcept { count.fetch_add(1, std::memory_order_relaxed); }  // a counter only
}  // namespace

namespace bench {
std::uint64_t allocations() noexcept { return count.load(std::memory_order_relaxed); }  // a counter only
}  // namespace bench

extern "C" {
void* malloc(std::size_t n) {
    counted();
    return __libc_malloc(n);
}
void* calloc(std::size_t k, std::size_t n) {
    counted();
    return __libc_calloc(k, n);
}
void* realloc(void* p, std::size_t n) {
    counted();
    return __libc_realloc(p, n);
}
void* memalign(std::size_t align, std::size_t n) {
    counted();
    return __libc_memalign(align, n);
}
void* aligned_alloc(std::size_t align, std::size_t n) {
    counted();
    return __libc_memalign(align, n);
}
int posix_memalign(void** out, std::size_t align, std::size_t n) {
    counted();
    void* p = __libc_memalign(align, n);
    if (p == nullptr) return 12;  // ENOMEM
    *out = p;
    return 0;
}
}
