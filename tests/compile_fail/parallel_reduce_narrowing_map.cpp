// SPDX-License-Identifier: MIT
// Must NOT compile: a map whose result does not convert to T without
// narrowing. Summing 0.5 a thousand times into an int would silently give 0.
// zap-expect: converts_without_narrowing
#include <zap/zap.hpp>

#include <functional>

int main() {
    zap::ThreadPool pool;
    return pool.parallel_reduce(0, 1000, 0, [](int) { return 0.5; }, std::plus<>{});  // zap-error-here
}
