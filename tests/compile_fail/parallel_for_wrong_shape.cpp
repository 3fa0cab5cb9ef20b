// SPDX-License-Identifier: MIT
// Must NOT compile: parallel_for's body is called as body(i), with the index.
// zap-expect: loop_body
// zap-expect: callable_with
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    pool.parallel_for(0, 100, [](int, int) {});  // zap-error-here
}
