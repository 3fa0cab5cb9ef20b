// SPDX-License-Identifier: MIT
// bench/take_back/take_back.cpp - what parallel_invoke costs (docs/parallel_invoke.md).
//
//   fork cost   an un-stolen parallel_invoke of two empty halves on a worker,
//               minus the same two calls made directly; with 1 worker, and
//               with 2 workers while the other one is busy (nobody steals)
//   fib(30)     one parallel_invoke per call, no cut-off, 2 workers: zap
//               against oneTBB's tbb::parallel_invoke and tbb::task_group
//               in a 2-thread arena; serial fib for scale
//   idle wait   a helping wait on a worker with nothing to run, 300 ms: the
//               CPU time its thread used and its voluntary context switches
//               (a poller shows hundreds; a woken wait sleeps once)
//
// Each figure is the median of `runs` runs (min in brackets). Build in
// Release (see CMakeLists.txt). Usage: zap_take_back [runs] [fib]
// With `fib`, only the zap fib(30) lines (bench/rayon/compare alternates
// them with rayon's).
#include <zap/zap.hpp>

#include <sys/resource.h>
#include <time.h>

#if ZAP_BENCH_TBB
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Keeps an empty half from being optimized away.
inline void touch() { asm volatile("" ::: "memory"); }

// A task running `body`; `finished` reaches zero once it has returned.
struct Job : zap::Task {
    const std::function<void()>* body;
    zap::WaitGroup finished;
    explicit Job(const std::function<void()>& b) : zap::Task(&run), body(&b) { finished.add(1); }
    static void run(zap::Task* t) {
        auto* self = static_cast<Job*>(t);
        (*self->body)();
        self->finished.done();
    }
};

// Runs `body` as a task of `pool` and waits for it from this thread.
void run_on_pool(zap::ThreadPool& pool, const std::function<void()>& body) {
    Job job(body);
    pool.schedule(job);
    job.finished.wait();
}

struct Figure {
    double median, min;
};

Figure summarize(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    return {samples[samples.size() / 2], samples.front()};
}

// ns per iteration of `loop(iterations)`.
template <class Loop>
double ns_per(std::size_t iterations, Loop&& loop) {
    const auto start = Clock::now();
    loop(iterations);
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / static_cast<double>(iterations);
}

void direct_loop(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        touch();
        touch();
    }
}

// The floor under any Chase-Lev take-back on x86: one locked read-modify-
// write (take_back's seq_cst store is an xchg, its last-task path a CAS).
void locked_loop(std::size_t n) {
    std::atomic<std::uint64_t> word{0};
    for (std::size_t i = 0; i < n; ++i) word.exchange(i, std::memory_order_seq_cst);
}

Figure locked_cost(int runs) {
    constexpr std::size_t n = 20'000'000;
    std::vector<double> samples;
    for (int r = 0; r < runs; ++r) samples.push_back(ns_per(n, locked_loop) - ns_per(n, direct_loop));
    return summarize(samples);
}

void fork_loop(zap::ThreadPool& pool, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) pool.parallel_invoke([] { touch(); }, [] { touch(); });
}

// Per-fork cost on a worker of `pool`: (fork loop - direct loop) per
// iteration. `under_outer`: the loop runs inside an outer parallel_invoke, so
// the outer half sits below each fork in the ring and take_back takes the
// store/load path (buffer.hpp 5c-5e); otherwise the fork's half is the only
// task in the ring and take_back takes the CAS path (5b, 5f).
Figure fork_cost(zap::ThreadPool& pool, int runs, bool under_outer) {
    constexpr std::size_t n = 20'000'000;
    std::vector<double> samples;
    auto measure = [&] {
        fork_loop(pool, n / 10);  // warm up
        for (int r = 0; r < runs; ++r) {
            const double forked = ns_per(n, [&](std::size_t k) { fork_loop(pool, k); });
            const double direct = ns_per(n, direct_loop);
            samples.push_back(forked - direct);
        }
    };
    run_on_pool(pool, [&] {
        if (under_outer)
            pool.parallel_invoke(measure, touch);
        else
            measure();
    });
    return summarize(samples);
}

