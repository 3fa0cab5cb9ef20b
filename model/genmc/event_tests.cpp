// SPDX-License-Identifier: MIT
// model/genmc/event_tests.cpp - the futex event (src/zap/event.hpp) under
// GenMC: the Relacy models event_notify, event_two_sleepers,
// event_late_notify and event_three_waiters (model/model_tests.cpp). Run
// with --liveness and spurious wake-ups off: a waiter nobody wakes spins for
// ever in the futex model, and GenMC reports it (a lost wake-up).
#include "harness.hpp"

#include <zap/event.hpp>

using namespace zap_genmc;

using Event = zap::detail::Event<P>;

// One notify, one waiter: the waiter returns and sees the notifier's write
// (post's release CAS, the waiter's acquire CAS, step 1).
void event_notify() {
    Event event;
    int data = 0;
    auto waiter = [&] {
        event.wait();
        assert(data == 1 && "the notification carries the notifier's write");
    };
    pthread_t w = go(waiter);
    data = 1;
    event.notify();
    join(w);
}

// Two waiters; one thread notifies, then shuts down: both return (E3).
void event_two_sleepers() {
    Event event;
    auto waiter = [&] { event.wait(); };
    pthread_t a = go(waiter), b = go(waiter);
    event.notify();
    event.shutdown();
    join(a);
    join(b);
}

// Two waiters; notify and shutdown from different threads: both return
// (E2: a notify after shutdown must not replace SHUTDOWN).
void event_late_notify() {
    Event event;
    auto waiter = [&] { event.wait(); };
    auto notifier = [&] { event.notify(); };
    pthread_t a = go(waiter), b = go(waiter), n = go(notifier);
    event.shutdown();
    join(n);
    join(a);
    join(b);
}

// Three waiters, two notifies, then shutdown: all return.
void event_three_waiters() {
    Event event;
    auto waiter = [&] { event.wait(); };
    pthread_t a = go(waiter), b = go(waiter), c = go(waiter);
    event.notify();
    event.notify();
    event.shutdown();
    join(a);
    join(b);
    join(c);
}

// A wait() ended by SHUTDOWN synchronizes with shutdown() (Event's step 1;
// Relacy's event_shutdown_publishes, model/mutation/scenarios.cpp).
void event_shutdown_publishes() {
    Event event;
    int data = 0;
    auto waiter = [&] {
        event.wait();
        assert(data == 1 && "shutdown carries the shutter's write");
    };
    pthread_t w = go(waiter);
    data = 1;
    event.shutdown();
    join(w);
}

ZAP_GENMC_MAIN()
