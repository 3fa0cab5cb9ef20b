// SPDX-License-Identifier: MIT
// Must NOT compile: reduce is called as reduce(T, T).
// zap-expect: reduction_of
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    return pool.parallel_reduce(0, 1000, 0, [](int i) { return i; }, [](int a) { return a; });  // zap-error-here
}
