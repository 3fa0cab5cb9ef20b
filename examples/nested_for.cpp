// SPDX-License-Identifier: MIT
// Nested parallel_for: a matrix product C = A * B, rows in parallel and,
// inside each row, columns in parallel. The inner loops run on the pool's
// workers; their waits run other pieces meanwhile, so nesting is safe even
// on a pool of one thread (try: nested_for 1).
#include <zap/zap.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    zap::Config config;
    if (argc > 1) config.max_threads = static_cast<std::uint32_t>(std::atoi(argv[1]));
    zap::ThreadPool pool(config);

    constexpr int n = 160;
    std::vector<double> a(n * n), b(n * n), c(n * n, 0.0);
    pool.for_each(a, [](double& x, std::size_t i) { x = static_cast<double>(i % 7); });
    pool.for_each(b, [](double& x, std::size_t i) { x = static_cast<double>(i % 5) - 2; });

    pool.parallel_for(0, n, [&](int row) {
        pool.parallel_for(0, n, [&, row](int col) {
            double sum = 0;
            for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
            c[row * n + col] = sum;
        });
    });

    // The check: the same product, serially.
    int wrong = 0;
    for (int row = 0; row < n; ++row)
        for (int col = 0; col < n; ++col) {
            double sum = 0;
            for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
            wrong += sum != c[row * n + col];
        }
    std::printf("%d x %d product on %u threads: %d wrong cells\n", n, n, pool.max_threads(), wrong);
    return wrong == 0 ? 0 : 1;
}
