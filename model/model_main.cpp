// SPDX-License-Identifier: MIT
// model/model_main.cpp - the main() of every Relacy model binary.
//
// Usage: BINARY TEST [--sched full|bound|random] [--bound N]
//                    [--iterations N] [--expect RESULT]
// RESULT is success (the default), deadlock, race, assert, freed, leak or
// livelock, or several of them comma-separated (one bug, more than one
// symptom: which comes first depends on the order the random scheduler
// tries). With --expect other than success the run passes only when Relacy
// reports one of those failures: this is how the seed-faithful builds
// (model/seed/) and weakened orderings (ZAP_MUTATE) show that each check bites. Every run prints
// its scheduler, bounds and the number of executions explored.
#include "model_registry.hpp"

#include <zap/config.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace zap_model;

void usage(const char* program) {
    std::fprintf(stderr,
                 "usage: %s TEST [--sched full|bound|random] [--bound N] [--iterations N] [--expect RESULT]\ntests:\n",
                 program);
    for (const auto& [name, entry] : registry()) std::fprintf(stderr, "  %-28s %s\n", name.c_str(), entry.claim);
}

// Reads the options after the test name into params and expect; false on an unknown one.
bool parse_options(int argc, char** argv, rl::test_params& params, std::string& expect) {
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--sched") {
            params.search_type = value == "full" ? rl::sched_full : value == "random" ? rl::sched_random : rl::sched_bound;
        } else if (key == "--bound") {
            params.context_bound = static_cast<unsigned>(std::stoul(value));
        } else if (key == "--iterations") {
            params.iteration_count = std::stoull(value);
        } else if (key == "--expect") {
            expect = value;
        } else {
            std::fprintf(stderr, "unknown option %s\n", key.c_str());
            return false;
        }
    }
    return true;
}

void print_setup(const std::string& name, const Entry& entry, const rl::test_params& params) {
    const char* spawn_names[] = {"never", "maybe", "always", "first", "after_first"};
    std::printf("model %s: %s\n", name.c_str(), entry.claim);
    std::printf("scheduler: %s", rl::format(params.search_type));
    if (params.search_type == rl::sched_bound) std::printf(", context bound %u (preemptions)", params.context_bound);
    if (params.search_type == rl::sched_random)
        std::printf(", %llu iterations", static_cast<unsigned long long>(params.iteration_count));
    std::printf("; spurious wake-ups %s; spawn failure %s; ring capacity %u\n", entry.spurious ? "on" : "off",
                spawn_names[static_cast<int>(entry.spawn)], P::ring_capacity);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    zap_model::print_mutations();  // also reads ZAP_MUTATE before any execution allocates
    // Config's default max_threads reads /proc and cgroup files once per
    // process (available_parallelism.hpp). Done first inside a model, that
    // stdio work runs on a Relacy fiber, whose 64 KiB stack is a plain heap
    // block: it crashed Relacy's own bookkeeping (a segfault in
    // rl::waitset::try_remove in join_before_shutdown.bound). Read it here.
    (void)zap::detail::default_max_threads();
    if (argc < 2 || registry().count(argv[1]) == 0) {
        usage(argv[0]);
        return 2;
    }
    const std::string name = argv[1];
    const Entry& entry = registry().at(name);
    rl::test_params params;
    params.search_type = rl::sched_bound;
    params.context_bound = 2;
    params.iteration_count = 100000;
    params.execution_depth_limit = 20000;
    // Relacy writes to it every 2^16 iterations whatever the period: never null.
    params.progress_stream = &std::cout;
    params.progress_output_period = 20;
    std::string expect = "success";
    if (!parse_options(argc, argv, params, expect)) return 2;
    const std::map<std::string, rl::test_result_e> kinds = {
        {"success", rl::test_result_success},          {"deadlock", rl::test_result_deadlock},
        {"race", rl::test_result_data_race},            {"assert", rl::test_result_user_assert_failed},
        {"freed", rl::test_result_access_to_freed_memory}, {"leak", rl::test_result_memory_leak},
        {"livelock", rl::test_result_livelock},
    };
    std::vector<rl::test_result_e> expected;
    for (std::size_t at = 0; at <= expect.size();) {
        const std::size_t comma = std::min(expect.find(',', at), expect.size());
        const auto kind = kinds.find(expect.substr(at, comma - at));
        if (kind == kinds.end()) {
            std::fprintf(stderr, "unknown --expect %s\n", expect.c_str());
            return 2;
        }
        expected.push_back(kind->second);
        at = comma + 1;
    }
    P::spurious_wakeups = entry.spurious;
    P::spawn_failure = entry.spawn;
    print_setup(name, entry, params);

    entry.run(params);

    std::printf("executions explored: %llu; result: %s\n", static_cast<unsigned long long>(params.stop_iteration),
                rl::test_result_str(params.test_result));
    const bool ok = std::find(expected.begin(), expected.end(), params.test_result) != expected.end();
    std::printf("%s: expected %s\n", ok ? "PASS" : "FAIL", expect.c_str());
    return ok ? 0 : 1;
}
