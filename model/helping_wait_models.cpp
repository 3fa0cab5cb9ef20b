// SPDX-License-Identifier: MIT
// model/helping_wait_models.cpp - Relacy models of the helping wait
// (Protocol H, src/zap/helping_wait.hpp).
//
// Every model runs with spurious wake-ups off: a helper that sleeps through
// the wake it needed stays asleep, and Relacy reports a deadlock. The waiting
// task signals `waiting` just before WaitGroup::wait(), so the wake races
// every step of H3-H5 (arm, count idle, enter, re-read, futex).
//
//   help_done_outside  a worker waits for a group whose last done() comes
//                      from a thread outside the pool, with nothing to run:
//                      no lost wake-up between that done() and the helper
//                      falling asleep (HW1, K2).
//   help_new_work      max_threads 1: the only worker waits for a group, and
//                      a thread outside the pool schedules the task that
//                      completes it. Only the waiter can run it: asleep
//                      while it is runnable would be a deadlock (HW1, HW2, K1).
//   help_two_waiters   max_threads 2: both workers wait, each on its own
//                      group, then the outside thread schedules both
//                      completing tasks.
//   help_spawn_fails   max_threads 2, every spawn after the first fails: the
//                      completing task's notify tries to spawn the second
//                      worker and fails; A7's re-run finds the notification
//                      still set, and must wake the sleeping helper (K1),
//                      the one worker that can run it.
//   help_shutdown      max_threads 2: both workers wait, each on its own
//                      group; the outside thread schedules both completing
//                      tasks, then shuts the pool down. Each waiter, its
//                      wait returned, blocks (without helping) until both
//                      completing tasks have run, so a task left queued
//                      behind a helper asleep since before shutdown() (K3
//                      wakes it) is a deadlock, not a job for the sweep or
//                      the drain.
// Each model then waits (outside the pool) for the waiting tasks to end,
// checks what they saw, and deletes the pool: a late touch of the pool, or of
// a group freed by its waiter, is reported.
#include "model_registry.hpp"

