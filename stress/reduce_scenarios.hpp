// SPDX-License-Identifier: MIT
// stress/reduce_scenarios.hpp - parallel_reduce and transform_reduce under
// load (src/zap/parallel_reduce.hpp): float sums over random sizes on pools
// of 1 to 4 threads, from outside the pool and from inside its tasks, nested
// inside a parallel_for, with exceptions injected into map and reduce.
//
// Checks: every float result is bit for bit the one a pool of one thread
// gave for the same input (R1: the tree depends on the size alone); an
// injected exception is rethrown at the top after every map(i) was called
// exactly once (each call counts itself through executed()).
#pragma once

#include "scenarios.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace stress {

template <class P>
struct ReduceKit {
    using Pool = zap::BasicThreadPool<P>;

    struct Injected : std::runtime_error {
        Injected() : std::runtime_error("injected") {}
    };

    // Terms of mixed signs and magnitudes: their float sum depends on the grouping.
    static std::vector<float> terms(Run& run, std::size_t n) {
        std::vector<float> v(n);
        for (auto& x : v) {
            const float mantissa = 1.0f + static_cast<float>(run.below(1 << 20)) / static_cast<float>(1 << 20);
            x = std::ldexp(mantissa, static_cast<int>(run.below(41)) - 20) * (run.below(2) == 0 ? 1.0f : -1.0f);
        }
        return v;
    }

    // One sum; `throw_at` (an index, or n for none) makes map throw there.
    // Every map call counts itself; the caller scheduled n.
    static std::uint32_t sum_bits(Pool& pool, const std::vector<float>& v, std::size_t throw_at, bool& threw) {
        threw = false;
        try {
            const float sum = pool.parallel_reduce(
                std::size_t{0}, v.size(), 0.0f,
                [&](std::size_t i) {
                    executed();
                    if (i == throw_at) throw Injected();
                    return v[i];
                },
                [](float a, float b) { return a + b; });
            return std::bit_cast<std::uint32_t>(sum);
        } catch (const Injected&) {
            threw = true;
            return 0;
        }
    }

    static void reduce(Run& run) {
        for (int r = 0; r < 8; ++r) {
            stage("reduce: round");
            const std::size_t n = run.below(run.size(20'000)) + (r == 0 ? 0 : 1);  // round 0 may be empty
            const std::vector<float> v = terms(run, n);
            bool threw = false;
            std::uint32_t expected = 0;
            {
                Pool one(pool_config(1));
                scheduled(n);
                expected = sum_bits(one, v, n, threw);
                STRESS_CHECK(!threw);
            }
            for (std::uint32_t threads : {2u, 4u}) {
                stage("reduce: pool");
                Pool pool(pool_config(threads));
                const bool inside = run.below(2) == 0;
                const std::size_t throw_at = n > 0 && run.below(4) == 0 ? run.below(n) : n;
                scheduled(n);
                const std::uint32_t got =
                    inside ? pool.submit([&] { return sum_bits(pool, v, throw_at, threw); }).get()
                           : sum_bits(pool, v, throw_at, threw);
                STRESS_CHECK(threw == (throw_at < n));
                if (!threw) STRESS_CHECK(got == expected);
                // Nested: each row of a parallel_for sums the same terms; every row agrees.
                stage("reduce: nested");
                const std::size_t rows = run.between(1, 4);
                std::vector<std::uint32_t> row_bits(rows);
                scheduled(rows * n);
                pool.parallel_for(std::size_t{0}, rows, [&](std::size_t row) {
                    bool row_threw = false;
                    row_bits[row] = sum_bits(pool, v, n, row_threw);
                    STRESS_CHECK(!row_threw);
                });
                for (std::uint32_t bits : row_bits) STRESS_CHECK(bits == expected);
                // transform_reduce with a throwing reduce: every transform still called.
                stage("reduce: transform_reduce");
                std::atomic<std::size_t> transforms{0};
                const bool throw_in_reduce = n > 1 && run.below(3) == 0;
                try {
                    const double total = pool.transform_reduce(
                        v, 0.0,
                        [&](double a, double b) {
                            if (throw_in_reduce) throw Injected();
                            return a + b;
                        },
                        [&](float x) {
                            transforms.fetch_add(1, std::memory_order_relaxed);
                            return static_cast<double>(x);
                        });
                    STRESS_CHECK(!throw_in_reduce);
                    STRESS_CHECK(std::isfinite(total));
                } catch (const Injected&) {
                    STRESS_CHECK(throw_in_reduce);
                }
                STRESS_CHECK(transforms.load() == n);
            }
        }
    }
};

}  // namespace stress
