// SPDX-License-Identifier: MIT
// model/wait_for_models.cpp - Relacy models of the timed waits
// (WaitGroup::wait_for: step 5 of src/zap/wait_group.hpp, T1-T4, W1, W2).
//
// Relacy decides when a timed futex_wait times out, at any point while the
// sleeper is blocked (deadline.hpp: the deadline takes the Platform's word
// for it), so the models pass a timeout of an hour and every timeout they
// explore is one Relacy chose: the timeout races every step of the wake.
// Spurious wake-ups are off: an untimed wait that sleeps through its wake-up
// is a deadlock.
//
//   wait_for_outside    no pool: a thread's wait_for races another thread's
//                       last done(); on false it waits again (wait()); then it
//                       frees the group at once. T2, W1 (a done() that touches
//                       the freed group is reported), the work published.
//   wait_for_helping    max_threads 1: a task's wait_for (a helping wait:
//                       nothing to run, so it arms the group and sleeps on its
//                       helper word) races the last done() from outside the
//                       pool; on false the same worker waits again with
//                       wait(), which must be woken (the group re-armed, W2);
//                       then the task frees the group at once (T3b, W1).
//   wait_for_pool_gone  max_threads 1: a task's wait_for times out (nobody
//                       completes the group meanwhile), the task ends and the
//                       pool is destroyed; then the group's last done() and a
//                       poll. A group that still named the freed worker's
//                       helper word would be woken through it (W2, HW3).
#include "model_registry.hpp"

#include <chrono>

namespace {

using namespace zap_model;

constexpr std::chrono::nanoseconds an_hour = std::chrono::hours(1);

// wait_for_outside.
struct WaitForOutside : Model<WaitForOutside, 2> {
    WaitGroup* group = nullptr;
    rl::var<int> work{0};
    void before() {
        Model::before();
        group = new WaitGroup;  // Relacy's heap: a touch after it is freed is reported
        group->add(1);
    }
    void thread(unsigned index) {
        if (index == 0) {
            if (!group->wait_for(an_hour)) group->wait();
            RL_ASSERT(work($).load() == 1);  // ordered by done()'s release (step 2)
            delete group;
        } else {
            work($).store(1);
            group->done();
        }
    }
};

// A task that waits for a heap group with wait_for, waits again if that
// timed out (or, without `wait_again`, reports the timeout and leaves the
// group to the model), then frees the group and reports to `finished`.
struct TimedWaiter : Task {
    WaitGroup* group = new WaitGroup;
    WaitGroup* finished;
    bool wait_again;
    rl::atomic<int> waiting{0};
    rl::var<int> work{0};
    rl::var<int> seen{0};
    rl::var<int> timed_out{0};
    TimedWaiter(WaitGroup& finished_group, bool again) : Task(&run), finished(&finished_group), wait_again(again) {
        group->add(1);
        finished->add(1);
    }
    static void run(Task* t) {
        auto* self = static_cast<TimedWaiter*>(t);
        self->waiting($).store(1, rl::mo_relaxed);  // timing only: the outside thread's spin
        if (self->group->wait_for(an_hour)) {
            self->finish();
        } else if (self->wait_again) {
            self->group->wait();
            self->finish();
        } else {
            self->timed_out($).store(1);
        }
        self->finished->done();
    }
    void finish() {
        seen($).store(work($).load());  // ordered by done()'s release (step 2)
        delete group;  // at once: W1
        group = nullptr;
    }
};

// Timing only: spins until the waiter is about to wait, then yields a while
// more, so that the waiter often falls asleep before the done() and its
// timeout (a chance at every scheduling point while it sleeps) can come
// first. Without the yields the done() came first in all of 100,000 random
// executions of wait_for_helping: not one timed out.
void await_waiting(TimedWaiter& w) {
    while (w.waiting($).load(rl::mo_relaxed) == 0) rl::yield(1, $);
    for (int i = 0; i < 30; ++i) rl::yield(1, $);
}

// wait_for_helping.
struct WaitForHelping : Model<WaitForHelping, 1, 1> {
    void thread(unsigned) {
        Pool* pool = new Pool(model_config(1));
        WaitGroup finished;
        TimedWaiter waiter(finished, true);
        WaitGroup* group = waiter.group;
        pool->schedule(waiter);
        await_waiting(waiter);
        waiter.work($).store(1);
        group->done();  // the waiter may free it from here on
        finished.wait();
        RL_ASSERT(waiter.seen($).load() == 1);
        delete pool;
    }
};

// wait_for_pool_gone.
struct WaitForPoolGone : Model<WaitForPoolGone, 1, 1> {
    void thread(unsigned) {
        Pool* pool = new Pool(model_config(1));
        WaitGroup finished;
        TimedWaiter waiter(finished, false);
        pool->schedule(waiter);
        finished.wait();
        RL_ASSERT(waiter.timed_out($).load() == 1);  // nobody could complete the group
        delete pool;  // the worker, and its helper word, are freed
        waiter.group->done();
        RL_ASSERT(waiter.group->wait_for(std::chrono::nanoseconds{0}));
        delete waiter.group;
    }
};

}  // namespace

ZAP_MODEL_TEST(wait_for_outside, WaitForOutside, false, P::SpawnFailure::never,
               "wait_for outside a pool against the last done(): true only after WAKING clears, no lost wake-up after a timeout");
ZAP_MODEL_TEST(wait_for_helping, WaitForHelping, false, P::SpawnFailure::never,
               "a worker's wait_for against the last done() from outside: disarmed on timeout and re-armed by the next wait, true only after WAKING clears");
ZAP_MODEL_TEST(wait_for_pool_gone, WaitForPoolGone, false, P::SpawnFailure::never,
               "a worker's wait_for times out, the pool goes: the last done() touches no helper word");
