// SPDX-License-Identifier: MIT
// The smallest program: schedule a batch of tasks, let the destructor run
// them. README.md shows it whole (unit.doc_snippets checks the copy).
#include <zap/zap.hpp>

#include <cstdio>
#include <utility>
#include <vector>

// A task is yours: zap links it while it waits and calls its callback once.
struct Hello : zap::Task {
    int id;
    explicit Hello(int n) : zap::Task(&run), id(n) {}
    static void run(zap::Task* task) { std::printf("hello from task %d\n", static_cast<Hello*>(task)->id); }
};

int main() {
    std::vector<Hello> tasks;
    for (int i = 0; i < 4; ++i) tasks.emplace_back(i);
    zap::ThreadPool pool;             // workers start when work arrives
    zap::Batch batch;
    for (auto& task : tasks) batch.push(task);
    pool.schedule(std::move(batch));  // one wake-up for the whole batch
}                                     // ~ThreadPool runs every task, then joins
