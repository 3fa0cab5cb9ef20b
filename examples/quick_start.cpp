// SPDX-License-Identifier: MIT
// Quick start: hand callables to the pool with submit() and collect their
// results (or exceptions) through std::future.
#include <zap/zap.hpp>

#include <cstdio>
#include <future>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

// The sum of i * i for i in [from, to).
long long sum_of_squares(long long from, long long to) {
    long long sum = 0;
    for (long long i = from; i < to; ++i) sum += i * i;
    return sum;
}

}  // namespace

int main() {
    zap::ThreadPool pool;  // one worker per hardware thread, started on demand

    // Split [0, 1'000'000) into 16 parts; each part is one task.
    constexpr long long n = 1'000'000, parts = 16;
    std::vector<std::future<long long>> partial;
    for (long long p = 0; p < parts; ++p)
        partial.push_back(pool.submit([p] { return sum_of_squares(n * p / parts, n * (p + 1) / parts); }));
    long long total = 0;
    for (auto& future : partial) total += future.get();

    // An exception thrown by a task comes out of get().
    auto failing = pool.submit([]() -> int { throw std::runtime_error("bad input"); });
    bool caught = false;
    try {
        failing.get();
    } catch (const std::runtime_error& error) {
        caught = true;
        std::printf("the task threw: %s\n", error.what());
    }

    const long long expected = (n - 1) * n * (2 * n - 1) / 6;
    std::printf("sum of squares below %lld: %lld (expected %lld)\n", n, total, expected);
    return total == expected && caught ? 0 : 1;
}
