// SPDX-License-Identifier: MIT
// model/parker_models.cpp - Relacy models of the Parker (parker.hpp), the
// Lock (lock.hpp) and the HandoffQueue under Mailbox and ObjectPool
// (handoff_queue.hpp), on the same templates production uses.
//
// Values are ints; every model counts in rl::var where each value ended up
// (received, handed back by close(), refused to its sender) and checks in
// after() that each is in exactly one place (HQ3). A wake-up that is lost
// leaves a thread parked for ever: with spurious wake-ups off that is a
// Relacy DEADLOCK. The Parker models run with spurious wake-ups on, as the
// Parker must absorb them (PK2): a lost unpark then shows as a thread that
// spins through spurious returns for ever (LIVELOCK) or never returns.
#include "model_registry.hpp"

#include <chrono>
#include <optional>
#include <vector>

namespace {

using namespace zap_model;

using Parker = zap::BasicParker<P>;
using Lock = zap::detail::Lock<P>;
using Mailbox = zap::BasicMailbox<P, int>;
using ObjectPool = zap::BasicObjectPool<P, int>;

// Long enough that only Relacy's choice, never the wall clock, ends a wait.
constexpr std::chrono::nanoseconds forever = std::chrono::hours(1);

// ---- Parker ------------------------------------------------------------------
// One unpark, one park, either order; the owner must return and see the
// waker's write (PK2).
struct ParkerUnparkModel : Model<ParkerUnparkModel, 2> {
    Parker parker;
    rl::var<int> data{0};
    void thread(unsigned index) {
        if (index == 0) {
            data($).store(1);
            parker.unpark();
        } else {
            parker.park();
            RL_ASSERT(data($).load() == 1);
        }
    }
};

// park_for against one unpark: whether it returns true (then it sees the
// write) or times out, exactly one token is consumed: by park_for, or left
// for the next park (PK3).
struct ParkerTimedModel : Model<ParkerTimedModel, 2> {
    Parker parker;
    rl::var<int> data{0};
    rl::var<int> took{0};
    void thread(unsigned index) {
        if (index == 0) {
            data($).store(1);
            parker.unpark();
        } else if (parker.park_for(forever)) {
            RL_ASSERT(data($).load() == 1);
            took($).store(1);
        }
    }
    void after() {
        const int left = parker.park_for(std::chrono::nanoseconds{0}) ? 1 : 0;
        RL_ASSERT(took($).load() + left == 1);
    }
};

// Two threads hand a turn back and forth twice, each on its own Parker:
// no unpark may be lost, before or during a park, across reuse.
struct ParkerPingPongModel : Model<ParkerPingPongModel, 2> {
    Parker ping, pong;
    rl::var<int> turns{0};
    void thread(unsigned index) {
        for (int round = 0; round < 2; ++round) {
            if (index == 0) {
                turns($).store(turns($).load() + 1);
                pong.unpark();
                ping.park();
            } else {
                pong.park();
                turns($).store(turns($).load() + 1);
                ping.unpark();
            }
        }
    }
    void after() { RL_ASSERT(turns($).load() == 4); }
};

// ---- Lock --------------------------------------------------------------------
// Three threads increment a plain counter under the lock (L1); every
// contended sleeper is woken (L2).
struct LockModel : Model<LockModel, 3> {
    Lock lock;
    rl::var<int> count{0};
    void thread(unsigned) {
        lock.lock();
        count($).store(count($).load() + 1);
        lock.unlock();
    }
    void after() { RL_ASSERT(count($).load() == 3); }
};

// ---- Mailbox -----------------------------------------------------------------
// Where each value ended up; after() checks each is in exactly one place.
template <int Values>
struct Ledger {
    rl::var<int> places[Values];
    Ledger() {
        for (auto& p : places) p($).store(0);
    }
    void count(int value) { places[value]($).store(places[value]($).load() + 1); }
    void count_all(const std::vector<int>& values) {
        for (int v : values) count(v);
    }
    void expect_each_once() {
        for (auto& p : places) RL_ASSERT(p($).load() == 1);
    }
};

// One sender, one receiver taking two values: both arrive, in send order,
// whether the receiver waits first (handoff) or not (queued) (HQ1).
struct MailboxFifoModel : Model<MailboxFifoModel, 2> {
    Mailbox box;
    void thread(unsigned index) {
        if (index == 0) {
            RL_ASSERT(box.send(0));
            RL_ASSERT(box.send(1));
        } else {
            const std::optional<int> first = box.receive();
            const std::optional<int> second = box.receive();
            RL_ASSERT(first == 0 && second == 1);
        }
    }
};

// A sender of two values, a blocking receiver, a timed receiver and a
// closer: every waiter returns, and each value is received exactly once,
// handed back by close(), or refused to its sender (HQ3, HQ4).
struct MailboxCloseModel : Model<MailboxCloseModel, 4> {
    Mailbox box;
    Ledger<2> ledger;
    void thread(unsigned index) {
        if (index == 0) {
            for (int v = 0; v < 2; ++v)
                if (!box.send(v)) ledger.count(v);
        } else if (index == 1) {
            while (const std::optional<int> v = box.receive()) ledger.count(*v);
        } else if (index == 2) {
            if (const std::optional<int> v = box.receive_for(forever)) ledger.count(*v);
        } else {
            ledger.count_all(box.close());
        }
    }
    void after() {
        RL_ASSERT(box.closed());
        ledger.expect_each_once();
    }
};

// One sender sends two values, then seals (Go's close); a receiving loop and
// a timed receiver race it: all return, and each value is received exactly
// once - seal() hands nothing back, so a value left queued is lost (HQ4).
struct MailboxSealModel : Model<MailboxSealModel, 3> {
    Mailbox box;
    Ledger<2> ledger;
    void thread(unsigned index) {
        if (index == 0) {
            for (int v = 0; v < 2; ++v) RL_ASSERT(box.send(v));  // before the seal: accepted
            box.seal();
        } else if (index == 1) {
            while (const std::optional<int> v = box.receive()) ledger.count(*v);
        } else {
            if (const std::optional<int> v = box.receive_for(forever)) ledger.count(*v);
        }
    }
    void after() {
        RL_ASSERT(box.closed());
        RL_ASSERT(box.close().empty());  // the receivers drained it
        ledger.expect_each_once();
    }
};

// ---- ObjectPool --------------------------------------------------------------
// One object put then the pool closed, by one thread; a blocking getter and
// a timed getter race them: both return, and the object is got once or
// handed back by close().
struct ObjectPoolCloseModel : Model<ObjectPoolCloseModel, 3> {
    ObjectPool pool;
    Ledger<1> ledger;
    void thread(unsigned index) {
        if (index == 0) {
            pool.put(0);
            ledger.count_all(pool.close());
        } else {
            const std::optional<int> got = index == 1 ? pool.get() : pool.get_for(forever);
            if (got) ledger.count(*got);
        }
    }
    void after() { ledger.expect_each_once(); }
};

// Two objects gate three threads: each gets one (blocking or timed), uses
// it (a plain write: two holders at once would race), and puts it back.
// The pool, closed afterwards, holds both again.
struct ObjectPoolGateModel : Model<ObjectPoolGateModel, 3> {
    ObjectPool pool;
    rl::var<int> uses[2];
    void before() {
        Model::before();
        for (auto& u : uses) u($).store(0);
        pool.put(0);
        pool.put(1);
    }
    void thread(unsigned index) {
        const std::optional<int> got = index == 2 ? pool.get_for(forever) : pool.get();
        if (!got) return;  // the timed getter timed out
        uses[*got]($).store(uses[*got]($).load() + 1);
        pool.put(*got);
    }
    void after() {
        std::vector<int> left = pool.close();
        RL_ASSERT(left.size() == 2);
    }
};

}  // namespace

