// SPDX-License-Identifier: MIT
// zap/assert.hpp - contract checks.
//
// ZAP_ASSERT(condition, rule) checks an internal invariant or a rule of the
// public contract. In debug builds (NDEBUG not defined) a failed check prints
// the rule, the file and the line, then aborts. In release builds it compiles
// to nothing, and the caller documents what happens instead.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace zap::detail {

[[noreturn]] inline void assertion_failed(const char* rule, const char* file, int line) noexcept {
    std::fprintf(stderr, "zap: contract violated: %s (%s:%d)\n", rule, file, line);
    std::abort();
}

}  // namespace zap::detail

// A model build may define ZAP_ASSERT_FAILED(rule, file, line) before
// including zap, to report a failed check its own way (the Relacy model makes
// it a Relacy failure with the execution's history instead of an abort).
#ifndef ZAP_ASSERT_FAILED
#define ZAP_ASSERT_FAILED(rule, file, line) ::zap::detail::assertion_failed(rule, file, line)
#endif

#ifdef NDEBUG
#define ZAP_ASSERT(condition, rule) static_cast<void>(0)
#else
#define ZAP_ASSERT(condition, rule) ((condition) ? static_cast<void>(0) : ZAP_ASSERT_FAILED(rule, __FILE__, __LINE__))
#endif
