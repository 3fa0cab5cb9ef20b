// SPDX-License-Identifier: MIT
// The smallest program: schedule a batch of tasks, let the destructor run them.
#include <zap/zap.hpp>

#include <cstdio>
#include <vector>

namespace {

struct Hello : zap::Task {
    int id;
    explicit Hello(int id) : zap::Task(&run), id(id) {}
    static void run(zap::Task* task) { std::printf("hello from task %d\n", static_cast<Hello*>(task)->id); }
};

}  // namespace

int main() {
    std::vector<Hello> tasks;
    for (int i = 0; i < 4; ++i) tasks.emplace_back(i);
    zap::ThreadPool pool;
    zap::Batch batch;
    for (auto& t : tasks) batch.push(t);
    pool.schedule(std::move(batch));
}  // ~ThreadPool: runs every task, then shuts down and joins
