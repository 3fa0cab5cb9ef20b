// SPDX-License-Identifier: MIT
// bench/main.cpp - the command line of every benchmark binary.
//
//   bench_<peer> --variants                         its rows, one per line
//   bench_<peer> VARIANT WORKLOAD SIZE [--idle]     one measurement, one line:
//     variant workload size seconds allocations tasks peak_rss_kib idle_cpu_seconds
//   (idle_cpu_seconds is -1 without --idle)
//   exit 0 on success, 1 on a wrong result, 3 when the variant cannot express
//   the workload, 2 on bad arguments.
#include "harness.hpp"

#include <cinttypes>
#include <map>

namespace bench {

std::uint64_t expected_checksum(const std::string& workload, std::uint64_t size) {
    if (workload == "fib") {
        std::uint64_t a = 0, b = 1;
        for (std::uint64_t i = 0; i < size; ++i) b = std::exchange(a, b) + b;
        return a;
    }
    if (workload == "qsort" || workload == "psum") {
        std::uint64_t sum = 0;
        std::uint32_t state = random_seed;  // the words random_words(size) holds, without holding them
        for (std::uint64_t i = 0; i < size; ++i) sum += xorshift32(state);
        return sum;
    }
    if (workload == "skynet") return size * (size - 1) / 2;
    if (workload == "nqueens") {
        static const std::map<std::uint64_t, std::uint64_t> known{{8, 92}, {10, 724}, {12, 14200}, {14, 365596}};
        auto it = known.find(size);
        return it != known.end() ? it->second : nqueens_seq(Board{}, static_cast<int>(size));
    }
    return size;  // spawn, hop, yield, pingpong: the count of runs
}

}  // namespace bench

// The process's peak resident set (VmHWM). Not getrusage's ru_maxrss: Linux
// carries that across execve, so it would report bench/run's own size.
static long peak_rss_kib() {
    std::FILE* status = std::fopen("/proc/self/status", "r");
    if (status == nullptr) return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, status) != nullptr) {
        if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    }
    std::fclose(status);
    return kib;
}

int main(int argc, char** argv) {
    using namespace bench;
    if (argc == 2 && std::strcmp(argv[1], "--variants") == 0) {
        for (const auto& v : variants()) std::printf("%s\n", v.c_str());
        return 0;
    }
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s --variants | VARIANT WORKLOAD SIZE [--idle]\n", argv[0]);
        return 2;
    }
    const std::string variant = argv[1], workload = argv[2];
    const std::uint64_t size = std::strtoull(argv[3], nullptr, 10);
    Meter meter;
    meter.want_idle(argc > 4 && std::strcmp(argv[4], "--idle") == 0);
    Outcome out;
    if (!run_workload(variant, workload, size, meter, out)) return 3;
    const std::uint64_t expected = expected_checksum(workload, size);
    if (out.checksum != expected) {
        std::fprintf(stderr, "%s %s %" PRIu64 ": wrong result %" PRIu64 ", expected %" PRIu64 "\n", variant.c_str(),
                     workload.c_str(), size, out.checksum, expected);
        return 1;
    }
    std::printf("%s\t%s\t%" PRIu64 "\t%.6f\t%" PRIu64 "\t%" PRIu64 "\t%ld\t%.4f\n", variant.c_str(), workload.c_str(),
                size, meter.measured().seconds, meter.measured().allocs, out.tasks, peak_rss_kib(),
                meter.idle_cpu());
    return 0;
}
