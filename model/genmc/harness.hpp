// SPDX-License-Identifier: MIT
// model/genmc/harness.hpp - what every GenMC test file shares: zap's
// templates instantiated on the GenMC Platform, a task that counts its runs,
// and threads started from lambdas.
//
// A test file defines its scenarios as functions `void NAME()` and ends with
// ZAP_GENMC_MAIN(); model/genmc/run compiles it with -DZAP_GENMC_TEST=NAME, and
// GenMC explores every execution of that scenario (docs/model.md, section 7).
#pragma once

#include "genmc_platform.hpp"

#include <zap/batch.hpp>
#include <zap/buffer.hpp>
#include <zap/queue.hpp>
#include <zap/task.hpp>

#include <cassert>

namespace zap_genmc {

using P = zap::GenmcPlatform;
using Task = zap::BasicTask<P>;
using Batch = zap::BasicBatch<P>;
using Buffer = zap::detail::Buffer<P>;
using Queue = zap::detail::Queue<P>;
using List = zap::detail::List<Task>;

// A task that counts its runs in a plain int: a second run, or a read of the
// count that no happens-before edge orders after the run, fails the test
// (the assertion, or GenMC's race check).
struct Counted : Task {
    Counted() noexcept : Task(&bump) {}
    static void bump(Task* t) noexcept { ++static_cast<Counted*>(t)->runs; }
    int runs = 0;
};

template <std::size_t N>
void expect_each_once(Counted (&tasks)[N]) {
    for (auto& t : tasks) assert(t.runs == 1 && "each task runs exactly once");
}

// Runs a task a ring or queue handed out; a null one (a slot read before it
// was published) fails the test.
inline void run(Task* task) {
    assert(task != nullptr && "a taken slot holds a task");
    if (task != nullptr) task->run();
}

inline List one(Task& t) {
    Batch b(t);
    return b.take_list();
}

// A thread running `body` (a lambda that outlives the thread: a local of the
// scenario, which joins before returning).
template <class F>
pthread_t go(F& body) {
    return start_thread([](void* f) -> void* {
        (*static_cast<F*>(f))();
        return nullptr;
    }, &body);
}

inline void join(pthread_t t) { pthread_join(t, nullptr); }

}  // namespace zap_genmc

// main() starts the coin thread (genmc_platform.hpp, "choices") and the
// scenario, in a thread of its own: GenMC v0.11 counts an execution whose
// main thread a loop bound cut (--unroll) as complete, but one whose other
// thread was cut as blocked. So a scenario cut short is never a silent pass;
// main only starts it and waits.
#define ZAP_GENMC_MAIN()                                                       \
    int main() {                                                               \
        pthread_t coins = ::zap_genmc::start_thread(&zap_genmc_flip_coins, nullptr); \
        pthread_t scenario = ::zap_genmc::start_thread(                        \
            [](void*) -> void* {                                               \
                ZAP_GENMC_TEST();                                              \
                return nullptr;                                                \
            },                                                                 \
            nullptr);                                                          \
        pthread_join(scenario, nullptr);                                       \
        pthread_join(coins, nullptr);                                          \
        return 0;                                                              \
    }
