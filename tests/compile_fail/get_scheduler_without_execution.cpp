// SPDX-License-Identifier: MIT
// Must NOT compile: get_scheduler() is zap's std::execution support, which
// lives in <zap/execution.hpp> (it needs stdexec). Without that header the
// call is rejected by a static_assert of zap's (schedule_operation.hpp's
// SchedulerFor) whose message names the header to include.
// zap-expect: get_scheduler\(\) needs #include <zap/execution\.hpp>
// zap-first-error-in: zap/schedule_operation.hpp
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    auto scheduler = pool.get_scheduler();
    (void)scheduler;
}
