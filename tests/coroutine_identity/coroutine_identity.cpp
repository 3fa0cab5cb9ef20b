// SPDX-License-Identifier: MIT
// After `co_await pool.schedule()` a coroutine runs on a worker, and
// pool.worker_index() says so - even under clang <= 14 at -O1 and above,
// which may keep std::this_thread::get_id() (pthread_self, declared const)
// from before the co_await (llvm/llvm-project#47177): the program prints how
// often get_id() did not change across a hop from outside the pool, as
// information (docs/drop_in.md warns about it), and fails only when
// worker_index() is wrong. The ctest builds it with clang++ -O2.
#include "../detached.hpp"

#include <zap/zap.hpp>

#include <cstdio>
#include <semaphore>
#include <thread>

namespace {

using zap_test::Detached;

std::binary_semaphore hopped{0};
int same_id = 0, no_index = 0;

Detached hop(zap::ThreadPool& pool) {
    const std::thread::id before = std::this_thread::get_id();
    co_await pool.schedule();  // from this (outside) thread onto a worker
    if (std::this_thread::get_id() == before) ++same_id;
    if (!pool.worker_index()) ++no_index;
    hopped.release();
}

}  // namespace

int main() {
    constexpr int hops = 1000;
    zap::ThreadPool pool(2);
    for (int i = 0; i < hops; ++i) {
        hop(pool);
        hopped.acquire();
    }
    std::printf("std::this_thread::get_id() unchanged across the hop: %d of %d (the compiler kept it)\n", same_id, hops);
    std::printf("worker_index() empty after the hop: %d of %d\n", no_index, hops);
    if (no_index != 0) return 1;
    std::printf("worker_index after every hop: ok\n");
    return 0;
}
