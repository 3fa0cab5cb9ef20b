// SPDX-License-Identifier: MIT
// bench/omp_bench.cpp - OpenMP's rows, one binary per compiler (g++ with
// libgomp, clang++ with libomp; bench/run builds both). Fork = `omp task`,
// join = `taskwait`, inside one `parallel` region of 2 threads whose `single`
// thread plays the external thread (it runs tasks while it waits, as OpenMP
// is meant to be used); psum is a `parallel for` reduction.
#include "harness.hpp"

#include <omp.h>

namespace bench {
namespace {

std::uint64_t fib(std::uint64_t n) {
    if (n < 2) return n;
    std::uint64_t a = 0;
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
    const std::uint64_t b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

void sort(std::int32_t* data, std::size_t n) {
    if (n <= sort_cutoff) return insertion_sort(data, n);
    const std::size_t left = partition(data, n);
#pragma omp task firstprivate(data, left)
    sort(data, left);
    sort(data + left, n - left);
#pragma omp taskwait
}

std::uint64_t skynet(std::uint64_t first, std::uint64_t leaves) {
    if (leaves == 1) return first;
    std::uint64_t sums[10];
    const std::uint64_t step = leaves / 10;
    for (unsigned i = 0; i < 9; ++i) {
#pragma omp task shared(sums) firstprivate(i, first, step)
        sums[i] = skynet(first + i * step, step);
    }
    sums[9] = skynet(first + 9 * step, step);
#pragma omp taskwait
    std::uint64_t total = 0;
    for (auto s : sums) total += s;
    return total;
}

std::uint64_t queens(Board b, int n) {
    if (b.row == n) return 1;
    std::uint64_t counts[32] = {};
    unsigned k = 0;
    std::uint32_t bits = b.free(n);
    for (; bits != 0 && (bits & (bits - 1)) != 0; bits &= bits - 1, ++k) {
        const Board next = b.place(bits & -bits);
#pragma omp task shared(counts) firstprivate(k, next, n)
        counts[k] = queens(next, n);
    }
    if (bits != 0) counts[k++] = queens(b.place(bits), n);
#pragma omp taskwait
    std::uint64_t total = 0;
    for (unsigned i = 0; i < k; ++i) total += counts[i];
    return total;
}

void chain(std::uint64_t* runs, std::uint64_t budget) {
    if (++*runs < budget) {
#pragma omp task firstprivate(runs, budget)
        chain(runs, budget);
    }
}

// Runs `body` on the single thread of a 2-thread parallel region.
template <class F>
void on_team(F&& body) {
#pragma omp parallel num_threads(threads)
#pragma omp single
    body();
}

Outcome run(const std::string& w, std::uint64_t size, Meter* meter) {
    auto timed = [&](auto&& part) { return meter != nullptr ? meter->measure(part) : part(); };
    Outcome out{};
    if (w == "fib" || w == "skynet" || w == "nqueens") {
        const int n = static_cast<int>(size);
        const std::uint64_t tasks = w == "fib"      ? expected_checksum("fib", size + 1) - 1
                                    : w == "skynet" ? size + (size - 1) / 9
                                                    : nqueens_nodes(Board{}, n) - 1;
        return timed([&] {
            on_team([&] { out.checksum = w == "fib" ? fib(size) : w == "skynet" ? skynet(0, size) : queens(Board{}, n); });
            return Outcome{out.checksum, tasks};
        });
    }
    if (w == "qsort") {
        std::vector<std::int32_t> v(size);
        const auto words = random_words(size);
        std::memcpy(v.data(), words.data(), size * sizeof(std::int32_t));
        timed([&] {
            on_team([&] { sort(v.data(), v.size()); });
            return Outcome{};
        });
        return Outcome{sorted_checksum(v), 0};
    }
    if (w == "psum") {
        const auto words = random_words(size);
        return timed([&] {
            std::uint64_t sum = 0;
            const std::int64_t n = static_cast<std::int64_t>(size);
#pragma omp parallel for num_threads(threads) reduction(+ : sum) schedule(static)
            for (std::int64_t i = 0; i < n; ++i) sum += words[static_cast<std::size_t>(i)];
            return Outcome{sum, 0};
        });
    }
    if (w == "spawn") {
        std::vector<std::uint8_t> ran(size, 0);
        timed([&] {
            on_team([&] {
                for (std::uint64_t i = 0; i < size; ++i) {
                    std::uint8_t* slot = &ran[i];
#pragma omp task firstprivate(slot)
                    *slot = 1;
                }
#pragma omp taskwait
            });
            return Outcome{};
        });
        std::uint64_t runs = 0;
        for (auto r : ran) runs += r;
        return Outcome{runs, size};
    }
    if (w == "yield") {
        std::uint64_t runs[yield_chains] = {};
        timed([&] {
            on_team([&] {
#pragma omp taskgroup
                for (unsigned i = 0; i < yield_chains; ++i) {
                    std::uint64_t* r = &runs[i];
                    const std::uint64_t budget = size * (i + 1) / yield_chains - size * i / yield_chains;
#pragma omp task firstprivate(r, budget)
                    chain(r, budget);
                }
            });
            return Outcome{};
        });
        std::uint64_t total = 0;
        for (auto r : runs) total += r;
        return Outcome{total, size};
    }
    if (w == "pingpong") {
        Signal pong;
        return timed([&] {
            on_team([&] {
                for (std::uint64_t i = 0; i < size; ++i) {
#pragma omp task shared(pong)
                    pong.set();
                    pong.wait();
                }
            });
            return Outcome{size, size};
        });
    }
    return Outcome{~0ull, 0};
}

const char* name() {
#if defined(__clang__)
    return "OpenMP (clang libomp)";
#else
    return "OpenMP (gcc libgomp)";
#endif
}

}  // namespace

std::vector<std::string> variants() { return {name()}; }

bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    const auto& names = workload_names();
    if (variant != name() || std::find(names.begin(), names.end(), workload) == names.end()) return false;
    if (workload == "hop") return false;  // OpenMP has no coroutine to resume
    omp_set_dynamic(0);
    run(workload, warmup_size(workload, size), nullptr);
    out = run(workload, size, &meter);
    meter.idle_second();
    return true;
}

}  // namespace bench
