// SPDX-License-Identifier: MIT
// model/genmc/outside_tests.cpp - the hand-offs of an outside caller's
// search (src/zap/outside_wait.hpp, Protocol OC, step OC4a) under GenMC:
// the caller, a thread of no pool, takes a task of its own call out of a
// worker's ring or out of a queue past a task of another region, and puts
// that task back where the pool looks for it - into the ring owner's
// overflow queue, or back into the queue - while the workers take tasks
// from the same ring and queue. New here, against the isolated wait's
// search (isolation.hpp I3c-d, which keeps everything in its own worker):
// a thread that owns neither pushes into a worker's overflow queue, and a
// queue gets back from a taker tasks it already handed out.
//
// The searches are the header's own (Worker::claim_from and
// OutsideWait::take_newest_of, which OutsideWait::find calls); each task
// counts its runs in a plain int, so a task run twice or lost fails the
// assertion, and a task whose links or region a thread reads with no
// happens-before edge from their write fails GenMC's race check.
#include "harness.hpp"

#include <zap/isolation.hpp>
#include <zap/outside_wait.hpp>
#include <zap/worker.hpp>

using namespace zap_genmc;

namespace {

using Worker = zap::detail::Worker<P>;
using Region = zap::detail::Region;

// The outside caller's region (OC1): a count with caller_region_bit set.
constexpr std::uint64_t call = zap::detail::caller_region_bit | 1;

// After the other threads are joined: every task left (an empty queue
// cannot be acquired; a task left in one that could not be fails the count).
void drain(Queue& queue) {
    Task* cursor = nullptr;
    if (!queue.try_acquire_consumer(cursor)) return;
    while (Task* t = queue.pop(cursor)) t->run();
    queue.release_consumer(cursor);
}

void drain(Worker& worker) {
    while (Task* t = worker.run_buffer.pop()) t->run();
    drain(worker.run_queue);
}

// OC4a's take, as the caller makes it: a task of `call` only (OI1), run.
void run_own(Task* task) {
    if (task == nullptr) return;
    assert(Region::of(*task) == call && "the outside caller runs only its own call's tasks (OI1)");
    task->run();
}

}  // namespace

// outside_claim (ring of 4): the worker pushes a task of another region
// and then one of the caller's call into its ring, pops its ring and takes
// its overflow queue; meanwhile the caller claims from the ring's head
// (buffer.hpp step 8), passing the other task into the worker's overflow
// queue (OC4a, OI2), and runs its own. Each task once; the caller sees the
// region the worker stamped through the ring's tail (release store in
// push, acquire load in the read-ahead), and the worker the passed task's
// links through its overflow queue (the caller's release CAS in push, the
// worker's acquire exchange when it takes the queue).
void outside_claim() {
    Worker owner;
    Counted tasks[2];  // 0: another region's, 1: the call's
    auto caller = [&] {
        bool more = false;
        run_own(Worker::claim_from(owner, call, more, owner.run_queue));
    };
    pthread_t th = go(caller);
    Region::set(tasks[1], call);  // I2: stamped by the thread that schedules it
    for (auto& task : tasks) {
        List list = one(task);
        const bool fit = owner.run_buffer.push(list);
        assert(fit && "the ring has room");
    }
    if (Task* t = owner.run_buffer.pop()) t->run();
    drain(owner.run_queue);  // the passed task, if the caller passed it already
    join(th);
    drain(owner);
    expect_each_once(tasks);
}

// outside_queue: the global queue holds a task of another region and two of
// the caller's call; the caller searches it as OutsideWait::find does
// (OutsideWait::take_newest_of: under the consumer lock, the lists pushed
// meanwhile first, Queue step 3b; up to a task of its own, the task passed
// on the way put back in front, the rest left as the queue's cache), while
// a producer pushes a third task of the call and a worker consumes from the
// same queue into its ring. Each task once; the producer's list reaches the
// caller's swap or the worker's through push's release, and what the caller
// leaves reaches the worker through release_consumer's.
void outside_queue() {
    Queue global;
    Worker worker;
    Counted tasks[4];  // 0: another region's, 1-3: the call's (3: pushed meanwhile)
    for (int i = 1; i < 4; ++i) Region::set(tasks[i], call);
    Batch batch;
    for (int i = 0; i < 3; ++i) batch.push(tasks[i]);
    global.push(batch.take_list());
    auto caller = [&] {
        bool more = false;
        run_own(zap::detail::OutsideWait<P>::take_newest_of(global, call, more));
    };
    auto producer = [&] { global.push(one(tasks[3])); };
    pthread_t th = go(caller);
    pthread_t other = go(producer);
    Worker::Stole got{};
    if (worker.run_buffer.consume(global, got)) run(got.task);
    join(th);
    join(other);
    drain(worker);
    drain(global);
    expect_each_once(tasks);
}

ZAP_GENMC_MAIN()
