// SPDX-License-Identifier: MIT
// bench/harness.hpp - what every benchmark binary shares: the command line,
// the workload sizes' checksums, the clock, the counters beside time (heap
// allocations, peak RSS, CPU burned while idle) and the one output line.
//
// A binary runs ONE workload of ONE variant per process and prints one
// tab-separated line (see report()); bench/run starts a fresh process for
// every measurement and interleaves the peers.
//
// Each binary defines `bench::variants()` (its rows) and `bench::run_workload()`;
// main() lives here.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace bench {

// Heap allocations since the process started: malloc, calloc, realloc and the
// aligned allocators, counted by alloc_count.cpp (linked into every binary),
// so operator new and every library's malloc are included.
std::uint64_t allocations() noexcept;

// Allocations the benchmark code itself makes for its own data structures
// (continuation.hpp's frames) while timed; the meter subtracts them, so the
// allocation column counts what the pool or runtime allocates.
inline std::atomic<std::uint64_t> user_allocations{0};

// Every peer runs its work on this many threads: BENCH_THREADS, default 2
// (bench/run sets 8 for its oversubscription rows).
inline unsigned threads_from_environment() {
    const char* text = std::getenv("BENCH_THREADS");
    const unsigned long n = text != nullptr ? std::strtoul(text, nullptr, 10) : 0;
    return n > 0 ? static_cast<unsigned>(n) : 2;
}
inline const unsigned threads = threads_from_environment();

// One benchmark in a process: the pool is set up, then `timed` runs between
// two clock reads and two allocation counts; the pool stays alive while
// `idle` (optional) is measured.
struct Outcome {
    std::uint64_t checksum = 0;  // compared with expected_checksum()
    std::uint64_t tasks = 0;     // tasks (forks, posts, runs, round trips) the workload made
};

// A variant runs `workload` at `size`; it calls measure() around the part to time.
struct Measured {
    double seconds = 0;
    std::uint64_t allocs = 0;
};

class Meter {
public:
    template <class F>
    Outcome measure(F&& timed) {
        const std::uint64_t a0 = allocations();
        const std::uint64_t u0 = user_allocations.load(std::memory_order_relaxed);  // a counter only
        const auto t0 = std::chrono::steady_clock::now();
        Outcome out = timed();
        const auto t1 = std::chrono::steady_clock::now();
        const std::uint64_t user = user_allocations.load(std::memory_order_relaxed) - u0;  // a counter only
        measured_.allocs = allocations() - a0 - user;
        measured_.seconds = std::chrono::duration<double>(t1 - t0).count();
        return out;
    }
    // CPU seconds (user + system, all threads) the process burns during one
    // second of sleep on the calling thread; call it with the pool alive and
    // its work done. Skipped (reported as -1) unless asked for.
    void idle_second() {
        if (!want_idle_) return;
        const double before = cpu_seconds();
        ::usleep(1'000'000);
        idle_cpu_ = cpu_seconds() - before;
    }
    const Measured& measured() const { return measured_; }
    double idle_cpu() const { return idle_cpu_; }
    void want_idle(bool on) { want_idle_ = on; }

    // CPU seconds (user + system) of every live thread, each read from the
    // thread's own CPU-time clock. Not getrusage: the process totals leave out
    // what a thread running right now has burnt since its last tick or switch
    // (up to 4 ms at HZ=250), so a worker still busy when the idle second
    // begins would charge its earlier work to that second. Reading a thread's
    // clock brings its count up to date. A thread that exits during the second
    // would take its time out of the sum; the pools here keep theirs.
    static double cpu_seconds() {
        double total = 0;
        for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
            timespec t{};
            if (::clock_gettime(thread_cpu_clock(std::stol(entry.path().filename().string())), &t) == 0)
                total += static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
        }
        return total;
    }

private:
    // The CPU-time clock of thread `tid` of this process, as Linux encodes it
    // (what pthread_getcpuclockid returns, for a thread known only by its id).
    static clockid_t thread_cpu_clock(long tid) {
        constexpr clockid_t per_thread = 4, scheduler_runtime = 2;
        return static_cast<clockid_t>((~tid) << 3) | per_thread | scheduler_runtime;
    }

    Measured measured_;
    double idle_cpu_ = -1;
    bool want_idle_ = false;
};

// The workloads; every binary implements the ones its peer can express.
//   fib      fib(size), one fork per call, no cutoff
//   qsort    sort `size` int32 from xorshift32, insertion sort at <= 32, fork per split
//   skynet   `size` leaves (a power of 10), fan-out 10, sum of the leaf numbers
//   nqueens  count the solutions on a size x size board, one fork per placed queen
//   spawn    `size` empty tasks from one external thread, then wait for all
//   psum     sum of `size` uint32 from xorshift32, a parallel_for / chunked loop
//   yield    64 tasks rescheduling themselves, `size` runs in all
//   pingpong a token passed `size` times between the external thread and a task of an idle pool
//   hop      one coroutine resumed `size` times on the pool by `co_await pool.schedule()`
//            (the first hop from the external thread, the rest from a worker)
inline const std::vector<std::string>& workload_names() {
    static const std::vector<std::string> names{"fib",  "qsort", "skynet",   "nqueens", "spawn",
                                                "hop",  "psum",  "yield",    "pingpong"};
    return names;
}

// Every variant runs its workload once untimed at this size first (threads
// started, caches and free lists warm), then once timed at the full size.
inline std::uint64_t warmup_size(const std::string& workload, std::uint64_t size) {
    if (workload == "fib") return size > 5 ? size - 5 : size;
    if (workload == "nqueens") return size > 2 ? size - 2 : size;
    return std::max<std::uint64_t>(1, size / 10);
}

