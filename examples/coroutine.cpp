// SPDX-License-Identifier: MIT
// C++20 coroutines on a zap pool with zap::Lazy (src/zap/lazy.hpp):
// `co_await pool.schedule()` moves a coroutine onto one of the pool's
// workers (allocating nothing: the task the pool links lives in the
// coroutine's frame), zap::when_all forks and joins, zap::sync_wait runs a
// coroutine from main(). Three uses: a fan-out that sums a vector in
// parallel pieces, fib(n) with a hop and a fork in every call, and where a
// coroutine runs before and after its hop.
//
// Usage: coroutine [n] [threads]   (defaults: 24, the machine's cores)
#include <zap/zap.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace {

// One piece of the fan-out: hop onto the pool, then sum the piece there.
zap::Lazy<long long> sum_piece(zap::ThreadPool& pool, std::span<const int> piece) {
    co_await pool.schedule();
    co_return std::accumulate(piece.begin(), piece.end(), 0LL);
}

// Fan out: one lazy per piece, all started at once by when_all; the caller
// resumes when the last piece has been summed, on the last thread to arrive.
zap::Lazy<long long> parallel_sum(zap::ThreadPool& pool, std::span<const int> values, std::size_t pieces) {
    std::vector<zap::Lazy<long long>> work;
    const std::size_t step = (values.size() + pieces - 1) / pieces;
    for (std::size_t first = 0; first < values.size(); first += step)
        work.push_back(sum_piece(pool, values.subspan(first, std::min(step, values.size() - first))));
    const std::vector<long long> sums = co_await zap::when_all(std::move(work));
    co_return std::accumulate(sums.begin(), sums.end(), 0LL);
}

// Every call hops onto the pool, then forks its two halves: they run on
// whichever workers pick up their hops, and the last to end resumes this one.
zap::Lazy<long> fib(zap::ThreadPool& pool, int n) {
    co_await pool.schedule();
    if (n < 2) co_return n;
    auto [x, y] = co_await zap::when_all(fib(pool, n - 1), fib(pool, n - 2));
    co_return x + y;
}

// Where am I? Ask the pool, not std::this_thread::get_id(): clang 14 and
// older at -O2 may reuse the id read before the co_await (lazy.hpp).
zap::Lazy<int> where_am_i(zap::ThreadPool& pool) {
    const bool before = pool.worker_index().has_value();
    co_await pool.schedule();
    const bool after = pool.worker_index().has_value();
    std::printf("before the hop on a worker: %s; after it: %s (worker %u)\n", before ? "yes" : "no",
                after ? "yes" : "no", pool.worker_index().value_or(~0u));
    co_return after && !before ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 24;
    zap::Config config;
    if (argc > 2) config.max_threads = static_cast<std::uint32_t>(std::atoi(argv[2]));
    zap::ThreadPool pool(config);

    int failures = zap::sync_wait(where_am_i(pool));

    std::vector<int> values(1'000'000);
    std::iota(values.begin(), values.end(), 1);
    const long long sum = zap::sync_wait(parallel_sum(pool, values, 64));
    const long long expected_sum = 1'000'000LL * 1'000'001LL / 2;  // past 2^31: long is 32 bits on Windows
    std::printf("sum of 1..10^6 in 64 pieces = %lld (expected %lld)\n", sum, expected_sum);
    failures += sum == expected_sum ? 0 : 1;

    const long result = zap::sync_wait(fib(pool, n));
    long a = 0, b = 1;  // the check: fib by iteration
    for (int i = 0; i < n; ++i) a = std::exchange(b, a + b);
    std::printf("fib(%d) = %ld with a hop and a fork per call on %u threads (expected %ld)\n", n, result,
                pool.max_threads(), a);
    failures += result == a ? 0 : 1;
    return failures == 0 ? 0 : 1;
}
