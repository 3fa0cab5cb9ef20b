// SPDX-License-Identifier: MIT
// Parallel quicksort with parallel_invoke: each partition step forks the two
// halves; small ranges sort serially. Nothing is allocated per fork (the
// stealable half lives on this stack frame). Checks its own result: the
// output is sorted and is a permutation of the input.
#include <zap/zap.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr std::ptrdiff_t serial_below = 2048;  // below this, std::sort is faster than forking

void quicksort(zap::ThreadPool& pool, std::uint32_t* first, std::uint32_t* last) {
    if (last - first < serial_below) {
        std::sort(first, last);
        return;
    }
    // Median of three as the pivot, then a three-way partition: [< pivot) [== pivot) [> pivot).
    const std::uint32_t pivot = std::max(std::min(first[0], first[(last - first) / 2]),
                                         std::min(std::max(first[0], first[(last - first) / 2]), last[-1]));
    std::uint32_t* less_end = std::partition(first, last, [pivot](std::uint32_t x) { return x < pivot; });
    std::uint32_t* equal_end = std::partition(less_end, last, [pivot](std::uint32_t x) { return x == pivot; });
    // From main(), b goes to the pool and a runs here; on a worker, b waits in
    // the worker's ring and is taken back unless another worker stole it.
    pool.parallel_invoke([&] { quicksort(pool, first, less_end); }, [&] { quicksort(pool, equal_end, last); });
}

}  // namespace

int main() {
    constexpr std::size_t n = 500'000;
    std::mt19937 random(42);
    std::vector<std::uint32_t> data(n);
    for (auto& x : data) x = static_cast<std::uint32_t>(random() % 1'000'000);  // duplicates included
    std::vector<std::uint32_t> expected = data;
    std::sort(expected.begin(), expected.end());

    zap::ThreadPool pool;
    quicksort(pool, data.data(), data.data() + data.size());

    if (data != expected) {
        std::printf("quicksort: WRONG result (not the sorted input)\n");
        return 1;
    }
    std::printf("quicksort: %zu elements sorted\n", n);
    return 0;
}
