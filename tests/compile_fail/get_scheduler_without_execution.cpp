// SPDX-License-Identifier: MIT
// get_scheduler() is zap's std::execution support, which lives in
// <zap/execution.hpp> (it needs stdexec): without that header a call must
// not compile, and the error must name the header. unit.compile_fail.get_scheduler
// passes only when the compiler rejects this file with that message.
#include <zap/zap.hpp>

int main() {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    auto scheduler = pool.get_scheduler();
    (void)scheduler;
}
