// SPDX-License-Identifier: MIT
// Must NOT compile: a `mutable` lambda as for_each's body (shared by the
// threads, called through a const reference).
// zap-expect: element_body_callable_through_const_reference
#include <zap/zap.hpp>

#include <vector>

int main() {
    zap::ThreadPool pool;
    std::vector<int> v(10);
    pool.for_each(v, [sum = 0](int x) mutable { sum += x; });  // zap-error-here
}
