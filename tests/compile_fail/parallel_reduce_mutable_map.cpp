// SPDX-License-Identifier: MIT
// Must NOT compile: a `mutable` map (shared by the threads, called through a
// const reference).
// zap-expect: callable_through_const_reference
#include <zap/zap.hpp>

#include <functional>

int main() {
    zap::ThreadPool pool;
    return pool.parallel_reduce(0, 1000, 0, [k = 0](int i) mutable { return i + k++; }, std::plus<>{});  // zap-error-here
}
