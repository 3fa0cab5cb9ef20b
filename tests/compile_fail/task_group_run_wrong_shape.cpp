// SPDX-License-Identifier: MIT
// Must NOT compile: TaskGroup::run calls f() or f(std::stop_token).
// zap-expect: callable_once_with_no_arguments_or_a_stop_token
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool;
    zap::TaskGroup group(pool);
    group.run([](int) {});  // zap-error-here
    group.wait();
}