inline constexpr unsigned yield_chains = 64;
inline constexpr unsigned psum_chunks = 64;   // chunks for the pools without a partitioner of their own
inline constexpr std::size_t sort_cutoff = 32;

// The fixed input data.
inline std::uint32_t xorshift32(std::uint32_t& state) noexcept {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}
inline constexpr std::uint32_t random_seed = 2463534242u;
inline std::vector<std::uint32_t> random_words(std::size_t n) {
    std::vector<std::uint32_t> v(n);
    std::uint32_t s = random_seed;
    for (auto& x : v) x = xorshift32(s);
    return v;
}

// The sequential kernels every peer shares.
inline std::uint64_t fib_seq(std::uint64_t n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

inline void insertion_sort(std::int32_t* a, std::size_t n) noexcept {
    for (std::size_t i = 1; i < n; ++i) {
        const std::int32_t x = a[i];
        std::size_t j = i;
        for (; j > 0 && a[j - 1] > x; --j) a[j] = a[j - 1];
        a[j] = x;
    }
}

// Hoare partition around the median of three; returns the size of the left
// part (both parts non-empty, every left element <= every right element).
inline std::size_t partition(std::int32_t* a, std::size_t n) noexcept {
    auto median = [](std::int32_t x, std::int32_t y, std::int32_t z) {
        return std::max(std::min(x, y), std::min(std::max(x, y), z));
    };
    const std::int32_t pivot = median(a[0], a[n / 2], a[n - 1]);
    std::size_t i = 0, j = n - 1;
    for (;;) {
        while (a[i] < pivot) ++i;
        while (a[j] > pivot) --j;
        if (i >= j) return j + 1;
        std::swap(a[i], a[j]);
        ++i;
        --j;
    }
}

// Sortedness and content check of qsort's output: order, plus a sum that any
// lost or duplicated element would change.
inline std::uint64_t sorted_checksum(const std::vector<std::int32_t>& v) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i > 0 && v[i - 1] > v[i]) return 0;
        sum += static_cast<std::uint32_t>(v[i]);
    }
    return sum;
}

// nqueens: the free squares of the next row, given the occupied columns and diagonals.
struct Board {
    std::uint32_t cols = 0, left = 0, right = 0;
    int row = 0;
    std::uint32_t free(int n) const noexcept { return ~(cols | left | right) & ((1u << n) - 1); }
    Board place(std::uint32_t bit) const noexcept {
        return Board{cols | bit, (left | bit) << 1, (right | bit) >> 1, row + 1};
    }
};
inline std::uint64_t nqueens_seq(const Board& b, int n) {
    if (b.row == n) return 1;
    std::uint64_t count = 0;
    for (std::uint32_t f = b.free(n); f != 0; f &= f - 1) count += nqueens_seq(b.place(f & -f), n);
    return count;
}

// The nodes of the nqueens search tree (the forks a task-per-node search makes, plus one).
inline std::uint64_t nqueens_nodes(const Board& b, int n) {
    std::uint64_t count = 1;
    if (b.row == n) return count;
    for (std::uint32_t f = b.free(n); f != 0; f &= f - 1) count += nqueens_nodes(b.place(f & -f), n);
    return count;
}

// What each workload must produce (computed sequentially, outside the timing).
std::uint64_t expected_checksum(const std::string& workload, std::uint64_t size);

// A one-shot futex signal between one setter and one waiter that sleeps in
// the kernel (no spinning), reusable after each wait(): the ping-pong token
// and the "all done" of the continuation-passing workloads.
class Signal {
public:
    void set() noexcept {
        // Release: publishes the setter's writes to wait()'s acquire.
        if (word_.exchange(set_, std::memory_order_acq_rel) == sleeping_) wake();
    }
    void wait() noexcept {
        std::uint32_t seen = clear_;
        // Acquire: on failure it read set_, synchronizing with set().
        if (word_.compare_exchange_strong(seen, sleeping_, std::memory_order_acquire, std::memory_order_acquire)) {
            while (word_.load(std::memory_order_acquire) == sleeping_) sleep();  // synchronizes with set()'s exchange
        }
        word_.store(clear_, std::memory_order_relaxed);  // only this thread touches it until the next set()
    }

private:
    static constexpr std::uint32_t clear_ = 0, set_ = 1, sleeping_ = 2;
    void wake() noexcept { ::syscall(SYS_futex, &word_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0); }
    void sleep() noexcept { ::syscall(SYS_futex, &word_, FUTEX_WAIT_PRIVATE, sleeping_, nullptr, nullptr, 0); }
    std::atomic<std::uint32_t> word_{clear_};
};

// A count of jobs still to finish; the job that takes it to zero sets the signal.
class Countdown {
public:
    // Before the jobs start: published to them by the post that starts them.
    void reset(std::uint64_t n) noexcept { left_.store(n, std::memory_order_relaxed); }
    void done() noexcept {
        // acq_rel: the last job carries every job's writes to the waiter.
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) signal_.set();
    }
    void wait() noexcept { signal_.wait(); }

private:
    std::atomic<std::uint64_t> left_{0};
    Signal signal_;
};

// A row that runs workload shape `Shape` (Continuation or Blocking) on a
// fresh `Context`: the whole run_workload of a one-row binary.
template <template <class> class Shape, class Context>
bool run_row(const std::string& row, const std::string& variant, const std::string& workload, std::uint64_t size,
             Meter& meter, Outcome& out) {
    if (variant != row) return false;
    Context context;
    Shape<Context> bench(context);
    return bench.run(workload, size, meter, out);
}

// Each binary: its rows, and the run of one workload. Returns false when the
// variant cannot express the workload.
std::vector<std::string> variants();
bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out);

}  // namespace bench
