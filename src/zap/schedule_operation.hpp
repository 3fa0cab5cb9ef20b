// SPDX-License-Identifier: MIT
// zap/schedule_operation.hpp - the operation state of a schedule sender
// (std::execution, execution.hpp) without std::execution: the intrusive
// task it hands to the pool, and who completes it, and when. It is apart
// from execution.hpp so that the Relacy model, which cannot compile stdexec,
// checks the very template the scheduler uses (model/execution_models.cpp).
//
// The operation state is the pool's intrusive task, as the awaiter of
// `co_await pool.schedule()` is (schedule_awaiter.hpp): stdexec keeps an
// operation state in place from connect() until it completes, so the task
// lives in memory the caller already has, and a schedule allocates nothing.
//
// Protocol X (one operation; Derived supplies the receiver's side):
//   X1. start(): if the receiver's stop token already reports a stop
//       request, complete with set_stopped() at once, on the calling thread,
//       and schedule nothing.
//   X2. Otherwise push the task to the pool: schedule(task), from a worker
//       into its own ring, from any other thread into the global queue
//       (Protocol A1). The push is start()'s last touch of the operation
//       state: from the moment it is published a worker may complete the
//       operation, and the receiver may then end it.
//   X3. A worker takes the task and calls its callback (task.hpp: the pool
//       never touches a task after that call). The callback asks the stop
//       token once: a stop request seen there completes with set_stopped(),
//       otherwise with set_value(), on that worker. The completion is the
//       callback's last touch of the operation state.
//
// Invariants:
//   X4 (exactly one completion): X1 returns after its completion without
//      pushing, and a pushed task runs exactly once (P2), completing once in
//      X3; nothing else completes.
//   X5 (no touch after the completion): X1 and X3 end with the completion;
//      X2's push is the last touch before the worker's.
//   X6 (a stop request that happens before the worker reaches the task
//      completes it with set_stopped()): X3 asks when the worker has the
//      task, so a request that happens before that question is seen by it
//      (coherence on the stop source's state), and what the requester
//      wrote before it is visible to the receiver's set_stopped() (the stop
//      source's own rule: request_stop() synchronizes with a
//      stop_requested() that returns true). A request that comes after X3
//      asked changes nothing: the operation has run.
//
// Why the stop token is polled, and no stop callback is registered: the
// task sits in the pool's queues from X2 until a worker takes it, and those
// queues cannot give a task back (a ring's slot is claimed by a CAS, the
// global queue is a lock-free list). So nothing can complete the operation
// before a worker reaches the task - completing earlier would leave the
// pool a task in memory the receiver may have freed - and a stop callback
// could only set a flag for X3 to read. The stop token already is that
// flag; a callback would add a registration (with stdexec's inplace stop
// source, a lock) and a deregistration to every schedule, for nothing. The
// model (model/execution_models.cpp) shows what completing early does: the
// seed stop-after-push completes in start() after X2 when it sees a stop
// request, and the model reports two completions and the pool's touch of
// freed memory.
//
// After shutdown(): X2 from a thread that is not running a task of the pool
// breaks schedule()'s rule; debug builds abort naming it, release builds run
// the task on the calling thread, so the operation completes inside start().
// A task still queued at shutdown is not dropped: it runs before join()
// returns (P2), in a worker's sweep (B2) or in join()'s drain on the joining
// thread (B5), and the operation completes there.
#pragma once

#include <zap/task.hpp>

namespace zap {

template <class Platform>
class BasicThreadPool;  // thread_pool.hpp

namespace detail {

// Derived provides, for X1 and X3:
//   bool stop_requested() const noexcept;   the receiver's stop token
//   void set_value() noexcept;              complete; the operation may end inside
//   void set_stopped() noexcept;            likewise
template <class Platform, class Derived>
class ScheduleOperation : private BasicTask<Platform> {
public:
    explicit ScheduleOperation(BasicThreadPool<Platform>& pool) noexcept
        : BasicTask<Platform>(&run_task), pool_(pool) {}
    // Scheduled, it is linked into the pool's queues: it must not move.
    ScheduleOperation(const ScheduleOperation&) = delete;
    ScheduleOperation& operator=(const ScheduleOperation&) = delete;

    // X1-X2.
    void start() noexcept {
        if (derived().stop_requested()) {
            derived().set_stopped();  // X1: the last touch
            return;
        }
        pool_.schedule(static_cast<BasicTask<Platform>&>(*this));  // X2: the last touch
    }

private:
    Derived& derived() noexcept { return static_cast<Derived&>(*this); }

    // X3.
    static void run_task(BasicTask<Platform>* task) noexcept {
        Derived& self = static_cast<ScheduleOperation*>(task)->derived();
        if (self.stop_requested()) {
            self.set_stopped();  // the last touch
        } else {
            self.set_value();  // the last touch
        }
    }

    BasicThreadPool<Platform>& pool_;
};

// What BasicThreadPool::get_scheduler() returns is defined by execution.hpp
// (a partial specialization of this template); without that header, a call
// instantiates this one and stops at its message.
template <class Pool>
struct SchedulerFor {
    static_assert(sizeof(Pool) == 0,
                  "zap: get_scheduler() needs #include <zap/execution.hpp> (zap's std::execution support, "
                  "which needs stdexec on the include path)");
};

}  // namespace detail
}  // namespace zap