// The calling thread's CPU time in microseconds (CLOCK_THREAD_CPUTIME_ID:
// the scheduler's exact runtime; getrusage's user/system split is sampled at
// the tick) and its voluntary context switches (Linux: RUSAGE_THREAD).
struct ThreadUsage {
    double cpu_us;
    long switches;
    static ThreadUsage now() {
        timespec cpu{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
        rusage usage{};
        getrusage(RUSAGE_THREAD, &usage);
        return {static_cast<double>(cpu.tv_sec) * 1e6 + static_cast<double>(cpu.tv_nsec) / 1e3, usage.ru_nvcsw};
    }
};

// A task of `pool` waits `ms` on a WaitGroup that this thread completes,
// with nothing else to run; returns what the wait cost the waiting thread.
ThreadUsage idle_wait_cost(zap::ThreadPool& pool, int ms) {
    zap::WaitGroup group;
    group.add(1);
    std::atomic<bool> waiting{false};
    ThreadUsage cost{};
    const std::function<void()> wait_for_group = [&] {
        const ThreadUsage before = ThreadUsage::now();
        waiting = true;
        group.wait();
        const ThreadUsage after = ThreadUsage::now();
        cost = {after.cpu_us - before.cpu_us, after.switches - before.switches};
    };
    Job job(wait_for_group);
    pool.schedule(job);
    while (!waiting.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds{ms});
    group.done();
    job.finished.wait();
    return cost;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

long fib_zap(zap::ThreadPool& pool, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    pool.parallel_invoke([&] { x = fib_zap(pool, n - 1); }, [&] { y = fib_zap(pool, n - 2); });
    return x + y;
}

#if ZAP_BENCH_TBB
long fib_tbb_invoke(int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    tbb::parallel_invoke([&] { x = fib_tbb_invoke(n - 1); }, [&] { y = fib_tbb_invoke(n - 2); });
    return x + y;
}

long fib_tbb_group(int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    tbb::task_group group;
    group.run([&] { x = fib_tbb_group(n - 1); });
    y = fib_tbb_group(n - 2);
    group.wait();
    return x + y;
}
#endif

// Milliseconds per run of `body`, which must return fib(30).
template <class Body>
Figure time_fib(int runs, Body&& body) {
    const long expected = fib_serial(30);
    std::vector<double> samples;
    for (int r = 0; r < runs + 1; ++r) {
        const auto start = Clock::now();
        const long got = body();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (got != expected) {
            std::fprintf(stderr, "fib(30) = %ld, expected %ld\n", got, expected);
            std::exit(1);
        }
        if (r > 0) samples.push_back(ms);  // the first run warms up threads and caches
    }
    return summarize(samples);
}

void print(const char* what, Figure f, const char* unit) {
    std::printf("%-58s %9.2f %s  (min %.2f)\n", what, f.median, unit, f.min);
}

// fib(30) with one parallel_invoke per call, on 1 and on 2 workers.
void fib_zap_lines(int runs) {
    for (std::uint32_t workers : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = workers});
        const std::string what = "fib(30) zap parallel_invoke, " + std::to_string(workers) + " worker(s) (ms)";
        print(what.c_str(), time_fib(runs, [&] {
                  long result = 0;
                  run_on_pool(pool, [&] { result = fib_zap(pool, 30); });
                  return result;
              }),
              "ms");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    if (argc > 2 && std::string(argv[2]) == "fib") {
        fib_zap_lines(runs);
        return 0;
    }
    std::printf("zap take_back bench: %d runs each, median (min); %u hardware threads\n", runs,
                std::thread::hardware_concurrency());

    print("for scale: one seq_cst exchange (a locked RMW) (ns)", locked_cost(runs), "ns");
    {
        zap::ThreadPool pool(zap::Config{.max_threads = 1});
        print("un-stolen parallel_invoke, 1 worker, ring empty (ns)", fork_cost(pool, runs, false), "ns");
        print("un-stolen parallel_invoke, 1 worker, a task below (ns)", fork_cost(pool, runs, true), "ns");
    }
    {
        zap::ThreadPool pool(zap::Config{.max_threads = 2});
        std::atomic<bool> started{false}, stop{false};
        struct Spin : zap::Task {
            std::atomic<bool>* started;
            std::atomic<bool>* stop;
            Spin(std::atomic<bool>& s, std::atomic<bool>& t) : zap::Task(&run), started(&s), stop(&t) {}
            static void run(zap::Task* t) {
                auto* self = static_cast<Spin*>(t);
                self->started->store(true);
                while (!self->stop->load(std::memory_order_relaxed)) std::this_thread::yield();
            }
        } spin(started, stop);
        pool.schedule(spin);
        while (!started.load()) std::this_thread::yield();
        print("un-stolen parallel_invoke, 2 workers (other busy), ring empty", fork_cost(pool, runs, false), "ns");
        print("un-stolen parallel_invoke, 2 workers (other busy), task below", fork_cost(pool, runs, true), "ns");
        stop = true;
    }

    for (std::uint32_t workers : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = workers});
        std::vector<double> cpu;
        std::vector<double> switches;
        for (int r = 0; r < std::min(runs, 3); ++r) {
            const ThreadUsage cost = idle_wait_cost(pool, 300);
            cpu.push_back(cost.cpu_us);
            switches.push_back(static_cast<double>(cost.switches));
        }
        const std::string what = "helping wait, nothing to do, 300 ms, " + std::to_string(workers) + " worker(s): CPU";
        print(what.c_str(), summarize(cpu), "us");
        std::printf("%-58s %9.0f\n", "  and voluntary context switches (median)", summarize(switches).median);
    }

    const long calls = 2 * fib_serial(31) - 1;  // calls of fib(30), one fork per call above n < 2
    std::printf("fib(30): %ld calls\n", calls);
    print("fib(30) serial, 1 thread (ms)", time_fib(runs, [] { return fib_serial(30); }), "ms");
    fib_zap_lines(runs);
#if ZAP_BENCH_TBB
    {
        tbb::task_arena arena(2);
        print("fib(30) oneTBB parallel_invoke, arena of 2 (ms)",
              time_fib(runs, [&] { return arena.execute([] { return fib_tbb_invoke(30); }); }), "ms");
        print("fib(30) oneTBB task_group, arena of 2 (ms)",
              time_fib(runs, [&] { return arena.execute([] { return fib_tbb_group(30); }); }), "ms");
    }
#else
    std::printf("oneTBB not built in: no comparison\n");
#endif
    return 0;
}
