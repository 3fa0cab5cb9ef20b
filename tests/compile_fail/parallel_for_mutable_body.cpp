// SPDX-License-Identifier: MIT
// Must NOT compile: a `mutable` lambda as parallel_for's body. Every thread
// calls the one body through a const reference (it is shared, never
// copied); a mutable body would race with itself.
// zap-expect: callable_through_const_reference
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    pool.parallel_for(0, 100, [n = 0L](int) mutable { ++n; });  // zap-error-here
}
