// SPDX-License-Identifier: MIT
// model/execution_models.cpp - Relacy models of a schedule sender's
// operation state (Protocol X, src/zap/schedule_operation.hpp): the template
// execution.hpp's scheduler uses, with a receiver of the model's own (the
// model cannot compile stdexec). The receiver reads a stop flag that stands
// for the stop source (a request is a seq_cst store, as stdexec's
// inplace_stop_source's; stop_requested() an acquire load), and on its
// completion it frees the operation state at once, as a receiver may: a
// later touch of the state is reported (Relacy's heap), and so is a second
// completion. Spurious wake-ups are off: a completion that never comes is a
// deadlock.
//
//   schedule_stop_race     max_threads 1: the owner starts the operation
//                          from outside the pool while a second thread
//                          requests stop at any moment. Exactly one
//                          completion (X4); set_value() only on the
//                          worker; set_stopped() on the worker, or in
//                          start() when the request came first (X1); nothing
//                          touched after it (X5).
//   schedule_stop_first    the owner requests stop itself, then starts:
//                          the request happens before start(), so the
//                          completion is set_stopped(), inside start(), and
//                          nothing is scheduled (X1, X6).
//   schedule_from_worker   max_threads 2: a task of the pool starts the
//                          operation (the push goes to its worker's ring,
//                          where the other worker may steal it) while the
//                          outside thread requests stop: X4 and X5
//                          with a thief.
#include "model_registry.hpp"

#include <zap/schedule_operation.hpp>

#include <optional>

namespace {

using namespace zap_model;

enum Completion { none = 0, value = 1, stopped = 2 };

// What the receivers record, and the stand-in for the stop source.
struct Outcome {
    rl::atomic<int> stop_requested{0};
    rl::atomic<int> completions{0};
    rl::var<int> how{none};
    rl::var<int> on_worker{0};  // the completing thread was a worker of the pool
    WaitGroup done;
};

// The operation state: ScheduleOperation with the model's receiver. Its one
// field is a Cell, so a read of the freed state is reported.
class Operation : public zap::detail::ScheduleOperation<P, Operation> {
public:
    Operation(Pool& pool, Outcome& outcome) : ScheduleOperation(pool), pool_(&pool), outcome_(&outcome) {}

    bool stop_requested() const noexcept { return outcome_.read()->stop_requested($).load(rl::mo_acquire) != 0; }
    void set_value() noexcept { complete(value); }
    void set_stopped() noexcept { complete(stopped); }

private:
    void complete(Completion how) noexcept {
        Outcome* outcome = outcome_.read();
        const bool worker = pool_.read()->worker_index().has_value();
        // The receiver ends the operation state at once.
        delete this;
        if (outcome->completions($).fetch_add(1, rl::mo_relaxed) != 0) {
            RL_ASSERT(!"an operation completed twice");
            return;
        }
        outcome->how($).store(how);
        outcome->on_worker($).store(worker ? 1 : 0);
        outcome->done.done();
    }

    P::Cell<Pool*> pool_;
    P::Cell<Outcome*> outcome_;
};

// X4; set_value() on a worker (X3). (set_stopped() comes from a worker,
// or from start() on the owner's thread: X1.)
void check(Outcome& outcome) {
    outcome.done.wait();
    RL_ASSERT(outcome.completions($).load(rl::mo_relaxed) == 1);
    if (outcome.how($).load() == value) RL_ASSERT(outcome.on_worker($).load() == 1);
}

// schedule_stop_race: T0 owns the pool and starts; T1 requests stop.
struct StopRace : Model<StopRace, 2, 1> {
    Outcome outcome;
    void thread(unsigned index) {
        if (index == 1) {
            outcome.stop_requested($).store(1, rl::mo_seq_cst);
            return;
        }
        Pool* pool = new Pool(model_config(1));
        outcome.done.add();
        (new Operation(*pool, outcome))->start();
        check(outcome);
        delete pool;
    }
};

// schedule_stop_first: the request happens before start().
struct StopFirst : Model<StopFirst, 1, 1> {
    Outcome outcome;
    void thread(unsigned) {
        Pool* pool = new Pool(model_config(1));
        outcome.done.add();
        outcome.stop_requested($).store(1, rl::mo_seq_cst);
        (new Operation(*pool, outcome))->start();
        RL_ASSERT(outcome.completions($).load(rl::mo_relaxed) == 1);  // X1: inside start()
        check(outcome);
        RL_ASSERT(outcome.how($).load() == stopped);  // X6
        RL_ASSERT(outcome.on_worker($).load() == 0);
        delete pool;
    }
};

// schedule_from_worker: a task of the pool starts the operation.
struct FromWorker : Model<FromWorker, 2, 2> {
    Outcome outcome;
    Pool* pool = nullptr;
    struct Starter : Task {
        FromWorker* model;
        explicit Starter(FromWorker* m) : Task(&run), model(m) {}
        static void run(Task* t) {
            FromWorker* m = static_cast<Starter*>(t)->model;
            (new Operation(*m->pool, m->outcome))->start();
        }
    };
    void thread(unsigned index) {
        if (index == 1) {
            outcome.stop_requested($).store(1, rl::mo_seq_cst);
            return;
        }
        pool = new Pool(model_config(2));
        outcome.done.add();
        Starter starter(this);
        pool->schedule(starter);
        check(outcome);
        delete pool;
    }
};

}  // namespace

ZAP_MODEL_TEST(schedule_stop_race, StopRace, false, P::SpawnFailure::never,
               "a stop request racing the worker: one completion, value only on a worker, no touch after it");
ZAP_MODEL_TEST(schedule_stop_first, StopFirst, false, P::SpawnFailure::never,
               "a stop requested before start() completes with set_stopped() inside start(), nothing scheduled");
ZAP_MODEL_TEST(schedule_from_worker, FromWorker, false, P::SpawnFailure::never,
               "started from a task of a two-worker pool (stealable) while stop is requested: one completion");
