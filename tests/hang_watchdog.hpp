// SPDX-License-Identifier: MIT
// tests/hang_watchdog.hpp - turns a test that hangs into a test that fails.
//
// Included by a GoogleTest program (one translation unit), it starts a
// thread before main() that looks at the running test every 100 ms: a test
// still running `limit` after it started is reported by name and the
// process ends with a failure, instead of holding its caller until an
// outside time limit (ctest's, or model/mutate-logic's, where a run past the
// bound is no verdict). Completions that never come - a receiver never
// completed, a coroutine never resumed, a wait group never done - are what
// this catches. The limit is far above any test's cost (milliseconds): it
// tells a hang from a slow machine, it measures no speed.
//
// It asks GoogleTest for the running test rather than counting on its
// events alone, because a death test's child (the "threadsafe" style: a new
// process running one test) receives no events: a child that hangs must
// end too, or it keeps its parent's output open after the parent is gone.
// The child's limit is the shorter, so that its report comes first and
// the parent's death test fails on it (the report is in its message).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace zap_test {

class HangWatchdog final : public testing::EmptyTestEventListener {
public:
    static constexpr std::chrono::seconds limit{15};
    static constexpr std::chrono::seconds child_limit{10};  // a death test's child

    // Each start counts: a test run again (--gtest_repeat) starts afresh.
    // The name is taken here, on the thread that runs the tests: the
    // watching thread never reads GoogleTest's own state, which changes
    // under it without a lock it could take (ThreadSanitizer saw that race).
    void OnTestStart(const testing::TestInfo& test) override {
        std::lock_guard lock(watch_->mutex);
        ++watch_->starts;
        watch_->test = std::string(test.test_suite_name()) + "." + test.name();
    }
    void OnTestEnd(const testing::TestInfo&) override {
        std::lock_guard lock(watch_->mutex);
        watch_->test.clear();
    }
    // GoogleTest's state ends with the program: no look at it after this.
    void OnTestProgramEnd(const testing::UnitTest&) override {
        std::lock_guard lock(watch_->mutex);
        watch_->ended = true;
    }

private:
    // Shared with the watching thread, and never freed: that thread is
    // detached and may outlive the listener (GoogleTest deletes its
    // listeners when the process exits). A static pointer, so that a leak
    // checker at exit still reaches it.
    struct Watch {
        std::mutex mutex;
        unsigned long starts;  // zero: made by new Watch{}
        bool ended;
        std::string test;  // the running test; empty between tests
    };

    // A death test's child runs one test and receives no events: it is
    // known by its command line, and watched from its start.
    // Read into a static buffer: the thread may get to this only once the
    // tests run, and some count every operator new of the process.
    static bool death_test_child() {
        std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
        if (f == nullptr) return false;
        static char line[1 << 16];
        const std::size_t n = std::fread(line, 1, sizeof line, f);
        std::fclose(f);
        return std::string_view(line, n).find("--gtest_internal_run_death_test") != std::string_view::npos;
    }

    // Allocates nothing while it watches (the tests count every operator
    // new of the process): the name is copied only for a report.
    static void watch(Watch* watch) {
        const bool child = death_test_child();
        const auto limit_here = child ? child_limit : limit;
        unsigned long starts = 0;
        auto since = std::chrono::steady_clock::now();
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            std::lock_guard lock(watch->mutex);
            if (watch->ended) return;
            const bool running = child || !watch->test.empty();
            if (!child && watch->starts != starts) {
                starts = watch->starts;
                since = std::chrono::steady_clock::now();
            } else if (running && std::chrono::steady_clock::now() - since > limit_here) {
                report(child ? std::string("a death test's child") : watch->test, limit_here);
            }
        }
    }

    // _Exit(), not exit(): no exit handler or static destructor runs, since
    // one may block on the hung threads (destroying a condition variable
    // that a hung thread still waits on blocks in glibc: the portable
    // platform's timed-wait table is one). A mutant run's coverage is
    // written as it goes, so nothing is lost.
    [[noreturn]] static void report(const std::string& test, std::chrono::seconds after) {
        std::fprintf(stderr, "hang: %s has not ended after %lld s\n", test.c_str(),
                     static_cast<long long>(after.count()));
        std::fflush(nullptr);
        std::_Exit(1);
    }

    static inline Watch* const watch_ = [] {
        auto* watch = new Watch{};
        std::thread(&HangWatchdog::watch, watch).detach();
        return watch;
    }();
};

// Registered before main() (gtest_main) runs the tests.
inline const bool hang_watchdog_registered = [] {
    testing::UnitTest::GetInstance()->listeners().Append(new HangWatchdog);
    return true;
}();

}  // namespace zap_test
