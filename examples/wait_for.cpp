// SPDX-License-Identifier: MIT
// Timed waits: TaskGroup::wait_for (and WaitGroup::wait_for) returns false
// when the timeout passes first. The children keep running and the group
// stays as it was, ready for another wait. Three uses: report progress while
// waiting, put a deadline on a batch (cancel what has not started, then wait
// for what runs), and a timed wait inside a task, which helps as wait() does.
#include <zap/zap.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

using namespace std::chrono_literals;

int main() {
    zap::ThreadPool pool;

    // 1. Progress while waiting.
    zap::TaskGroup group(pool);
    constexpr int jobs = 200;
    std::atomic<int> done{0};
    for (int i = 0; i < jobs; ++i) group.run([&] {
        std::this_thread::sleep_for(1ms);
        done++;
    });
    while (!group.wait_for(20ms)) std::printf("progress: %d of %d jobs\n", done.load(), jobs);
    std::printf("all %d jobs done\n", done.load());

    // 2. A deadline for a batch: what has not started by then is skipped.
    constexpr int batch = 1000;
    std::atomic<int> finished{0};
    for (int i = 0; i < batch; ++i) group.run([&] {
        std::this_thread::sleep_for(2ms);
        finished++;
    });
    if (!group.wait_for(30ms)) {
        group.cancel();  // children not started yet never run
        group.wait();    // the running ones end; the group is reset for the next round
    }
    std::printf("deadline: %d of %d ran before the batch was cut\n", finished.load(), batch);

    // 3. Inside a task a timed wait helps: it runs the children itself while
    // it waits (with one thread, nobody else could), between two of them
    // looking at the clock.
    const bool inside = pool.submit([&pool] {
                            zap::TaskGroup children(pool);
                            std::atomic<int> ran{0};
                            for (int i = 0; i < 8; ++i) children.run([&] { ran++; });
                            return children.wait_for(10s) && ran.load() == 8;
                        }).get();
    std::printf("a task's wait_for: %s\n", inside ? "done" : "timed out");

    return done.load() == jobs && finished.load() <= batch && !group.is_canceled() && inside ? 0 : 1;
}
