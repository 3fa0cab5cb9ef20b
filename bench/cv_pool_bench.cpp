// SPDX-License-Identifier: MIT
// bench/cv_pool_bench.cpp - the baseline everybody writes first: one
// std::deque of std::function behind one mutex, workers sleeping on one
// condition variable, notify_one per post. Runs the continuation-passing
// workloads of continuation.hpp.
#include "continuation.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <thread>

namespace bench {
namespace {

class CvPool {
public:
    explicit CvPool(unsigned count) {
        for (unsigned i = 0; i < count; ++i) workers_.emplace_back([this] { work(); });
    }
    ~CvPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        ready_.notify_all();
        for (auto& t : workers_) t.join();
    }
    void post(std::function<void()> job) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            jobs_.push_back(std::move(job));
        }
        ready_.notify_one();
    }

private:
    void work() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
            if (jobs_.empty()) return;  // stopping, and everything ran
            auto job = std::move(jobs_.front());
            jobs_.pop_front();
            lock.unlock();
            job();
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> jobs_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

struct CvExec {
    using Node = PlainNode;

    void spawn(Node& node) {
        pool.post([task = &node] { task->run(); });
    }

    CvPool pool{threads};
};

}  // namespace

std::vector<std::string> variants() { return {"mutex+condvar pool"}; }

bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    return run_row<Continuation, CvExec>("mutex+condvar pool", variant, workload, size, meter, out);
}

}  // namespace bench
