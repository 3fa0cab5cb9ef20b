// SPDX-License-Identifier: MIT
// model/mutation.hpp - the run-time ordering override table.
//
// One model binary serves every ordering mutant: the environment variable
// ZAP_MUTATE names call sites and the weaker order to use there, e.g.
//
//   ZAP_MUTATE="src/zap/buffer.hpp:87=relaxed,src/zap/pool_core.hpp:232=relaxed"
//
// Each entry is PATH:LINE=ORDER. PATH matches the end of the file name that
// std::source_location reports for the call (so "src/zap/buffer.hpp" matches
// both the repo's header and a patched seed copy in the build tree, and
// "buffer.hpp" alone matches any buffer.hpp); LINE is the line it reports
// (docs/model.md: for a call written over several lines GCC 12 reports the
// line of the member name, e.g. the line holding `compare_exchange_weak(`).
// ORDER is relaxed, acquire, release, acq_rel or seq_cst. For a
// compare-exchange the order replaces the success order and the failure order
// is lowered so that it stays no stronger than the success order allows; for
// a fence, `relaxed` removes the fence. The table is read once, on first use;
// print_mutations() reports it, and every override that never matched a call
// is reported as unused at exit, so a typo cannot pass as a surviving mutant.
//
// Plain C++ only: this header knows nothing of Relacy. What an override
// does to an operation (clamp_failure) is in mutation_rules.hpp, shared with
// the GenMC model.
#pragma once

#include "mutation_rules.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace zap_model {

struct Mutation {
    std::string path;
    unsigned line;
    std::memory_order order;
    unsigned long hits;
};

inline std::vector<Mutation>& parse_mutations() {
    // Never destroyed: the unused-override report below runs at exit, after
    // the destructors of function statics constructed later than its atexit
    // registration (a plain static vector would be gone by then).
    static std::vector<Mutation>& table = *new std::vector<Mutation>([] {
        std::vector<Mutation> parsed;
        const char* env = std::getenv("ZAP_MUTATE");
        if (env == nullptr) return parsed;
        std::string spec = env;
        std::size_t at = 0;
        while (at < spec.size()) {
            std::size_t end = spec.find(',', at);
            if (end == std::string::npos) end = spec.size();
            const std::string entry = spec.substr(at, end - at);
            at = end + 1;
            if (entry.empty()) continue;
            const std::size_t colon = entry.rfind(':');
            const std::size_t equals = entry.find('=', colon == std::string::npos ? 0 : colon);
            if (colon == std::string::npos || equals == std::string::npos) {
                std::fprintf(stderr, "ZAP_MUTATE: bad entry '%s' (want PATH:LINE=ORDER)\n", entry.c_str());
                std::exit(2);
            }
            Mutation m{entry.substr(0, colon), 0, std::memory_order_seq_cst, 0};
            m.line = static_cast<unsigned>(std::strtoul(entry.c_str() + colon + 1, nullptr, 10));
            const std::string name = entry.substr(equals + 1);
            bool known = false;
            for (auto order : {std::memory_order_relaxed, std::memory_order_acquire, std::memory_order_release,
                               std::memory_order_acq_rel, std::memory_order_seq_cst}) {
                if (name == order_name(order)) {
                    m.order = order;
                    known = true;
                }
            }
            if (!known || m.line == 0) {
                std::fprintf(stderr, "ZAP_MUTATE: bad entry '%s' (want PATH:LINE=ORDER)\n", entry.c_str());
                std::exit(2);
            }
            parsed.push_back(m);
        }
        std::atexit([] {
            for (const Mutation& m : parse_mutations())
                if (m.hits == 0)
                    std::fprintf(stderr, "ZAP_MUTATE: override %s:%u never matched a call site\n", m.path.c_str(),
                                 m.line);
        });
        return parsed;
    }());
    return table;
}

// The order to use at this call site: the coded one, or its override.
inline std::memory_order mutate(std::memory_order coded, const char* file, unsigned line) noexcept {
    auto& table = parse_mutations();
    for (Mutation& m : table) {
        if (m.line == line && path_matches(file, m.path.c_str())) {
            ++m.hits;
            return m.order;
        }
    }
    return coded;
}

inline void print_mutations() {
    const auto& table = parse_mutations();
    if (table.empty()) {
        std::printf("ordering overrides: none\n");
        return;
    }
    for (const Mutation& m : table) std::printf("ordering override: %s:%u=%s\n", m.path.c_str(), m.line, order_name(m.order));
}

}  // namespace zap_model
