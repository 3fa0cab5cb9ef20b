// SPDX-License-Identifier: MIT
// zap/available_parallelism.hpp - how many threads this process can keep
// running at once: the default of Config::max_threads.
//
// std::thread::hardware_concurrency() counts the CPUs the machine has online.
// A process often may use fewer: `taskset`, a container's cpuset or a job
// scheduler narrow its CPU affinity mask, and a container's CPU quota (a
// cgroup's "QUOTA microseconds of CPU time per PERIOD") caps the CPU time
// all its threads get together. A pool with more busy workers than that only
// adds preemptions: each worker gets a slice of the same CPUs, and a worker
// preempted while it holds work that others wait for stalls them all.
//
// Steps (available_parallelism()):
//   1. cpus = the CPUs in the calling thread's affinity mask
//      (sched_getaffinity), or hardware_concurrency() where that fails.
//   2. For every cgroup hierarchy that controls CPU time - the cgroup2 mount
//      (cgroup v2), or the cgroup v1 mount with the "cpu" controller -
//      /proc/self/mountinfo gives its mount point and the part of the tree
//      the mount shows (its root), and /proc/self/cgroup the process's
//      cgroup in it: the directory is mount point + (cgroup path less root).
//   3. From that directory up to the mount point, each level's quota bounds
//      the CPUs: v2 `cpu.max` "QUOTA PERIOD" ("max PERIOD": no bound), v1
//      `cpu.cfs_quota_us` (-1: no bound) over `cpu.cfs_period_us`. A bound is
//      QUOTA / PERIOD rounded UP: 150000 per 100000 is 2 threads, not 1. The
//      tightest bound of all levels holds (the kernel enforces every level).
//   4. result = min(cpus, bound), at least 1.
//
// Rounding up is Go's choice (1.25's GOMAXPROCS default); Rust's
// available_parallelism rounds down. For a pool whose idle workers sleep,
// up wastes less: two workers on a 1.5-CPU quota still get 1.5 CPUs of time
// between them (throttled for the rest of each period once they have used
// it), where one worker would leave half a CPU unused. A program that wants
// the other trade sets max_threads itself.
//
// Not handled: a process moved to another cgroup, or a quota changed, after
// the default was first read (Config keeps it, see default_max_threads());
// mount points whose names need mountinfo's octal escapes (a space in a
// path): their files are not found, and no bound comes from them.
//
// Linux only; elsewhere the answer is hardware_concurrency() (at least 1).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>

#include <cerrno>
#endif

namespace zap {
namespace detail {

// Step 1: the CPUs in the calling thread's affinity mask; 0 when unknown.
inline std::uint32_t affinity_cpus() noexcept {
#if defined(__linux__)
    // The kernel refuses (EINVAL) a mask smaller than its own: grow until it fits.
    for (std::size_t cpus = 1024; cpus <= (std::size_t{1} << 22); cpus *= 2) {
        cpu_set_t* set = CPU_ALLOC(cpus);
        if (set == nullptr) return 0;
        const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
        const bool ok = sched_getaffinity(0, bytes, set) == 0;
        const int count = ok ? CPU_COUNT_S(bytes, set) : 0;
        CPU_FREE(set);
        if (ok) return static_cast<std::uint32_t>(count);
        if (errno != EINVAL) return 0;
    }
#endif
    return 0;
}

// A /proc or cgroup file, whole; empty when it cannot be read.
inline std::string read_small_file(const std::string& path) {
    std::string text;
    std::FILE* file = std::fopen(path.c_str(), "r");
    if (file == nullptr) return text;
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
    std::fclose(file);
    return text;
}

// `text` cut at every `separator`, empty pieces kept.
inline std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> pieces;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find(separator, start);
        pieces.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return pieces;
        start = end + 1;
    }
}

inline bool contains(const std::vector<std::string_view>& pieces, std::string_view wanted) {
    return std::find(pieces.begin(), pieces.end(), wanted) != pieces.end();
}

// Step 3: the threads a quota of `quota` per `period` keeps busy, rounded up;
// none for "no limit" (a negative quota) or a value that cannot be a quota.
inline std::optional<std::uint32_t> threads_for_quota(long long quota, long long period) {
    if (quota <= 0 || period <= 0) return std::nullopt;
    const long long threads = quota / period + (quota % period != 0 ? 1 : 0);
    return static_cast<std::uint32_t>(std::min<long long>(threads, std::numeric_limits<std::uint32_t>::max()));
}

// Step 3 at one level of a v2 hierarchy: cpu.max.
inline std::optional<std::uint32_t> v2_bound(const std::string& dir) {
    long long quota = 0, period = 0;
    if (std::sscanf(read_small_file(dir + "/cpu.max").c_str(), "%lld %lld", &quota, &period) != 2) {
        return std::nullopt;  // "max PERIOD", or no such file (the root of the hierarchy has none)
    }
    return threads_for_quota(quota, period);
}

