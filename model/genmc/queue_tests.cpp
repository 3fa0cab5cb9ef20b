// SPDX-License-Identifier: MIT
// model/genmc/queue_tests.cpp - the intrusive queue (src/zap/queue.hpp)
// under GenMC: producers push lists, consumers take the try-lock, pop and
// hand the cache on. The scenario is the Relacy model's `queue`
// (model/model_tests.cpp).
#include "harness.hpp"

using namespace zap_genmc;

namespace {

// Takes the consumer role if free, runs one task, gives the role back
// (what is left stays in the cache for the next consumer, Q1).
void consume_one(Queue& queue) {
    Task* cursor = nullptr;
    if (!queue.try_acquire_consumer(cursor)) return;
    run(queue.pop(cursor));
    queue.release_consumer(cursor);
}

}  // namespace

// queue: T0 pushes {a, b} and consumes one, T1 pushes {c} and consumes one,
// T2 consumes twice; then the rest is drained. Every task exactly once, no
// race on the links (published by push's release CAS, steps 1-3) or on the
// cache (handed over by release_consumer's release, step 4).
void queue() {
    Queue q;
    Counted tasks[3];
    auto t0 = [&] {
        Batch b;
        b.push(tasks[0]);
        b.push(tasks[1]);
        q.push(b.take_list());
        consume_one(q);
    };
    auto t1 = [&] {
        q.push(one(tasks[2]));
        consume_one(q);
    };
    auto t2 = [&] {
        consume_one(q);
        consume_one(q);
    };
    pthread_t a = go(t0), b = go(t1), c = go(t2);
    join(a);
    join(b);
    join(c);
    Task* cursor = nullptr;
    if (q.try_acquire_consumer(cursor)) {
        while (Task* t = q.pop(cursor)) t->run();
        q.release_consumer(cursor);
    }
    expect_each_once(tasks);
}

// queue_swap: a consumer that pops twice in one turn while a producer
// pushes: when its cursor runs dry, pop() swaps the stack out (step 3) and
// must acquire the links of the list pushed meanwhile. T0 pushes {a} and
// takes the consumer role; T1 pushes {b}; each task exactly once.
void queue_swap() {
    Queue q;
    Counted tasks[2];
    q.push(one(tasks[0]));
    auto consumer = [&] {
        Task* cursor = nullptr;
        if (!q.try_acquire_consumer(cursor)) return;
        for (int i = 0; i < 2; ++i)
            if (Task* t = q.pop(cursor)) t->run();
        q.release_consumer(cursor);
    };
    auto producer = [&] { q.push(one(tasks[1])); };
    pthread_t c = go(consumer), p = go(producer);
    join(c);
    join(p);
    Task* cursor = nullptr;
    if (q.try_acquire_consumer(cursor)) {
        while (Task* t = q.pop(cursor)) t->run();
        q.release_consumer(cursor);
    }
    expect_each_once(tasks);
}

ZAP_GENMC_MAIN()
