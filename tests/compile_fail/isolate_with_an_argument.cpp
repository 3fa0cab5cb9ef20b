// SPDX-License-Identifier: MIT
// Must NOT compile: isolate(f) calls f with no arguments.
// zap-expect: invocable
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    pool.isolate([](int) {});  // zap-error-here
}
