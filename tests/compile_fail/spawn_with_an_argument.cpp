// SPDX-License-Identifier: MIT
// Must NOT compile: spawn and submit call their callable once, with no arguments.
// zap-expect: callable_once_with_no_arguments
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    pool.spawn([](int) {});  // zap-error-here
    auto result = pool.submit([](int x) { return x; });  // zap-error-here
}
