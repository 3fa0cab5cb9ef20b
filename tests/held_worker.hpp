// SPDX-License-Identifier: MIT
// A pool of one thread whose only worker is held in a task until the test
// lets it go, or until a watchdog does: what a call made from outside the
// pool still completes with (outside_wait.hpp OI3), and what it must not
// run (OI1). A call that needed the worker waits for the watchdog and then
// completes, so the test fails on release() instead of hanging.
#pragma once

#include <zap/zap.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace zap_test {

class HeldWorker {
public:
    // Holds `pool`'s worker (spawned for the task) and returns once it is held.
    void hold(zap::ThreadPool& pool, std::chrono::milliseconds watchdog) {
        pool.spawn([this, watchdog] {
            std::unique_lock lock(mutex_);
            held_ = true;
            changed_.notify_all();
            watchdog_fired_ = !changed_.wait_for(lock, watchdog, [this] { return released_; });
        });
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return held_; });
    }

    // Lets the worker go. True when it was still held: every call made
    // meanwhile completed without it.
    bool release() {
        const std::lock_guard lock(mutex_);
        released_ = true;
        changed_.notify_all();
        return !watchdog_fired_;
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool held_ = false;
    bool released_ = false;
    bool watchdog_fired_ = false;
};

}  // namespace zap_test
