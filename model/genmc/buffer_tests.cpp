// SPDX-License-Identifier: MIT
// model/genmc/buffer_tests.cpp - the worker ring (src/zap/buffer.hpp) under
// GenMC: push, pop, steal-half, overflow's migrate-half, take_back and
// pop_back, each against thieves. The scenarios are the Relacy model's
// (model/model_tests.cpp, model/take_back_models.cpp); GenMC explores every
// execution RC11 or IMM allows instead of a bounded or random sample.
// Ring size: 2 unless the runner passes -DZAP_GENMC_RING=4.
#include "harness.hpp"

using namespace zap_genmc;

namespace {

// Near the 2^64 wrap, so the scenarios cross the integer and the slot wrap.
constexpr Buffer::Index near_wrap = ~Buffer::Index{0};

void push_each(Buffer& ring, Counted* tasks, int n) {
    for (int i = 0; i < n; ++i) {
        List list = one(tasks[i]);
        const bool fit = ring.push(list);
        assert(fit && "the ring has room");
    }
}

// A thief with its own ring: one steal, then it runs what it got.
void steal_and_run(Buffer& mine, Buffer& victim) {
    Buffer::Stole got{};
    if (!mine.steal(victim, got)) return;
    run(got.task);
    while (Task* t = mine.pop()) t->run();
}

// Not inlined into the loop below: clang then threads the loop's exit
// through take_back()'s CAS result with a `freeze`, an instruction GenMC's
// interpreter does not run ("Instruction not interpretable yet").
[[gnu::noinline]] Task* pop_back(Buffer& ring) { return ring.pop_back(); }

void drain(Buffer& ring) {
    while (Task* t = ring.pop()) t->run();
}

void drain(Queue& queue) {
    Task* cursor = nullptr;
    if (!queue.try_acquire_consumer(cursor)) return;
    while (Task* t = queue.pop(cursor)) t->run();
    queue.release_consumer(cursor);
}

}  // namespace

// buffer_steal (ring of 2, Relacy's buffer_steal): the owner pushes three
// tasks as one list: the ring fills, half of it migrates (push's CAS of
// head), and the migrated task and the one that did not fit go to the
// owner's overflow queue; then the owner pops. A thief steals meanwhile.
// Each task once; a thief's slot is published by push's release store of
// tail (buffer.hpp step 1).
void buffer_steal() {
    Buffer owner{near_wrap - 1};
    Buffer thief{near_wrap};
    Queue overflow;
    Counted tasks[3];
    auto t = [&] { steal_and_run(thief, owner); };
    pthread_t th = go(t);
    Batch batch;
    for (auto& task : tasks) batch.push(task);
    List list = batch.take_list();
    if (!owner.push(list)) overflow.push(list);
    if (Task* task = owner.pop()) task->run();
    join(th);
    drain(owner);
    drain(overflow);
    expect_each_once(tasks);
}

// overflow_migrate (ring of 2): as buffer_steal, one push per task (as a
// worker's schedule() calls come), so the third push migrates while the
// thief may be mid-steal.
void overflow_migrate() {
    Buffer owner{near_wrap - 1};
    Buffer thief{near_wrap};
    Queue overflow;
    Counted tasks[3];
    auto t = [&] { steal_and_run(thief, owner); };
    pthread_t th = go(t);
    for (auto& task : tasks) {
        List list = one(task);
        if (!owner.push(list)) overflow.push(list);
    }
    drain(owner);
    join(th);
    drain(owner);
    drain(overflow);
    expect_each_once(tasks);
}

// Steal-half with a ring of 4: the owner pushes three tasks, two thieves
// steal (each takes half, rounded up, one CAS per task: RB4), the second may
// steal from the first. Each task once; the first thief's copies into its
// own ring are published by its release store of tail.
void steal_half() {
    Buffer owner{near_wrap};
    Buffer thieves[2] = {Buffer{near_wrap - 2}, Buffer{near_wrap - 2}};
    Counted tasks[3];
    push_each(owner, tasks, 3);
    auto a = [&] { steal_and_run(thieves[0], owner); };
    auto b = [&] {
        Buffer::Stole got{};
        if (thieves[1].steal(thieves[0], got) || thieves[1].steal(owner, got)) {
            run(got.task);
            drain(thieves[1]);
        }
    };
    pthread_t ta = go(a);
    pthread_t tb = go(b);
    join(ta);
    join(tb);
    drain(owner);
    expect_each_once(tasks);
}