ZAP_MODEL_TEST(parker_unpark, ParkerUnparkModel, true, P::SpawnFailure::never,
               "unpark and park in either order: park returns and sees the waker's write (PK2, spurious on)");
ZAP_MODEL_TEST(parker_timed, ParkerTimedModel, true, P::SpawnFailure::never,
               "park_for against unpark: exactly one token consumed, by park_for or the next park (PK3)");
ZAP_MODEL_TEST(parker_ping_pong, ParkerPingPongModel, true, P::SpawnFailure::never,
               "two Parkers, a turn handed back and forth twice: no unpark lost across reuse");
ZAP_MODEL_TEST(lock, LockModel, false, P::SpawnFailure::never,
               "three threads under the futex Lock: mutual exclusion, no sleeper left behind (L1, L2)");
ZAP_MODEL_TEST(mailbox_fifo, MailboxFifoModel, false, P::SpawnFailure::never,
               "one sender, one receiver: both values arrive in send order, handed off or queued (HQ1)");
ZAP_MODEL_TEST(mailbox_close, MailboxCloseModel, false, P::SpawnFailure::never,
               "send x2, receive, receive_for and close race: all return, each value in exactly one place (HQ3)");
ZAP_MODEL_TEST(mailbox_seal, MailboxSealModel, false, P::SpawnFailure::never,
               "send x2 then seal race a receiving loop and receive_for: all return, each value received once");
ZAP_MODEL_TEST(object_pool_close, ObjectPoolCloseModel, false, P::SpawnFailure::never,
               "put then close race a getter and a timed getter: both return, the object got once or handed back");
ZAP_MODEL_TEST(object_pool_gate, ObjectPoolGateModel, false, P::SpawnFailure::never,
               "two objects gate three users (one timed): never shared, both back in the pool");
