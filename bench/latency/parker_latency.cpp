// SPDX-License-Identifier: MIT
// bench/latency/parker_latency.cpp - idle-to-active latency (seed 003): how
// long after another thread signals does an idle thread run again, and what
// does the idle thread burn while it waits?
//
// Four ways to wait for work:
//   parker    zap::Parker: park() / unpark()
//   sleep1ms  the seed's loop before Parker: check a flag, sleep 1 ms, repeat
//   condvar   std::mutex + std::condition_variable + a flag
//   futex     a raw futex word: FUTEX_WAIT while 0 / store 1 + FUTEX_WAKE
//
// Latency: the signaller sleeps a gap (so the waiter is idle, asleep; the
// gap is G plus 0 to 1 ms, spread evenly over the samples), reads
// steady_clock, signals; the waiter reads steady_clock as soon as it runs.
// The difference, over many samples: p50 and p99. Idle CPU: the waiter's own
// CPU time (getrusage RUSAGE_THREAD, user + system) over one idle second.
//
//   zap_parker_latency [--samples N] [--gap-us G] [--idle-ms M]
#include <zap/zap.hpp>

#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::nanoseconds;

std::int64_t now_ns() {
    return std::chrono::duration_cast<nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::int64_t thread_cpu_ns() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    const auto us = [](const timeval& t) { return std::int64_t{t.tv_sec} * 1'000'000 + t.tv_usec; };
    return (us(usage.ru_utime) + us(usage.ru_stime)) * 1000;
}

// Each waiting scheme: wait() blocks until signal(); stop() ends a wait for good.
struct ParkerWait {
    zap::Parker parker;
    void wait() { parker.park(); }
    void signal() { parker.unpark(); }
};

struct SleepPollWait {
    std::atomic<bool> flag{false};
    void wait() {
        while (!flag.exchange(false, std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    void signal() { flag.store(true, std::memory_order_release); }
};

struct CondvarWait {
    std::mutex mutex;
    std::condition_variable cv;
    bool flag = false;
    void wait() {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return flag; });
        flag = false;
    }
    void signal() {
        {
            std::lock_guard lock(mutex);
            flag = true;
        }
        cv.notify_one();
    }
};

struct FutexWait {
    std::atomic<std::uint32_t> word{0};
    void wait() {
        while (word.exchange(0, std::memory_order_acquire) == 0)
            syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
    }
    void signal() {
        word.store(1, std::memory_order_release);
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
};

struct Result {
    const char* name;
    double p50_us, p99_us, max_us;
    double idle_cpu_us_per_s;
};

template <class W>
Result measure(const char* name, int samples, microseconds gap, std::chrono::milliseconds idle) {
    W w;
    std::atomic<std::int64_t> signalled_at{0};
    std::atomic<int> acked{0};
    std::vector<double> latencies;
    latencies.reserve(samples);
    std::int64_t idle_cpu = 0;
    std::thread waiter([&] {
        // Idle CPU: one wait that the signaller ends only after `idle`.
        const std::int64_t cpu0 = thread_cpu_ns();
        w.wait();
        idle_cpu = thread_cpu_ns() - cpu0;
        acked.store(1, std::memory_order_release);
        for (int i = 0; i < samples; ++i) {
            w.wait();
            const std::int64_t woke = now_ns();
            latencies.push_back(static_cast<double>(woke - signalled_at.load(std::memory_order_acquire)) / 1000.0);
            acked.store(i + 2, std::memory_order_release);
        }
    });
    std::this_thread::sleep_for(idle);
    w.signal();
    for (int i = 0; i < samples + 1; ++i) {
        while (acked.load(std::memory_order_acquire) < i + 1) std::this_thread::yield();
        if (i == samples) break;
        // The waiter goes idle. The gap varies over 1 ms so that the signal
        // falls at every phase of the polling loop's 1 ms sleep.
        std::this_thread::sleep_for(gap + microseconds((i * 7919) % 1000));
        signalled_at.store(now_ns(), std::memory_order_release);
        w.signal();
    }
    waiter.join();
    std::sort(latencies.begin(), latencies.end());
    const auto at = [&](double q) { return latencies[std::min(latencies.size() - 1, static_cast<std::size_t>(q * latencies.size()))]; };
    const double idle_s = std::chrono::duration<double>(idle).count();
    return {name, at(0.50), at(0.99), latencies.back(), static_cast<double>(idle_cpu) / 1000.0 / idle_s};
}

int arg_int(int argc, char** argv, const char* name, int fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
    return fallback;
}

}  // namespace

int main(int argc, char** argv) {
    const int samples = arg_int(argc, argv, "--samples", 1000);
    const microseconds gap{arg_int(argc, argv, "--gap-us", 500)};
    const std::chrono::milliseconds idle{arg_int(argc, argv, "--idle-ms", 1000)};
    std::printf("idle-to-active latency: %d samples, %lld us + 0..1 ms idle gap before each signal; idle CPU over %lld ms\n",
                samples, static_cast<long long>(gap.count()), static_cast<long long>(idle.count()));
    const Result results[] = {
        measure<ParkerWait>("zap::Parker", samples, gap, idle),
        measure<SleepPollWait>("sleep(1 ms) poll", samples, gap, idle),
        measure<CondvarWait>("condition_variable", samples, gap, idle),
        measure<FutexWait>("raw futex", samples, gap, idle),
    };
    std::printf("%-20s %10s %10s %10s %22s\n", "mechanism", "p50 us", "p99 us", "max us", "idle CPU us per second");
    for (const Result& r : results)
        std::printf("%-20s %10.1f %10.1f %10.1f %22.1f\n", r.name, r.p50_us, r.p99_us, r.max_us, r.idle_cpu_us_per_s);
    return 0;
}
