// SPDX-License-Identifier: MIT
// bench/futex_floor_bench.cpp - the floor of an idle-pool round trip: two
// threads passing a token through two futex-backed signals, each sleeping in
// the kernel between turns. One round trip = two wakes and two sleeps, the
// least any pool whose workers sleep while idle can do.
#include "harness.hpp"

#include <thread>

namespace bench {

std::vector<std::string> variants() { return {"raw futex (floor)"}; }

bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    if (variant != "raw futex (floor)" || workload != "pingpong") return false;
    Signal ping, pong;
    std::thread partner([&] {
        for (std::uint64_t i = 0; i < size; ++i) {
            ping.wait();
            pong.set();
        }
    });
    out = meter.measure([&] {
        for (std::uint64_t i = 0; i < size; ++i) {
            ping.set();
            pong.wait();
        }
        return Outcome{size, size};
    });
    partner.join();
    meter.idle_second();
    return true;
}

}  // namespace bench
