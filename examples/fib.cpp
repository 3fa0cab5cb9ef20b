// SPDX-License-Identifier: MIT
// Fibonacci with TaskGroup: each call runs fib(n - 1) as a child and
// computes fib(n - 2) itself, then waits. Waiting on a worker runs other
// tasks of the pool, so the recursion works on any number of threads.
#include <zap/zap.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

std::uint64_t fib_serial(unsigned n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

std::uint64_t fib(zap::ThreadPool& pool, unsigned n) {
    if (n < 20) return fib_serial(n);  // below this, a task costs more than it saves
    std::uint64_t a = 0;
    zap::TaskGroup group(pool);
    group.run([&] { a = fib(pool, n - 1); });
    const std::uint64_t b = fib(pool, n - 2);
    group.wait();  // rethrows the child's exception, if it threw one
    return a + b;
}

}  // namespace

int main(int argc, char** argv) {
    const unsigned n = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 32;
    zap::ThreadPool pool;
    const std::uint64_t result = pool.submit([&] { return fib(pool, n); }).get();
    std::uint64_t a = 0, b = 1;  // the check: fib by iteration
    for (unsigned i = 0; i < n; ++i) {
        const std::uint64_t next = a + b;
        a = b;
        b = next;
    }
    std::printf("fib(%u) = %llu (expected %llu)\n", n, static_cast<unsigned long long>(result),
                static_cast<unsigned long long>(a));
    return result == a ? 0 : 1;
}
