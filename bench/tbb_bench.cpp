// bench/tbb_bench.cpp - oneTBB's rows: task_group for the fork/join and
// flat workloads (fork = run(), join = wait(), the waiting thread helps),
// parallel_reduce for psum, task_arena::enqueue for pingpong. The external
// thread is TBB's master thread: it runs tasks while it waits, as TBB is
// meant to be used; 2 threads in all.
#include "harness.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <memory>

namespace bench {
namespace {

std::uint64_t fib(std::uint64_t n) {
    if (n < 2) return n;
    std::uint64_t a = 0;
    tbb::task_group g;
    g.run([&] { a = fib(n - 1); });
    const std::uint64_t b = fib(n - 2);
    g.wait();
    return a + b;
}

void sort(std::int32_t* data, std::size_t n) {
    if (n <= sort_cutoff) return insertion_sort(data, n);
    const std::size_t left = partition(data, n);
    tbb::task_group g;
    g.run([=] { sort(data, left); });
    sort(data + left, n - left);
    g.wait();
}

std::uint64_t skynet(std::uint64_t first, std::uint64_t leaves) {
    if (leaves == 1) return first;
    std::uint64_t sums[10];
    const std::uint64_t step = leaves / 10;
    tbb::task_group g;
    for (unsigned i = 0; i < 9; ++i) g.run([&sums, i, first, step] { sums[i] = skynet(first + i * step, step); });
    sums[9] = skynet(first + 9 * step, step);
    g.wait();
    std::uint64_t total = 0;
    for (auto s : sums) total += s;
    return total;
}

std::uint64_t queens(const Board& b, int n) {
    if (b.row == n) return 1;
    std::uint64_t counts[32] = {};
    unsigned k = 0;
    tbb::task_group g;
    std::uint32_t bits = b.free(n);
    for (; bits != 0 && (bits & (bits - 1)) != 0; bits &= bits - 1, ++k) {
        g.run([&counts, k, next = b.place(bits & -bits), n] { counts[k] = queens(next, n); });
    }
    if (bits != 0) counts[k++] = queens(b.place(bits), n);
    g.wait();
    std::uint64_t total = 0;
    for (unsigned i = 0; i < k; ++i) total += counts[i];
    return total;
}

struct Chain {
    tbb::task_group* group;
    std::uint64_t* runs;
    std::uint64_t budget;
    void operator()() const {
        if (++*runs < budget) group->run(*this);
    }
};

Outcome run(const std::string& w, std::uint64_t size, Meter* meter) {
    auto timed = [&](auto&& part) { return meter != nullptr ? meter->measure(part) : part(); };
    if (w == "fib") return timed([&] { return Outcome{fib(size), expected_checksum("fib", size + 1) - 1}; });
    if (w == "skynet") return timed([&] { return Outcome{skynet(0, size), size + (size - 1) / 9}; });
    if (w == "nqueens") {
        const std::uint64_t forks = nqueens_nodes(Board{}, static_cast<int>(size)) - 1;
        return timed([&] { return Outcome{queens(Board{}, static_cast<int>(size)), forks}; });
    }
    if (w == "qsort") {
        std::vector<std::int32_t> v(size);
        const auto words = random_words(size);
        std::memcpy(v.data(), words.data(), size * sizeof(std::int32_t));
        Outcome out = timed([&] {
            sort(v.data(), v.size());
            return Outcome{0, 0};
        });
        return Outcome{sorted_checksum(v), out.tasks};
    }
    if (w == "psum") {
        const auto words = random_words(size);
        return timed([&] {
            const std::uint64_t sum = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, size), std::uint64_t{0},
                [&](const tbb::blocked_range<std::size_t>& r, std::uint64_t s) {
                    for (std::size_t i = r.begin(); i != r.end(); ++i) s += words[i];
                    return s;
                },
                [](std::uint64_t a, std::uint64_t b) { return a + b; });
            return Outcome{sum, 0};
        });
    }
    if (w == "spawn") {
        std::vector<std::uint8_t> ran(size, 0);
        timed([&] {
            tbb::task_group g;
            for (std::uint64_t i = 0; i < size; ++i) g.run([&ran, i] { ran[i] = 1; });
            g.wait();
            return Outcome{};
        });
        std::uint64_t runs = 0;
        for (auto r : ran) runs += r;
        return Outcome{runs, size};
    }
    if (w == "yield") {
        std::uint64_t runs[yield_chains] = {};
        timed([&] {
            tbb::task_group g;
            for (unsigned i = 0; i < yield_chains; ++i)
                g.run(Chain{&g, &runs[i], size * (i + 1) / yield_chains - size * i / yield_chains});
            g.wait();
            return Outcome{};
        });
        std::uint64_t total = 0;
        for (auto r : runs) total += r;
        return Outcome{total, size};
    }
    if (w == "pingpong") {
        // Not task_group::run: a task the master thread spawns sits in its
        // own deque, and TBB only promises that some thread runs it by the
        // master's wait(); a master sleeping on something else can wait for
        // ever. enqueue() is TBB's fire-and-forget post to the workers.
        Signal pong;
        tbb::task_arena arena(threads);
        arena.initialize();
        return timed([&] {
            for (std::uint64_t i = 0; i < size; ++i) {
                arena.enqueue([&pong] { pong.set(); });
                pong.wait();
            }
            return Outcome{size, size};
        });
    }
    return Outcome{~0ull, 0};
}

}  // namespace

std::vector<std::string> variants() { return {"oneTBB"}; }

bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    const auto& names = workload_names();
    if (variant != "oneTBB" || std::find(names.begin(), names.end(), workload) == names.end()) return false;
    tbb::global_control control(tbb::global_control::max_allowed_parallelism, threads);
    run(workload, warmup_size(workload, size), nullptr);
    out = run(workload, size, &meter);
    meter.idle_second();
    return true;
}

}  // namespace bench
