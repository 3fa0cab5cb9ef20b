// SPDX-License-Identifier: MIT
// model/mutation_rules.hpp - what an ordering override means, shared by the
// two checkers' platforms: the Relacy model reads its overrides from the
// environment at run time (mutation.hpp), the GenMC model gets them compiled
// in (model/genmc/genmc_platform.hpp); both apply them through these rules, so
// a mutant is the same program under either checker.
//
// Only <atomic> and plain C++: GenMC compiles this with its own <atomic> and
// a C library that lacks most of <string>.
#pragma once

#include <atomic>
#include <cstddef>

namespace zap_model {

constexpr const char* order_name(std::memory_order order) noexcept {
    switch (order) {
        case std::memory_order_relaxed: return "relaxed";
        case std::memory_order_consume: return "consume";
        case std::memory_order_acquire: return "acquire";
        case std::memory_order_release: return "release";
        case std::memory_order_acq_rel: return "acq_rel";
        case std::memory_order_seq_cst: return "seq_cst";
    }
    return "?";
}

// True when `suffix` names the end of `file` on whole path components
// ("src/zap/buffer.hpp" and "buffer.hpp" match ".../src/zap/buffer.hpp").
constexpr bool path_matches(const char* file, const char* suffix) noexcept {
    std::size_t n = 0, m = 0;
    while (file[n] != '\0') ++n;
    while (suffix[m] != '\0') ++m;
    if (m > n) return false;
    const char* tail = file + (n - m);
    for (std::size_t i = 0; i < m; ++i)
        if (tail[i] != suffix[i]) return false;
    return tail == file || tail[-1] == '/';
}

// A compare-exchange's failure order after its success order became `success`:
// no acquire on failure unless the success order has one.
constexpr std::memory_order clamp_failure(std::memory_order failure, std::memory_order success) noexcept {
    if (success == std::memory_order_seq_cst) return failure;
    if (success == std::memory_order_acquire || success == std::memory_order_acq_rel)
        return failure == std::memory_order_relaxed ? failure : std::memory_order_acquire;
    return std::memory_order_relaxed;
}

}  // namespace zap_model