namespace {

using namespace zap_model;

template <std::uint32_t Workers>
zap::Config workers() {
    return model_config(Workers);
}

// A task that announces it is about to wait, waits for its group, then
// reports to `finished`; the group is on the task's own frame-equivalent
// (heap) and freed by the model after everything ended.
struct Waiter : Task {
    WaitGroup group;
    WaitGroup* finished = nullptr;
    rl::atomic<int> waiting{0};
    rl::var<int> seen{0};  // the completing task's write, read after wait()
    rl::var<int> work{0};
    Waiter() : Task(&run) {}
    explicit Waiter(void (*callback)(Task*)) : Task(callback) {}
    static void run(Task* t) {
        auto* self = static_cast<Waiter*>(t);
        self->waiting($).store(1, rl::mo_relaxed);  // timing only: the outside thread's spin
        self->group.wait();
        self->seen($).store(self->work($).load());  // ordered by done()'s release (step 2)
        self->finished->done();
    }
};

// Completes a waiter's group after writing its work.
struct Completer : Task {
    Waiter* waiter = nullptr;
    Completer() : Task(&run) {}
    explicit Completer(void (*callback)(Task*)) : Task(callback) {}
    static void run(Task* t) {
        auto* self = static_cast<Completer*>(t);
        self->waiter->work($).store(1);
        self->waiter->group.done();
    }
};

void await_waiting(Waiter& w) {
    while (w.waiting($).load(rl::mo_relaxed) == 0) rl::yield(1, $);
}

// help_done_outside: W waits on a worker, the outside thread calls done().
struct HelpDoneOutside : Model<HelpDoneOutside, 1, 1> {
    void thread(unsigned) {
        Pool* pool = new Pool(workers<1>());
        WaitGroup finished;
        Waiter waiter;
        waiter.finished = &finished;
        waiter.group.add(1);
        finished.add(1);
        pool->schedule(waiter);
        await_waiting(waiter);
        waiter.work($).store(1);
        waiter.group.done();
        finished.wait();
        RL_ASSERT(waiter.seen($).load() == 1);
        delete pool;
    }
};

// help_new_work / help_two_waiters: the outside thread schedules the
// completing tasks once every waiter is about to wait.
template <std::uint32_t Workers>
struct HelpNewWork : Model<HelpNewWork<Workers>, 1, Workers> {
    void thread(unsigned) {
        Pool* pool = new Pool(workers<Workers>());
        WaitGroup finished;
        Waiter waiters[Workers];
        Completer completers[Workers];
        finished.add(Workers);
        for (std::uint32_t i = 0; i < Workers; ++i) {
            waiters[i].finished = &finished;
            waiters[i].group.add(1);
            completers[i].waiter = &waiters[i];
            pool->schedule(waiters[i]);
        }
        for (auto& w : waiters) await_waiting(w);
        for (auto& c : completers) pool->schedule(c);
        finished.wait();
        for (auto& w : waiters) RL_ASSERT(w.seen($).load() == 1);
        delete pool;
    }
};

// help_shutdown: the waiters block after their wait until both completers
// have run; the completers count themselves in `ran`.
struct BlockingWaiter : Waiter {
    rl::atomic<int>* ran = nullptr;
    BlockingWaiter() : Waiter(&run) {}
    static void run(Task* t) {
        auto* self = static_cast<BlockingWaiter*>(t);
        self->waiting($).store(1, rl::mo_relaxed);
        self->group.wait();
        while ((*self->ran)($).load(rl::mo_relaxed) < 2) rl::yield(1, $);  // a block no pool can see
        self->finished->done();
    }
};

struct CountingCompleter : Completer {
    rl::atomic<int>* ran = nullptr;
    CountingCompleter() : Completer(&run) {}
    static void run(Task* t) {
        auto* self = static_cast<CountingCompleter*>(t);
        (*self->ran)($).fetch_add(1, rl::mo_relaxed);
        self->waiter->group.done();
    }
};

struct HelpShutdown : Model<HelpShutdown, 1, 2> {
    void thread(unsigned) {
        Pool* pool = new Pool(workers<2>());
        WaitGroup finished;
        rl::atomic<int> ran{0};
        BlockingWaiter waiters[2];
        CountingCompleter completers[2];
        finished.add(2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            waiters[i].finished = &finished;
            waiters[i].ran = &ran;
            waiters[i].group.add(1);
            completers[i].waiter = &waiters[i];
            completers[i].ran = &ran;
            // One at a time: the first waiter's wait takes no task from the
            // global queue (it owes no notification), so each runs on its
            // own worker and neither blocks inside the other's wait.
            pool->schedule(waiters[i]);
            await_waiting(waiters[i]);
        }
        for (auto& c : completers) pool->schedule(c);
        pool->shutdown();
        finished.wait();
        delete pool;
    }
};

// help_spawn_fails: one waiter on a pool of two whose second spawn fails.
struct HelpSpawnFails : Model<HelpSpawnFails, 1, 1> {
    void thread(unsigned) {
        Pool* pool = new Pool(workers<2>());
        WaitGroup finished;
        Waiter waiter;
        Completer completer;
        waiter.finished = &finished;
        waiter.group.add(1);
        completer.waiter = &waiter;
        finished.add(1);
        pool->schedule(waiter);  // spawns the first worker
        await_waiting(waiter);
        pool->schedule(completer);  // its spawn fails (A7)
        finished.wait();
        RL_ASSERT(waiter.seen($).load() == 1);
        delete pool;
    }
};

using HelpNewWork1 = HelpNewWork<1>;
using HelpNewWork2 = HelpNewWork<2>;

}  // namespace

ZAP_MODEL_TEST(help_done_outside, HelpDoneOutside, false, P::SpawnFailure::never,
               "a helping waiter with nothing to run is woken by the last done() from outside the pool");
ZAP_MODEL_TEST(help_new_work, HelpNewWork1, false, P::SpawnFailure::never,
               "max_threads 1: the sleeping helper is woken for work only it can run");
ZAP_MODEL_TEST(help_spawn_fails, HelpSpawnFails, false, P::SpawnFailure::after_first,
               "a failed spawn's notification wakes the sleeping helper, the one worker left (A7, K1)");
ZAP_MODEL_TEST(help_shutdown, HelpShutdown, false, P::SpawnFailure::never,
               "shutdown() wakes both sleeping helpers: neither task is left queued behind one (K3)");
ZAP_MODEL_TEST(help_two_waiters, HelpNewWork2, false, P::SpawnFailure::never,
               "max_threads 2, both workers wait: both are woken for the work that completes their groups");
