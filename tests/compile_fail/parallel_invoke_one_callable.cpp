// SPDX-License-Identifier: MIT
// Must NOT compile: parallel_invoke takes two callables or more (one is a
// plain call; none is nothing to do), and each must be callable with no
// arguments.
// zap-expect: two_or_more_callables
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    pool.parallel_invoke([] {});  // zap-error-here
    pool.parallel_invoke([] {}, 42);  // zap-error-here
}