// Step 3 at one level of a v1 hierarchy: cpu.cfs_quota_us over cpu.cfs_period_us.
inline std::optional<std::uint32_t> v1_bound(const std::string& dir) {
    long long quota = 0, period = 0;
    if (std::sscanf(read_small_file(dir + "/cpu.cfs_quota_us").c_str(), "%lld", &quota) != 1 ||
        std::sscanf(read_small_file(dir + "/cpu.cfs_period_us").c_str(), "%lld", &period) != 1) {
        return std::nullopt;
    }
    return threads_for_quota(quota, period);
}

inline std::optional<std::uint32_t> tighter(std::optional<std::uint32_t> a, std::optional<std::uint32_t> b) {
    if (!a) return b;
    if (!b) return a;
    return std::min(*a, *b);
}

// Step 2: the process's cgroup path in the v2 hierarchy (`v1_controller`
// empty) or in the v1 hierarchy that has `v1_controller`, from the lines
// "ID:CONTROLLERS:PATH" of /proc/self/cgroup (v2's line is "0::PATH").
inline std::optional<std::string> own_cgroup(std::string_view proc_self_cgroup, std::string_view v1_controller) {
    for (std::string_view line : split(proc_self_cgroup, '\n')) {
        const std::size_t first = line.find(':');
        const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) continue;
        const std::string_view controllers = line.substr(first + 1, second - first - 1);
        const bool match = v1_controller.empty() ? line.substr(0, first) == "0" && controllers.empty()
                                                 : contains(split(controllers, ','), v1_controller);
        if (match) return std::string(line.substr(second + 1));
    }
    return std::nullopt;
}

// Steps 2-3 for one mount of a hierarchy: the tightest bound from the
// process's cgroup directory up to the mount point.
inline std::optional<std::uint32_t> hierarchy_bound(const std::string& system_root, std::string_view mount_point,
                                                    std::string_view mount_root, const std::string& cgroup, int version) {
    // The cgroup must lie inside the part of the tree this mount shows.
    std::string_view relative = cgroup;
    if (mount_root != "/") {
        if (relative.substr(0, mount_root.size()) != mount_root) return std::nullopt;
        relative.remove_prefix(mount_root.size());
        if (!relative.empty() && relative.front() != '/') return std::nullopt;  // "/a" is no prefix of "/ab"
    }
    while (!relative.empty() && relative.back() == '/') relative.remove_suffix(1);
    const std::string top = system_root + std::string(mount_point);
    std::string dir = top + std::string(relative);
    std::optional<std::uint32_t> bound;
    for (;;) {
        bound = tighter(bound, version == 2 ? v2_bound(dir) : v1_bound(dir));
        if (dir.size() <= top.size()) return bound;
        dir.erase(dir.rfind('/'));
    }
}

// Steps 2-3: the CPU bound the cgroup quotas put on this process, if any.
// `system_root` is prefixed to every path read ("" for the real system), so
// a test can point it at a fake tree holding proc/self/cgroup,
// proc/self/mountinfo and the cgroup directories they name.
inline std::optional<std::uint32_t> cgroup_cpu_bound(const std::string& system_root) {
    const std::string cgroups = read_small_file(system_root + "/proc/self/cgroup");
    const std::string mounts = read_small_file(system_root + "/proc/self/mountinfo");
    std::optional<std::uint32_t> bound;
    // A mountinfo line: ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER_OPTIONS
    for (std::string_view line : split(mounts, '\n')) {
        const std::size_t dash = line.find(" - ");
        if (dash == std::string_view::npos) continue;
        const auto fields = split(line.substr(0, dash), ' ');
        const auto tail = split(line.substr(dash + 3), ' ');
        if (fields.size() < 5 || tail.size() < 3) continue;
        int version = 0;
        if (tail[0] == "cgroup2") version = 2;
        if (tail[0] == "cgroup" && contains(split(tail[2], ','), "cpu")) version = 1;
        if (version == 0) continue;
        const auto cgroup = own_cgroup(cgroups, version == 2 ? "" : "cpu");
        if (!cgroup) continue;
        bound = tighter(bound, hierarchy_bound(system_root, fields[4], fields[3], *cgroup, version));
    }
    return bound;
}

}  // namespace detail

// Steps 1-4: the threads this process can keep running at once, read afresh
// on every call (a few small files: not for hot code).
inline std::uint32_t available_parallelism() {
    std::uint32_t cpus = detail::affinity_cpus();
    if (cpus == 0) cpus = std::thread::hardware_concurrency();
#if defined(__linux__)
    if (const auto bound = detail::cgroup_cpu_bound("")) cpus = std::min(cpus, *bound);
#endif
    return std::max(1u, cpus);
}

namespace detail {

// Config's default: available_parallelism() as it was the first time a
// default was asked for in this process, then kept (each Config would
// otherwise read the files again; the model checkers make thousands).
inline std::uint32_t default_max_threads() {
    static const std::uint32_t threads = available_parallelism();
    return threads;
}

}  // namespace detail
}  // namespace zap
