// SPDX-License-Identifier: MIT
// Config::max_threads' default: the affinity mask and the cgroup CPU quota
// (available_parallelism.hpp). The quota cases read a fake system tree (the
// `system_root` seam); the mask is narrowed for real, in-process here, and
// by `taskset -c 0` in the ctest unit.available_parallelism.taskset.
//
// Built with libstdc++'s assertions, in this file only: the parsing reads
// fields of lines, optional values and the ends of paths, and a read past
// what is there (a malformed line read unchecked, an empty optional) is
// undefined behaviour that a plain build lets pass unseen; here it aborts.
#ifndef _GLIBCXX_ASSERTIONS
#define _GLIBCXX_ASSERTIONS 1
#endif
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

namespace {

namespace fs = std::filesystem;

// A directory standing for "/": proc/self/{cgroup,mountinfo} and cgroup
// directories written by the test; removed at the end.
class FakeSystem {
public:
    FakeSystem() {
        std::string pattern = (fs::temp_directory_path() / "zap-cgroup-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        root_ = pattern;
    }
    FakeSystem(FakeSystem&& other) noexcept : root_(std::exchange(other.root_, {})) {}
    FakeSystem& operator=(FakeSystem&&) = delete;
    ~FakeSystem() {
        if (!root_.empty()) fs::remove_all(root_);
    }

    // Writes `text` to the file at `path` (absolute, as the process would see it).
    void write(const std::string& path, const std::string& text) const {
        const fs::path file = root_ + path;
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text;
    }
    std::optional<std::uint32_t> bound() const { return zap::detail::cgroup_cpu_bound(root_); }

private:
    std::string root_;
};

// A v2-only system (the usual container): the process in /app/worker.
constexpr const char* v2_cgroup = "0::/app/worker\n";
constexpr const char* v2_mounts =
    "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
    "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n";

FakeSystem v2_with(const char* leaf_cpu_max) {
    FakeSystem sys;
    sys.write("/proc/self/cgroup", v2_cgroup);
    sys.write("/proc/self/mountinfo", v2_mounts);
    sys.write("/sys/fs/cgroup/app/worker/cpu.max", leaf_cpu_max);
    return sys;
}

TEST(CgroupV2, AWholeQuotaIsThatManyThreads) {
    EXPECT_EQ(v2_with("200000 100000\n").bound(), 2u);
    EXPECT_EQ(v2_with("100000 100000\n").bound(), 1u);
}

TEST(CgroupV2, AFractionalQuotaRoundsUp) {
    EXPECT_EQ(v2_with("150000 100000\n").bound(), 2u);  // 1.5 CPUs: 2 threads
    EXPECT_EQ(v2_with("50000 100000\n").bound(), 1u);   // half a CPU: still 1
    EXPECT_EQ(v2_with("200001 100000\n").bound(), 3u);
}

TEST(CgroupV2, MaxIsNoLimit) { EXPECT_EQ(v2_with("max 100000\n").bound(), std::nullopt); }

TEST(CgroupV2, UnreadableOrMalformedIsNoLimitNeverZero) {
    EXPECT_EQ(v2_with("").bound(), std::nullopt);
    EXPECT_EQ(v2_with("garbage\n").bound(), std::nullopt);
    EXPECT_EQ(v2_with("0 100000\n").bound(), std::nullopt);
    EXPECT_EQ(v2_with("100000 0\n").bound(), std::nullopt);
    EXPECT_EQ(FakeSystem{}.bound(), std::nullopt);  // no /proc files at all
}

TEST(CgroupV2, AnAncestorsTighterQuotaHolds) {
    FakeSystem sys = v2_with("max 100000\n");
    sys.write("/sys/fs/cgroup/app/cpu.max", "300000 100000\n");
    EXPECT_EQ(sys.bound(), 3u);
    sys.write("/sys/fs/cgroup/app/worker/cpu.max", "100000 100000\n");  // now the leaf is tighter
    EXPECT_EQ(sys.bound(), 1u);
    sys.write("/sys/fs/cgroup/app/worker/cpu.max", "500000 100000\n");  // a quota of its own, looser
    EXPECT_EQ(sys.bound(), 3u);
}

// A hierarchy ends at its mount point: a cpu.max above it is not read. And
// only a cgroup file system is a hierarchy: a tmpfs whose options name "cpu"
// is not a v1 cpu controller.
TEST(CgroupV2, NothingAboveTheMountPointNorOnAnotherFileSystemCounts) {
    FakeSystem sys = v2_with("max 100000\n");
    sys.write("/sys/fs/cpu.max", "100000 100000\n");
    EXPECT_EQ(sys.bound(), std::nullopt) << "a quota above the mount point was taken";
    sys.write("/proc/self/cgroup", std::string("4:cpu:/job\n") + v2_cgroup);
    sys.write("/proc/self/mountinfo", std::string(v2_mounts) + "41 30 0:40 / /sys/fs/cgroup/fake rw - tmpfs tmpfs rw,cpu\n");
    sys.write("/sys/fs/cgroup/fake/job/cpu.cfs_quota_us", "100000\n");
    sys.write("/sys/fs/cgroup/fake/job/cpu.cfs_period_us", "100000\n");
    EXPECT_EQ(sys.bound(), std::nullopt) << "a tmpfs was read as a cgroup v1 hierarchy";
}

// Lines the kernel never writes are skipped, not read past their end: too
// few fields before " - " or after it. And a hierarchy mounted for which
// /proc/self/cgroup has no line of the process gives no bound.
TEST(CgroupV2, MalformedMountLinesAndHierarchiesWithoutOurCgroupAreSkipped) {
    FakeSystem sys = v2_with("200000 100000\n");
    sys.write("/proc/self/mountinfo", std::string(v2_mounts) +
                                          "1 2 - cgroup2 cgroup2 rw\n"                              // 2 fields before
                                          "31 22 0:27 / - cgroup2 cgroup2 rw\n"                     // 4 fields before
                                          "32 22 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup\n");  // 2 after
    EXPECT_EQ(sys.bound(), 2u);
    sys.write("/proc/self/cgroup", "4:cpu:/job\n");  // no v2 line: the cgroup2 mount is not ours
    EXPECT_EQ(sys.bound(), std::nullopt);
}

// The files are closed after reading: a thousand reads leave no file
// descriptor open (counted in /proc/self/fd).
TEST(CgroupV2, ReadingTheFilesLeavesNoneOpen) {
    const auto open_files = [] {
        return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{});
    };
    FakeSystem sys = v2_with("200000 100000\n");
    const auto before = open_files();
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(sys.bound(), 2u);
    EXPECT_EQ(open_files(), before);
}

TEST(CgroupV2, AMountTableLongerThanOneReadIsReadWhole) {
    // Many mounts before the cgroup's (a host with hundreds of them): the
    // file is read in pieces of 4 KiB, and its last line still counts.
    FakeSystem sys;
    std::string mounts;
    for (int i = 0; mounts.size() < 10000; ++i)
        mounts += std::to_string(100 + i) + " 22 0:99 / /mnt/volume" + std::to_string(i) + " rw,relatime - ext4 /dev/sdz rw\n";
    mounts += "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
    sys.write("/proc/self/cgroup", v2_cgroup);
    sys.write("/proc/self/mountinfo", mounts);
    sys.write("/sys/fs/cgroup/app/worker/cpu.max", "200000 100000\n");
    EXPECT_EQ(sys.bound(), 2u);
}

TEST(CgroupV2, TheMountsRootIsStrippedFromTheCgroupPath) {
    // A container that sees only its own subtree, mounted at /sys/fs/cgroup,
    // while /proc/self/cgroup still names the full path.
    FakeSystem sys;
    sys.write("/proc/self/cgroup", "0::/kubepods/pod7/app\n");
    sys.write("/proc/self/mountinfo",
              "30 22 0:26 /kubepods/pod7 /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n");
    sys.write("/sys/fs/cgroup/app/cpu.max", "250000 100000\n");
    sys.write("/sys/fs/cgroup/cpu.max", "400000 100000\n");
    EXPECT_EQ(sys.bound(), 3u);
    // A cgroup outside the mounted subtree gives no bound ("/kubepods/pod7"
    // is no prefix of "/kubepods/pod70", nor of another pod's "/kubepods/pod8").
    sys.write("/proc/self/cgroup", "0::/kubepods/pod70/app\n");
    EXPECT_EQ(sys.bound(), std::nullopt);
    sys.write("/proc/self/cgroup", "0::/kubepods/pod8/app\n");
    EXPECT_EQ(sys.bound(), std::nullopt);
    // The cgroup the mount shows as its root: the mount point's own quota.
    sys.write("/proc/self/cgroup", "0::/kubepods/pod7\n");
    EXPECT_EQ(sys.bound(), 4u);
}

// A v1 (or hybrid) system like this machine's: a cpu,cpuacct hierarchy and
// an empty unified one.
FakeSystem v1_with(const char* quota, const char* period) {
    FakeSystem sys;
    sys.write("/proc/self/cgroup", "5:memory:/job\n4:cpu,cpuacct:/job\n0::/\n");
    sys.write("/proc/self/mountinfo",
              "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
              "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
              "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
              "40 30 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
    sys.write("/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", quota);
    sys.write("/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", period);
    sys.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    sys.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    return sys;
}

TEST(CgroupV1, QuotaOverPeriodRoundedUp) {
    EXPECT_EQ(v1_with("150000\n", "100000\n").bound(), 2u);
    EXPECT_EQ(v1_with("400000\n", "100000\n").bound(), 4u);
    EXPECT_EQ(v1_with("25000\n", "50000\n").bound(), 1u);
}

TEST(CgroupV1, MinusOneIsNoLimit) { EXPECT_EQ(v1_with("-1\n", "100000\n").bound(), std::nullopt); }

TEST(CgroupV1, OnlyTheHierarchyWithTheCpuControllerCounts) {
    FakeSystem sys = v1_with("-1\n", "100000\n");
    sys.write("/sys/fs/cgroup/memory/job/cpu.cfs_quota_us", "100000\n");  // not a cpu hierarchy
    sys.write("/sys/fs/cgroup/memory/job/cpu.cfs_period_us", "100000\n");
    EXPECT_EQ(sys.bound(), std::nullopt);
}

TEST(AvailableParallelism, AtLeastOneAndNoMoreThanTheMask) {
    const std::uint32_t threads = zap::available_parallelism();
    EXPECT_GE(threads, 1u);
    EXPECT_LE(threads, zap::detail::affinity_cpus());
}

TEST(AvailableParallelism, FollowsTheAffinityMask) {
    const std::uint32_t before = zap::available_parallelism();
    cpu_set_t all;
    ASSERT_EQ(::sched_getaffinity(0, sizeof all, &all), 0);
    int first = 0;
    while (!CPU_ISSET(first, &all)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
    const std::uint32_t narrowed = zap::available_parallelism();
    ASSERT_EQ(::sched_setaffinity(0, sizeof all, &all), 0);
    EXPECT_EQ(narrowed, 1u);
    EXPECT_EQ(zap::available_parallelism(), before);  // read afresh: the mask is back
}

TEST(AvailableParallelism, IsTheDefault) {
    EXPECT_EQ(zap::Config{}.max_threads, zap::available_parallelism());
    zap::ThreadPool pool(zap::Config{.max_threads = 0});
    EXPECT_EQ(pool.max_threads(), zap::available_parallelism());
}

// Disabled in the plain run: ctest's unit.available_parallelism.taskset runs
// it under `taskset -c 0` with ZAP_TEST_EXPECTED_DEFAULT=1 - the default of a
// fresh process started inside the narrowed mask.
TEST(AvailableParallelism, DISABLED_UnderTaskset) {
    const char* expected = std::getenv("ZAP_TEST_EXPECTED_DEFAULT");
    ASSERT_NE(expected, nullptr) << "set ZAP_TEST_EXPECTED_DEFAULT to the CPUs of the mask it runs in";
    const auto want = static_cast<std::uint32_t>(std::stoul(expected));
    EXPECT_EQ(zap::Config{}.max_threads, want);
    zap::ThreadPool pool(zap::Config{.max_threads = 0});
    EXPECT_EQ(pool.max_threads(), want);
}

}  // namespace
