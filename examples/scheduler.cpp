// SPDX-License-Identifier: MIT
// zap under std::execution (src/zap/execution.hpp, with stdexec): the pool's
// scheduler in a sender pipeline, bulk spread over the workers by the pool's
// own loop, and an exec::task coroutine that fans out with co_await.
// Needs stdexec (NVIDIA/stdexec) on the include path; its ctest is SKIPPED
// where stdexec is missing or does not compile.
//
// Usage: scheduler [threads]   (default: the machine's cores)
#include <zap/execution.hpp>
#include <zap/zap.hpp>

#include <exec/task.hpp>
#include <stdexec/execution.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

// A piece of work a coroutine awaits: hop onto the pool, sum a range there.
exec::task<double> sum_of_roots(zap::Scheduler sched, int first, int last) {
    co_await stdexec::schedule(sched);
    double sum = 0;
    for (int i = first; i < last; ++i) sum += std::sqrt(static_cast<double>(i));
    co_return sum;
}

// Fan out: four pieces at once, resumed when all four have ended.
exec::task<double> fan_out(zap::Scheduler sched, int n) {
    auto [a, b, c, d] = co_await stdexec::when_all(sum_of_roots(sched, 0, n / 4), sum_of_roots(sched, n / 4, n / 2),
                                                   sum_of_roots(sched, n / 2, 3 * n / 4),
                                                   sum_of_roots(sched, 3 * n / 4, n));
    co_return a + b + c + d;
}

}  // namespace

int main(int argc, char** argv) {
    zap::Config config;
    if (argc > 1) config.max_threads = static_cast<std::uint32_t>(std::atoi(argv[1]));
    zap::ThreadPool pool(config);
    auto sched = pool.get_scheduler();
    int failures = 0;

    // A pipeline: compute on a worker, then square every element in parallel.
    std::vector<double> squares(100'000);
    auto work = stdexec::schedule(sched) | stdexec::then([&] { return pool.worker_index().has_value(); }) |
                stdexec::bulk(stdexec::par, squares.size(), [&](std::size_t i, bool) {
                    squares[i] = static_cast<double>(i) * static_cast<double>(i);
                });
    auto [on_worker] = stdexec::sync_wait(std::move(work)).value();
    const double total = std::accumulate(squares.begin(), squares.end(), 0.0);
    const double n = static_cast<double>(squares.size());
    const double expected = (n - 1) * n * (2 * n - 1) / 6;
    std::printf("then ran on a worker: %s; bulk sum of squares %.0f (expected %.0f)\n", on_worker ? "yes" : "no",
                total, expected);
    failures += on_worker && total == expected ? 0 : 1;

    // A coroutine started on the pool, fanning out with co_await.
    auto [sum] = stdexec::sync_wait(stdexec::starts_on(sched, fan_out(sched, 1'000'000))).value();
    double check = 0;
    for (int i = 0; i < 1'000'000; ++i) check += std::sqrt(static_cast<double>(i));
    std::printf("sum of sqrt(i), i < 10^6, in four pieces on %u threads: %.3f (expected %.3f)\n",
                pool.max_threads(), sum, check);
    failures += std::abs(sum - check) < 1e-6 * check ? 0 : 1;
    return failures == 0 ? 0 : 1;
}