// buffer_consume (ring of 2, Relacy's buffer_consume): three tasks in a
// queue; the owner consumes them into its ring (two slots, one to run) and
// pops the rest; two thieves steal, from the owner or from each other.
// Publication of the copied slots is consume's and steal's release store of
// tail (steps 3 and 4).
void buffer_consume() {
    Buffer rings[3] = {Buffer{near_wrap}, Buffer{near_wrap - 1}, Buffer{near_wrap}};
    Queue queue;
    Counted tasks[3];
    Batch batch;
    for (auto& task : tasks) batch.push(task);
    queue.push(batch.take_list());
    auto thief = [&](int me) {
        Buffer::Stole got{};
        if (rings[me].steal(rings[0], got) || rings[me].steal(rings[3 - me], got)) {
            run(got.task);
            drain(rings[me]);
        }
    };
    auto a = [&] { thief(1); };
    auto b = [&] { thief(2); };
    pthread_t ta = go(a);
    pthread_t tb = go(b);
    Buffer::Stole got{};
    if (rings[0].consume(queue, got)) run(got.task);
    drain(rings[0]);
    join(ta);
    join(tb);
    for (auto& r : rings) drain(r);
    drain(queue);
    expect_each_once(tasks);
}

// take_back_nested (ring of 4): three pushes taken back newest first against
// a thief stealing half (Relacy's take_back_nested). GenMC found that 5f's
// relaxed CAS lets this run a task twice under RC11 and IMM (docs/orderings.md).
void take_back_nested() {
    Buffer owner{near_wrap};
    Buffer thief{near_wrap - 2};
    Counted tasks[3];
    auto t = [&] { steal_and_run(thief, owner); };
    pthread_t th = go(t);
    push_each(owner, tasks, 3);
    for (int i = 2; i >= 0; --i)
        if (owner.take_back(tasks[i])) tasks[i].run();
    join(th);
    drain(owner);
    expect_each_once(tasks);
}

// take_back_last: one task; the owner takes it back against two thieves:
// exactly one of the three gets it (5f's CAS against the thieves' CAS).
void take_back_last() {
    Buffer owner{near_wrap};
    Buffer thieves[2] = {Buffer{near_wrap}, Buffer{near_wrap}};
    Counted tasks[1];
    push_each(owner, tasks, 1);
    auto a = [&] { steal_and_run(thieves[0], owner); };
    auto b = [&] { steal_and_run(thieves[1], owner); };
    pthread_t ta = go(a);
    pthread_t tb = go(b);
    if (owner.take_back(tasks[0])) tasks[0].run();
    join(ta);
    join(tb);
    drain(owner);
    expect_each_once(tasks);
}

// take_back_after_steal: two tasks; thief A steals, thief B steals after A
// (it waits for A's flag), the owner takes the second task back: the seq_cst
// cycle of step 5 (5c, 5d, the thief's two loads, the steal CAS).
void take_back_after_steal() {
    Buffer owner{near_wrap};
    Buffer thieves[2] = {Buffer{near_wrap}, Buffer{near_wrap}};
    Counted tasks[2];
    std::atomic<int> first_stolen{0};
    push_each(owner, tasks, 2);
    auto a = [&] {
        steal_and_run(thieves[0], owner);
        first_stolen.store(1, std::memory_order_relaxed);  // timing only: orders nothing
    };
    auto b = [&] {
        if (first_stolen.load(std::memory_order_relaxed) == 0) return;
        steal_and_run(thieves[1], owner);
    };
    pthread_t ta = go(a);
    pthread_t tb = go(b);
    if (owner.take_back(tasks[1])) tasks[1].run();
    join(ta);
    join(tb);
    drain(owner);
    expect_each_once(tasks);
}

// pop_back_drain (ring of 4): three pushes popped newest first (step 6, a
// helping wait's order) against a thief stealing half.
void pop_back_drain() {
    Buffer owner{near_wrap};
    Buffer thief{near_wrap - 2};
    Counted tasks[3];
    auto t = [&] { steal_and_run(thief, owner); };
    pthread_t th = go(t);
    push_each(owner, tasks, 3);
    while (Task* task = pop_back(owner)) task->run();
    join(th);
    drain(owner);
    expect_each_once(tasks);
}

ZAP_GENMC_MAIN()
