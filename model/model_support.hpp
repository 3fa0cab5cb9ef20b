// SPDX-License-Identifier: MIT
// model/model_support.hpp - what every Relacy model file shares: the
// instantiations of src/zap on the Relacy platform, a task that counts its
// runs, and the base every model derives from.
#pragma once

#include "relacy_platform.hpp"

#include <cstddef>
#include <cstdint>

namespace zap_model {

using P = zap::RelacyPlatform;
using Task = zap::BasicTask<P>;
using Batch = zap::BasicBatch<P>;
using Pool = zap::BasicThreadPool<P>;
using WaitGroup = zap::BasicWaitGroup<P>;
using Queue = zap::detail::Queue<P>;
using Buffer = zap::detail::Buffer<P>;
using Event = zap::detail::Event<P>;
using List = zap::detail::List<Task>;

// A task that counts its runs in an rl::var: running it twice, or reading the
// count without a happens-before edge to the run, fails the model.
struct Counted : Task {
    explicit Counted(Task::Callback callback = &bump) : Task(callback) {}
    static void bump(Task* t) {
        auto* self = static_cast<Counted*>(t);
        self->runs($).store(self->runs($).load() + 1);
    }
    rl::var<int> runs{0};
};

template <class T, std::size_t N>
void expect_each_once(T (&tasks)[N]) {
    for (auto& t : tasks) RL_ASSERT(t.runs($).load() == 1);
}

// Runs a task that a ring or queue handed out; a null one (a slot read
// before it was published) is a model failure rather than a crash.
inline void run(Task* task) {
    RL_ASSERT(task != nullptr);
    if (task != nullptr) task->run();
}

// A pool configuration for a model: `max_threads` workers, a stack size of 0
// (the Relacy platform runs threads as fibers of its own), and A8's spin in
// two looks at Sync (each a Relacy yield): a notification that lands before,
// between or after them is explored.
inline zap::Config model_config(std::uint32_t max_threads) {
    zap::Config config;
    config.max_threads = max_threads;
    config.stack_size = 0;
    config.spin_rounds = 2;
    return config;
}

// A thief's turn: steals half of `victim`'s ring into its own (`thief`) and
// runs everything it got, the claimed task first.
inline void steal_and_run(Buffer& thief, Buffer& victim) {
    Buffer::Stole got{};
    if (!thief.steal(victim, got)) return;
    run(got.task);
    while (Task* t = thief.pop()) t->run();
}

// Runs every task left in a queue (a model's after(): no task may stay).
inline void run_left(Queue& queue) {
    Task* cursor = nullptr;
    if (!queue.try_acquire_consumer(cursor)) return;
    while (Task* t = queue.pop(cursor)) t->run();
    queue.release_consumer(cursor);
}

// A task that says it ran: `ran` turns 1 (release) and a futex wake follows,
// so a thread outside the pool can wait for it spinning or on a bare futex
// (not a WaitGroup, whose wait from outside would run the task itself).
struct Flagged : Task {
    P::Atomic<std::uint32_t> ran{0};
    Flagged() : Task(&run) {}
    static void run(Task* t) {
        auto* self = static_cast<Flagged*>(t);
        self->ran.store(1, std::memory_order_release);  // synchronizes with the waiter's acquire load
        P::futex_wake(self->ran, 1);
    }
    bool done() { return ran.load(std::memory_order_acquire) != 0; }
};

inline List one(Task& t) {
    Batch b(t);
    return b.take_list();
}

// Common base: per-execution Platform state is reset before each execution.
template <class Derived, rl::thread_id_t Static, rl::thread_id_t Dynamic = 0>
struct Model : rl::test_suite<Derived, Static> {
    static const rl::thread_id_t dynamic_thread_count = Dynamic;
    void before() { P::reset(); }
};

}  // namespace zap_model
