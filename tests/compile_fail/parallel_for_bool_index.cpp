// SPDX-License-Identifier: MIT
// Must NOT compile: a loop counts with an integer type, not bool.
// zap-expect: loop_index
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    pool.parallel_for(false, true, [](bool) {});  // zap-error-here
}
