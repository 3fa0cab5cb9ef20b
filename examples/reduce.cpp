// SPDX-License-Identifier: MIT
// Deterministic reductions: the same float sum, bit for bit, on pools of 1,
// 2 and 4 threads, because parallel_reduce groups the terms by a tree that
// depends on the range's size only (docs/drop_in.md, "Reductions"). A
// left-to-right loop rounds differently, and so would a split that followed
// the threads. Then transform_reduce, std::transform_reduce's shape: the
// longest word, and a dot product.
#include <zap/zap.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

int main() {
    // Terms of every sign and size: their sum depends on how they are grouped.
    std::vector<float> terms(1'000'000);
    std::uint32_t state = 12345;
    for (float& x : terms) {
        state = state * 1664525u + 1013904223u;
        x = std::ldexp(1.0f + static_cast<float>(state >> 9) / 8388608.0f, static_cast<int>(state % 41) - 20) *
            ((state & 256) != 0 ? 1.0f : -1.0f);
    }
    auto plus = [](float a, float b) { return a + b; };

    int failures = 0;
    std::uint32_t first = 0;
    for (std::uint32_t threads : {1u, 2u, 4u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        const float sum = pool.parallel_reduce(std::size_t{0}, terms.size(), 0.0f,
                                               [&](std::size_t i) { return terms[i]; }, plus);
        const auto bits = std::bit_cast<std::uint32_t>(sum);
        if (threads == 1) first = bits;
        failures += bits == first ? 0 : 1;
        std::printf("%u thread(s): sum %a (bits %08x)\n", threads, static_cast<double>(sum), bits);
    }
    const float serial = std::accumulate(terms.begin(), terms.end(), 0.0f);
    std::printf("left to right: %a (another grouping, another rounding)\n", static_cast<double>(serial));

    zap::ThreadPool pool;
    const std::vector<std::string> words{"work", "stealing", "thread", "pool", "deterministic", "reduction"};
    const std::size_t longest = pool.transform_reduce(
        words, std::size_t{0}, [](std::size_t a, std::size_t b) { return std::max(a, b); },
        [](const std::string& w) { return w.size(); });
    std::vector<double> x(1000, 0.5), y(1000, 4.0);
    const double dot = pool.parallel_reduce(0, 1000, 0.0, [&](int i) { return x[i] * y[i]; },
                                            [](double a, double b) { return a + b; });
    std::printf("longest word: %zu letters; dot product: %g\n", longest, dot);
    failures += longest == 13 ? 0 : 1;
    failures += dot == 2000.0 ? 0 : 1;
    std::printf("%s\n", failures == 0 ? "the same sum on every pool" : "MISMATCH");
    return failures == 0 ? 0 : 1;
}
