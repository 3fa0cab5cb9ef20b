// SPDX-License-Identifier: MIT
// Must NOT compile: a `mutable` transform (shared by the threads).
// zap-expect: callable_through_const_reference
#include <zap/zap.hpp>

#include <functional>
#include <vector>

int main() {
    zap::ThreadPool pool;
    std::vector<int> v(10, 1);
    return pool.transform_reduce(v, 0, std::plus<>{}, [k = 0](int x) mutable { return x + k++; });  // zap-error-here
}
