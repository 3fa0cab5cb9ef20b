// SPDX-License-Identifier: MIT
// zap/pool_core.hpp - the pool's core: scheduling, sleeping and waking
// workers, lazy spawning, shutdown and join. BasicThreadPool
// (thread_pool.hpp) is this core plus Config's std::string and
// std::function parts and the drop-in layer; the core itself needs only
// <atomic>-level headers, so GenMC compiles it (docs/model.md section 7).
//
// Protocol A - notify against wait (who wakes whom):
//   A1. schedule() pushes the tasks (to the calling worker's ring or overflow
//       queue, or to the global queue), then calls notify().
//   A2. notify() fast path: a seq_cst fence, then a load of Sync. If
//       `notified` is already set, some worker is bound to search again after
//       this push (A5), so return. The fence pairs with the fence in A5: of
//       the two fences, whichever comes second in the single total order sees
//       the other side's write (our push, or the clearing of `notified`).
//   A3. notify() slow path, one CAS (release) on Sync that sets `notified`
//       and, when no worker is waking (state pending) or the caller is the
//       waking worker handing its role on:
//         - idle > 0: state = signaled, then the idle event is notified;
//         - else spawned < max_threads: state = signaled, spawned += 1, then
//           a thread is spawned (A7 if that fails);
//       otherwise a waking worker that found nobody to hand on to sets the
//       state back to pending; and with nobody signaled or spawned, and
//       nobody else bound to look, it wakes one sleeping helping waiter (H7,
//       K1: helpers are not counted idle). The give-back: a waking worker with no more
//       work to share (A4) whose CAS finds `notified` clear only sets state
//       = pending, leaves `notified` clear and wakes nobody; if a schedule()
//       set `notified` since its wait() cleared it, the CAS sees that (or
//       fails on it and retries) and it hands its role on as above.
//   A4. A worker's run loop: wait(); then run what find() returns until it
//       returns nothing. A task may block until other tasks have run (a
//       rendezvous, a pipeline), so before running one a worker makes sure
//       that it leaves no work behind that nobody is bound to look for (P6):
//         - the waking worker calls notify(is_waking) (A3). It hands its
//           role on while work may be left: its search left more
//           (found.more: extra tasks moved into its ring, or tasks left in
//           a queue it held), or its look (Worker::sees_work, every queue
//           and ring) sees a task, or a schedule() set `notified` again.
//           Otherwise it gives the role back: a worker woken for nothing
//           would only search and sleep again (an idle-pool round trip
//           would pay two futex wakes instead of one);
//         - a worker that consumed a notification in wait() and has not
//           run a task since takes the same look, and calls notify() if it
//           sees work: that notification may cover tasks besides the one it
//           found (a steal takes half of a ring: one of two);
//         - any other worker calls notify() when found.more.
//       Why the look suffices: a push whose notify()'s fence (A2) comes
//       before this worker's fence (A5) in the single total order is
//       visible to the look, which follows that fence; a push whose fence
//       comes after it reads `notified` as this worker's CAS left it, or
//       later: clear, so it takes A3's slow path itself (and a waker's
//       give-back CAS then sees `notified` set and hands on), or set again
//       by another schedule() - whose notification's consumer owes the
//       same look. (Before this rule, only the waker handed on, and only
//       when its steal moved extra tasks; after stealing one task of two it
//       gave the role back, and the other waited behind a task that might
//       never return while a worker slept or was never spawned.)
//   A5. wait(): if `notified`, clear it with a CAS (acquire) - leaving
//       `signaled` for `waking` if the signal was meant for a waker - then
//       a seq_cst fence (pairs with A2) and return to searching. If not, an
//       idle worker spins first, once per wait() (A8); then it counts itself
//       idle (CAS: idle += 1; a waking worker that found
//       nothing also sets the state back to pending), run its idle tasks,
//       sleep on the idle event, and start over. A helping waiter (Protocol
//       H) runs this same wait(), but sleeps on the helper word instead and
//       leaves it (idle -= 1) once its group's count is zero (H4-H5).
//   A6. At most one worker is waking at any time (P1): only a CAS that sees
//       state pending (or that is made by the waker itself) may signal, and
//       the signal becomes `waking` in exactly one wait().
//   A7. A failed spawn gives its reservations back (spawned -= n) and clears
//       `notified` when no worker is left to consume it (so the next
//       schedule() retries the spawn). A spawn of A3's also sets a
//       `signaled` state back to pending. That signal need not be its own
//       (it may have been taken and another notifier's set since);
//       resetting someone else's is harmless: the worker it was meant for
//       still wakes and searches, it just does not become the waking one, so
//       P1 holds. Then, with workers left, it re-runs A3 with spawning
//       disabled so an idle worker is woken instead, or, with none idle, a
//       sleeping helper (K1): the notification the failed spawn left set is
//       one nobody is bound to look for (model help_spawn_fails). A spawn of warm() set no
//       signal and promised no wake-up, so it does neither: after its CAS it
//       holds nothing that keeps join() waiting, and must not touch the pool
//       (TLC found that re-run reading freed memory: MCMutWarmRerun). With
//       no worker at all, the tasks wait for join()'s drain (B5). After
//       shutdown, the one that gives back the last reservation notifies the
//       join event, holding a closer (B3, P5).
//   A8. The spin (spin.hpp): a worker whose wait() finds no
//       notification, before it counts itself idle, takes the waking role
//       if nobody holds it (CAS pending -> waking, relaxed), or keeps it if
//       it is the waker already, and watches Sync for at most spin_rounds
//       rounds (spin.hpp). A schedule() meanwhile finds the state waking: A3's CAS only
//       sets `notified` - no signal, no spawn, no helper woken (K1), no
//       system call - and the spinner's next look sees it; wait() consumes
//       it as the waker (state stays waking), and the worker searches and
//       hands on or gives back as A4 says. When the rounds run out the
//       worker counts itself idle with the CAS of A5, which gives the role
//       back (state pending) in the same step. A helping waiter (H4) does
//       not spin. Invariants:
//         S1 (a bounded number spin): only the waking worker spins, so at
//            most one worker of a pool spins at any time (P1), and a pool
//            whose work has ended burns at most one spin_rounds of CPU.
//         S2 (the spinner is bound to look): it leaves the role only by a
//            CAS that expects `notified` clear (A5's idle CAS, or A3's
//            give-back after a search), so a notification set while it
//            holds the role is consumed by it. This is why the rules that
//            decide who else to wake stay correct with a spinner about:
//            K1 wakes a helper only when nobody is bound to look, and the
//            spinner is; a helper leaves a notification to a waking worker
//            (H4); A7's reset touches only a `signaled` state, and its re-run
//            that finds the state waking with `notified` set returns, since
//            the spinner takes that notification; a spinner is spawned, so
//            A7 never clears `notified` under it (spawned > 0); shutdown
//            (B1) ends the spin, since the spinner's look sees it, and the
//            spinner is not idle, so B1 needs no event call for it. P6's
//            premise (every worker runs a task, sleeps or was never
//            spawned) is false while a worker spins, and once it has given
//            the role back S2 leaves nothing unannounced.
//       tla/Pool.tla (Spin = TRUE: MCSpin, MCSpinSmall) checks S1-S2 as
//       OneWaking, NoTaskLost and WorkConserving (a spinner that sleeps with
//       the role fails WorkConserving: MCMutSpinKeep; Relacy: seed
//       spin-keeps-role); tests/test_spin.cpp counts the spinners (S1).
//
// Protocol B - shutdown and join:
//   B1. shutdown(): one CAS (acq_rel) to state shutdown, notified set. From
//       then on no worker counts itself idle, so the same CAS turns Sync's
//       idle bits into `closers` (sync.hpp) and takes one, for the calls it
//       still makes. If any worker was idle, the idle event is shut down
//       (every sleeper wakes, now and later); every helping wait asleep is
//       woken (K3 of helping_wait.hpp: it sleeps on its own word, and sees
//       the shutdown when it wakes); if no worker was spawned, the join
//       event is notified, since no worker will do it (B3). Then it gives
//       its closer back (release): its last touch.
//   B2. A worker whose wait() sees shutdown sweeps: it runs whatever find()
//       still returns, then its idle tasks, then on_thread_exit, then leaves.
//       (A helping waiter that sees shutdown searches again, the global
//       queue included, and sleeps between searches until its count is zero,
//       H6; its worker sweeps once the task that waited has returned.)
//   B3. Leaving (unregister): fetch_sub spawned (release). The worker that
//       takes spawned to 0 after shutdown notifies the join event. It touches
//       the pool after that fetch_sub, which is safe because join() joins
//       its OS thread before returning (B6). A failed spawn that gives back
//       the last reservation after shutdown does the same from whatever
//       thread tried to spawn, so it holds a closer around its notify (A7).
//   B4. join() claims the join (an exchange): the first caller does B5-B6,
//       then marks the pool joined; every other caller, concurrent or later,
//       waits for that mark (a WaitGroup, whose W1 lets it return only after
//       the claimer's last touch of it).
//   B5. The claimer waits (join event) until state is shutdown and spawned
//       is 0, then polls until closers is 0 (acquire: every worker's and
//       closer's writes happen before; a closer has only futex wakes left,
//       which never block, so nobody wakes the claimer for them: it spins
//       briefly, then sleeps in short timed waits, backoff.hpp). Drain: run
//       every task left in any queue or ring, on this thread, until a full
//       pass finds nothing (tasks it runs may schedule more). The drain
//       works as worker 0, so that what its tasks schedule goes into a ring
//       and their waits help newest task first (H2), under a depth bound.
//   B6. The claimer joins every worker's OS thread, then returns. From then
//       on nothing touches the pool, so it may be destroyed (P3).
//   B7. Every shutdown() and join() call counts itself in `calls_` while it
//       touches the pool (call_count.hpp: fetch_add at its start, fetch_sub,
//       release, as its last touch). The destructor, after its own
//       shutdown() and join(), waits until the count is zero: a shutdown()
//       that lost the race to shut down, or a join() that lost the claim
//       and still waits in joined_, is done with the pool before it is
//       freed. (Before this count, a losing join() read freed memory inside
//       joined_.wait(), and a losing shutdown()'s first load had no
//       happens-before edge to the free.) What stays the caller's: a call
//       must have started - made that fetch_add - before the destructor's
//       last read of the count, as any call on any object must start
//       before the object is destroyed.
//
// Properties (checked by the models, tests and the TLA+ spec):
//   P1 at most one waking worker;  P2 every task scheduled before shutdown()
//   runs exactly once before join() returns;  P3 nothing touches the pool
//   after join() returns;  P4 a task is never stranded while all workers
//   sleep (some worker is awake, or signaled, or notified and bound to look);
//   P5 a thread that is not a worker touches the pool after a Sync change
//   that can let join() return only while it holds a closer (B1, A7);
//   P6 work conservation (A4): when every worker runs a task, sleeps or was
//   never spawned, and nobody is inside notify(), no task is queued unless
//   every worker runs a task (tla/Pool.tla WorkConserving; outside the
//   promise: spawn failures, and after shutdown, where join() drains).
//
// Callers: shutdown() may run on any thread, concurrently with join() and
// the destructor; join() may run on several threads at once (each returns
// once the pool is joined), the destructor's included (B7). As for any
// object, every other call (schedule, warm from outside the pool) must
// return before the pool is destroyed;
// schedule() from outside must also happen before shutdown() (P2's
// "before"), and debug builds assert when it sees the pool shut down.
//
// Protocol H (helping_wait.hpp) - a worker waiting for a WaitGroup helps:
// it runs tasks, and sleeps through A5's wait() (not counted idle) on its
// own worker's helper word; A3 wakes one such helper when nobody else can
// take a notification (H7, K1), and the group's last done() wakes its own
// waiter (K2). That done() may run on any thread, but it touches the word
// only while a helper of this pool is inside the wait (HW3): the helper's
// task keeps join() waiting, so P5 needs no closer for it. Inside
// isolate(), a helping wait runs only its region's tasks (isolation.hpp).
#pragma once

#include <zap/assert.hpp>
#include <zap/backoff.hpp>
#include <zap/batch.hpp>
#include <zap/call_count.hpp>
#include <zap/core_config.hpp>
#include <zap/event.hpp>
#include <zap/helping_wait.hpp>
#include <zap/platform.hpp>
#include <zap/queue.hpp>
#include <zap/spin.hpp>
#include <zap/sync.hpp>
#include <zap/task.hpp>
#include <zap/wait_group.hpp>
#include <zap/worker.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <new>

namespace zap::detail {

template <class Platform>
class PoolCore {
public:
    using Task = BasicTask<Platform>;
    using Batch = BasicBatch<Platform>;

    // `config.max_threads` is 1 .. 16383 (Sync's 14-bit counters): the
    // caller checks it (BasicThreadPool throws), debug builds assert.
    explicit PoolCore(const CoreConfig& config) : config_(config), max_threads_(config.max_threads) {
        ZAP_ASSERT(max_threads_ >= 1 && max_threads_ <= Sync::max_count,
                   "max_threads is 1 .. 16383 (the Sync word's 14-bit counters)");
        workers_ = static_cast<Worker*>(Platform::allocate(sizeof(Worker) * max_threads_, alignof(Worker)));
        for (std::uint32_t i = 0; i < max_threads_; ++i) new (&workers_[i]) Worker;  // each member initialises itself
        joined_.add(1);  // B4
    }

    // Runs every scheduled task (children included), then shuts down and joins.
    // The contract's "wait until quiescent, then shut down" in one step: by
    // now no other thread may call the pool (a call must return before the
    // pool is destroyed, as for any object), so only running tasks can still
    // schedule, and join()'s drain runs what they schedule (B2).
    ~PoolCore() {
        shutdown();
        join();
        calls_.wait_until_none();  // B7
        for (std::uint32_t i = 0; i < max_threads_; ++i) workers_[i].~Worker();
        Platform::deallocate(workers_, sizeof(Worker) * max_threads_, alignof(Worker));
    }

    PoolCore(const PoolCore&) = delete;
    PoolCore& operator=(const PoolCore&) = delete;

    void schedule(Task& task) noexcept { schedule(Batch(task)); }

    // Protocol A1. Lock-free; callable from any thread. After shutdown() only
    // tasks running on this pool may schedule (their children are part of
    // the drain); anyone else violates the contract: debug builds abort,
    // release builds run the batch on the calling thread, so nothing is lost.
    void schedule(Batch batch) noexcept {
        if (batch.empty()) return;
        Context* context = own_context();
        if (context == nullptr && load_sync().state == detail::State::shutdown) {
            ZAP_ASSERT(false, "schedule() after shutdown() from a thread that is not running a task of this pool");
            while (Task* task = batch.pop()) task->run();
            return;
        }
        detail::List<Task> list = batch.take_list();
        detail::Region::set_all(list, context != nullptr ? context->region : outside_region());  // isolation.hpp I2
        if (context != nullptr) {  // a worker, or the drain as worker 0 (B5)
            Worker& worker = *context->worker;
            if (!worker.run_buffer.push(list)) worker.run_queue.push(list);
        } else {
            global_queue_.push(list);
        }
        notify();
    }

    // Queues an idle task on the calling worker: it runs on that worker when
    // it has nothing else to do, just before it sleeps (or leaves at
    // shutdown; in the drain, at its end). Must be called from a task
    // running on this pool; elsewhere debug builds abort and release builds
    // schedule it as an ordinary task.
    void schedule_idle(Task& task) noexcept {
        Context* context = own_context();
        if (context == nullptr) {
            ZAP_ASSERT(false, "schedule_idle() from a thread that is not running a task of this pool");
            schedule(task);
            return;
        }
        Batch one(task);
        context->worker->idle_queue.push(one.take_list());
    }

    // Spawns workers now, up to min(count, max_threads()) in total. Reserves
    // them all with one CAS, then spawns them: after handing the last
    // reservation to its thread it never reads Sync again, so a shutdown()
    // and join() racing it cannot free the pool under it. Does nothing once
    // the pool is shut down.
    void warm(std::uint32_t count) {
        const std::uint32_t target = std::min(count, max_threads_);  // the seed compared against count - spawned
        Sync sync = load_sync();
        Sync reserved;
        do {
            if (sync.spawned >= target || sync.state == detail::State::shutdown) return;
            reserved = sync;
            reserved.spawned = target;
            // Release: part of the release sequence join() acquires (B5).
        } while (!cas_sync(sync, reserved, std::memory_order_release));
        for (std::uint32_t left = target - sync.spawned; left > 0; --left)
            if (!spawn_worker(left, false)) return;
    }

    // Protocol B1. Idempotent; callable from any thread, tasks included, and
    // concurrently with join() and the destructor (P5, B7).
    void shutdown() noexcept {
        const Call call(calls_);  // B7
        Sync sync = load_sync();
        while (sync.state != detail::State::shutdown) {
            const bool wake_idle = sync.idle > 0;
            const bool wake_joiner = sync.spawned == 0;  // no worker will (B3)
            Sync closed = sync;
            closed.notified = true;
            closed.state = detail::State::shutdown;
            closed.idle = 1;  // now `closers`: ours, for the calls below (P5)
            // Release: a helper's acquire of Sync that reads it (H6) sees every
            // schedule() before us in its first search; the drain (B5) sees
            // them through release_closer() too. The acquire half is stronger
            // than needed (docs/orderings.md).
            if (!cas_sync(sync, closed, std::memory_order_acq_rel)) continue;
            if (wake_idle) idle_event_.shutdown();
            Helping::wake_all(*this);  // H7 (K3): helpers asleep in H5 watch Sync, not the idle event
            if (wake_joiner) join_event_.notify();
            release_closer();
            return;
        }
    }

    // Protocol B4-B6. Waits for shutdown() (from any thread), runs what is
    // left, joins the workers. Idempotent, and callable from several threads
    // at once; not from a task of this pool.
    void join() {
        ZAP_ASSERT(own_context() == nullptr, "join() from a task of this pool would wait for itself");
        const Call call(calls_);  // B7
        // Decides who does the work; orders nothing (joined_ publishes it).
        if (join_claimed_.exchange(true, std::memory_order_relaxed)) {
            joined_.wait();  // B4: W1 of wait_group.hpp
            return;
        }
        wait_until_joinable();
        drain();
        const std::uint32_t started = registered_.load(std::memory_order_relaxed);  // ordered by B5's acquire
        for (std::uint32_t i = 0; i < started; ++i) Platform::join(workers_[i].thread);
        joined_.done();  // B4 (then `call` ends: B7)
    }

    std::uint32_t max_threads() const noexcept { return max_threads_; }

protected:
    // The seam for the drop-in layer (BasicThreadPool, thread_pool.hpp):
    // the types and calls its members (worker_index, isolate,
    // parallel_invoke) build on.
    using Helping = HelpingWait<PoolCore>;
    using Worker = detail::Worker<Platform>;
    using Context = detail::Context<Platform>;

    // The calling thread's context if it is a thread of this pool (a worker, the drain; no outside caller's, OC1).
    Context* own_context() const noexcept {
        Context* context = Context::current();
        return context != nullptr && context->pool == this && context->worker != nullptr ? context : nullptr;
    }

    // The index of one of this pool's workers (worker 0: also the drain's slot).
    std::uint32_t index_of(const Worker& worker) const noexcept {
        return static_cast<std::uint32_t>(&worker - workers_);
    }

    // parallel_invoke's wake-up (its step J2): A2 without the fence. Losing
    // the race with a worker going to sleep costs parallelism only, never a
    // stranded task: the forking worker takes its task back, or waits for
    // whoever took it.
    void notify_hint() noexcept {
        if (load_sync().notified) return;  // a hint: relaxed, no fence (above)
        notify_slow({});
    }

private:
    friend class HelpingWait<PoolCore>;
    using Sync = detail::Sync;
    using Call = typename detail::CallCount<Platform>::Call;
    using Stole = typename Worker::Stole;
    using Loc = typename Platform::Loc;  // the Platform's call-site type (platform.hpp)

    // Both helpers pass their caller's source location on to the atomic, so a
    // model reports (and docs/orderings.md mutates) each load_sync()/cas_sync()
    // call on its own line, with the order that call names.
    Sync load_sync(std::memory_order order = std::memory_order_relaxed,
                   Loc loc = Loc::current()) const noexcept {
        return Sync::decode(sync_.load(order, loc));
    }

    // One CAS on the Sync word; on failure `expected` holds the fresh value.
    bool cas_sync(Sync& expected, Sync desired, std::memory_order success,
                  Loc loc = Loc::current()) noexcept {
        std::uint32_t word = expected.encode();
        const bool ok =
            sync_.compare_exchange_weak(word, desired.encode(), success, std::memory_order_relaxed, loc);
        if (!ok) expected = Sync::decode(word);
        return ok;
    }

    // Who calls notify() and what it may do (A2-A4, A7).
    struct Notice {
        bool is_waking = false;    // the waking worker, handing its role on (A4)
        bool more_work = true;     // false: a waker that left no work behind (A3's give-back)
        bool allow_spawn = true;   // false: A7's re-run, which may only wake an idle worker
    };

    // Protocol A2 (a pusher) or A4's hand-over (or give-back) of the waking role.
    void notify(Notice notice = {}) noexcept {
        if (!notice.is_waking) {
            // Pairs with the fence in wait() (A5): either that worker's search
            // sees our push, or we see `notified` cleared and take the slow path.
            Platform::fence(std::memory_order_seq_cst);
            if (load_sync().notified) return;
        }
        notify_slow(notice);
    }

    // Protocol A3 (and A7 with allow_spawn false).
    void notify_slow(Notice notice) noexcept {
        Sync sync = load_sync();
        while (sync.state != detail::State::shutdown) {
            ZAP_ASSERT(!notice.is_waking || sync.state == detail::State::waking,
                       "internal: waker without waking state");
            // The give-back (A3): a waker that left no work behind (A4) and
            // sees no push since wait() cleared `notified` wakes nobody for
            // nothing.
            const bool give_back = notice.is_waking && !notice.more_work && !sync.notified;
            const bool can_wake = !give_back && (notice.is_waking || sync.state == detail::State::pending);
            const bool wake_idle = can_wake && sync.idle > 0;
            const bool spawn = can_wake && !wake_idle && notice.allow_spawn && sync.spawned < max_threads_;
            Sync next = sync;
            next.notified = !give_back;
            if (wake_idle || spawn) {
                next.state = detail::State::signaled;
                next.spawned += spawn ? 1 : 0;
            } else if (notice.is_waking) {
                next.state = detail::State::pending;  // nobody to hand the role to
            } else if (sync.notified) {
                // Someone is bound to look already - unless this is A7's
                // re-run: the failed spawn's notification is still set and
                // the worker it was for never came, so K1 as below.
                if (!notice.allow_spawn && can_wake) Helping::wake_one(*this);
                return;
            }
            // Publishes the caller's pushes to the acquire CAS in wait() (A5).
            if (!cas_sync(sync, next, std::memory_order_release)) continue;
            if (wake_idle) idle_event_.notify();
            if (spawn) spawn_worker(1, true);
            // H7 (K1): nobody idle or to spawn, and nobody was bound to look:
            // a sleeping helper is the one worker that can.
            if (can_wake && !wake_idle && !spawn) Helping::wake_one(*this);
            return;
        }
    }

    // A worker's sleep in A5: its idle tasks, then the idle event. It counts
    // itself idle first (a helping waiter, H4, does not).
    struct IdleSleep {
        PoolCore& pool;
        Worker& self;
        static constexpr bool counts_idle = true;
        static bool done() noexcept { return false; }
        void sleep() noexcept {
            self.run_idle_tasks();
            pool.idle_event_.wait();
        }
    };

    bool wait(Worker& self, bool& is_waking) noexcept { return wait(is_waking, IdleSleep{*this, self}); }

    // Protocol A5 (and H4 with a helping wait's Sleep). False once the pool is
    // shut down, or once sleeper.done(); otherwise sets is_waking to whether
    // this worker is now the waking one.
    template <class Sleeper>
    bool wait(bool& is_waking, Sleeper sleeper) noexcept {
        bool is_idle = false;  // announced: counted idle (or, for a helper, gave up the waking role)
        bool spun = !Sleeper::counts_idle || config_.spin_rounds == 0;  // A8: an idle worker spins once
        Sync sync = load_sync();
        for (;;) {
            if (sync.state == detail::State::shutdown) return false;
            ZAP_ASSERT(!is_waking || sync.state == detail::State::waking, "internal: waker without waking state");
            // A helper (H4) leaves a notification to the worker signaled or
            // waking for it, and takes only one nobody is bound to look for.
            const bool mine = Sleeper::counts_idle || is_waking || sync.state == detail::State::pending;
            if (sync.notified && mine) {
                Sync taken = sync;
                taken.notified = false;
                taken.idle -= is_idle && Sleeper::counts_idle ? 1 : 0;
                if (sync.state == detail::State::signaled) taken.state = detail::State::waking;
                // Synchronizes with the release CAS in notify_slow() (A3).
                if (!cas_sync(sync, taken, std::memory_order_acquire)) continue;
                // Pairs with the fence in notify() (A2).
                Platform::fence(std::memory_order_seq_cst);
                is_waking = is_waking || sync.state == detail::State::signaled;
                return true;
            }
            if (sleeper.done()) return false;  // H4: the helper's group is done (a helper is never counted idle)
            if (!spun) {
                spun = true;
                if constexpr (Sleeper::counts_idle) spin(sync, is_waking, sleeper.self.spin_budget);
                continue;  // `sync` is fresh: a notification, shutdown, or the spin ran out (A8)
            }
            if (!is_idle) {
                Sync counted = sync;
                counted.idle += Sleeper::counts_idle ? 1 : 0;
                if (is_waking) counted.state = detail::State::pending;
                // Announces a sleeper to notify_slow(), or gives the waking role
                // up (P1); publishes nothing.
                if (counted != sync && !cas_sync(sync, counted, std::memory_order_relaxed)) continue;
                is_waking = false;
                is_idle = true;
                continue;  // `sync` still holds the value before our CAS: not notified
            }
            sleeper.sleep();
            sync = load_sync();  // the event's (or helper's fence) ordered this after the notifier's CAS
        }
    }

    // Protocol A8: holds the waking role (taking it if the state is pending)
    // and watches Sync until a notification or shutdown comes, or for the
    // rounds its budget grants (spin.hpp, at most Config::spin_rounds). Leaves
    // the freshest Sync it read in `sync`; the caller's loop consumes the
    // notification (A5) or, when the rounds ran out, gives the role back (S2).
    void spin(Sync& sync, bool& is_waking, detail::SpinBudget& budget) noexcept {
        if (!is_waking) {
            if (sync.state != detail::State::pending) return;  // a worker is signaled or waking already (S1)
            Sync spinning = sync;
            spinning.state = detail::State::waking;
            // Takes the role (P1, S1); orders nothing: the notification it
            // waits for is acquired by A5's CAS. A failure leaves `sync`
            // fresh, and this wait() does not spin.
            if (!cas_sync(sync, spinning, std::memory_order_relaxed)) return;
            sync = spinning;
            is_waking = true;
        }
        budget.spin<Platform>(config_.spin_rounds, [&] {
            sync = load_sync();  // a look only: A5's acquire CAS takes what it sees (S2)
            return sync.notified || sync.state == detail::State::shutdown;
        });
    }

    // One reserved spawned slot -> OS thread. `reserved` is how many
    // reservations the caller holds, this one included: a failure gives them
    // all back (A7). `signaled`: the caller is notify_slow(), whose CAS set
    // the signaled state for this worker (A3). After a success the caller
    // must not touch the pool unless it still holds a reservation (warm(), P5).
    bool spawn_worker(std::uint32_t reserved, bool signaled) noexcept {
        if (Platform::spawn(ThreadOptions{config_.stack_size}, &worker_main, this)) return true;
        spawn_failed(reserved, signaled);
        return false;
    }

    // Protocol A7.
    void spawn_failed(std::uint32_t reserved, bool signaled) noexcept {
        Sync sync = load_sync();
        Sync undone;
        bool last_out;
        do {
            undone = sync;
            undone.spawned -= reserved;
            if (signaled && sync.state == detail::State::signaled) undone.state = detail::State::pending;
            if (undone.spawned == 0 && sync.state != detail::State::shutdown) undone.notified = false;
            last_out = undone.spawned == 0 && sync.state == detail::State::shutdown;
            undone.idle += last_out ? 1 : 0;  // after shutdown: a closer (P5)
            // Release is stronger than needed (docs/orderings.md): any
            // read-modify-write continues the release sequences join()
            // acquires (B5), and nobody needs the spawner's writes through it.
        } while (!cas_sync(sync, undone, std::memory_order_release));
        if (last_out) {
            join_event_.notify();  // B3: no worker is left to do it
            release_closer();
        } else if (signaled && sync.state != detail::State::shutdown && undone.spawned > 0) {
            notify_slow({.allow_spawn = false});  // once it gave its reservations back, only a signaler may (P5)
        }
    }

    // Gives back a closer taken in shutdown() or spawn_failed() (P5).
    void release_closer() noexcept {
        // Release: the closer's event calls happen before join()'s acquire spin (B5).
        sync_.fetch_sub(Sync::one_closer, std::memory_order_release);
    }

    // Protocol B5, the wait: shut down, no worker left, no closer left.
    void wait_until_joinable() noexcept {
        Sync sync = load_sync(std::memory_order_acquire);
        while (sync.state != detail::State::shutdown || sync.spawned != 0) {
            join_event_.wait();
            // Synchronizes with every worker's release in unregister() (B3).
            sync = load_sync(std::memory_order_acquire);
        }
        detail::Backoff<Platform> backoff;
        while (sync.idle != 0) {
            backoff.pause(sync_, sync.encode());  // a closer has only futex wakes left (P5)
            // Synchronizes with release_closer().
            sync = load_sync(std::memory_order_acquire);
        }
    }

    static void* worker_main(void* pool) noexcept {
        static_cast<PoolCore*>(pool)->run_worker();
        return nullptr;
    }

    // Protocol A4, then B2-B3.
    void run_worker() noexcept {
        // At most max_threads workers ever start: spawned <= max_threads, and
        // a worker only gives its slot back after shutdown, when no new
        // reservation can be made.
        const std::uint32_t index = registered_.fetch_add(1, std::memory_order_relaxed);  // a counter only
        ZAP_ASSERT(index < max_threads_, "internal: more workers started than max_threads");
        Worker& self = workers_[index];
        self.thread = Platform::this_thread();
        self.context = Context{this, &self, &Helping::help, Helping::max_help_depth(*this)};
        self.context.region_ids = detail::RegionIds(index + 1);  // I1
        Platform::set_current_context(&self.context);
        if (config_.hooks.start != nullptr) config_.hooks.start(config_.hooks.context, index);

        bool is_waking = false;
        Stole found;
        while (wait(self, is_waking)) {
            bool owes = true;  // wait() consumed a notification (A4)
            while (find(self, found)) {
                run_found(self.context, found, is_waking, owes, true);
                owes = false;
            }
        }
        while (find(self, found)) run(self.context, *found.task);  // B2: help drain
        // Until none is left: join()'s drain would run the rest, but on the
        // joining thread, after on_thread_exit; an idle task is its worker's.
        while (self.run_idle_tasks()) {
        }

        if (config_.hooks.exit != nullptr) config_.hooks.exit(config_.hooks.context);
        Platform::set_current_context(nullptr);
        unregister();
    }

    // A4 (and H2): before running a found task, announce the work left
    // behind. `owes`: the caller consumed a notification and has run no task
    // since. A waker hands its role on, or gives it back (A3) when
    // `may_give_back` and no work is left.
    void run_found(Context& context, Stole found, bool& is_waking, bool owes, bool may_give_back) noexcept {
        const bool left = found.more || ((owes || is_waking) && sees_work());
        if (left || is_waking) notify({.is_waking = is_waking, .more_work = left || !may_give_back});
        is_waking = false;
        run(context, *found.task);
    }

    // Runs a task taken from a queue or ring, in the task's region (I1).
    static void run(Context& context, Task& task) noexcept {
        const detail::InRegion<Context> in(context, detail::Region::of(task));
        task.run();
    }

    // A4's look, over every queue and ring.
    bool sees_work() noexcept {
        const std::uint32_t started = registered_.load(std::memory_order_relaxed);  // workers_ exists from the start
        return Worker::sees_work(global_queue_, workers_, started);
    }

    // Worker::find over this pool's queues and rings.
    bool find(Worker& self, Stole& found, bool helping = false, bool with_global = true) noexcept {
        const std::uint32_t started = registered_.load(std::memory_order_relaxed);  // workers_ exists from the start
        return self.find(global_queue_, workers_, started, found, helping, with_global);
    }

    // Protocol B3.
    void unregister() noexcept {
        // Release: join() acquires every worker's writes through this (B5).
        const Sync before = Sync::decode(sync_.fetch_sub(Sync::one_spawned, std::memory_order_release));
        ZAP_ASSERT(before.spawned > 0, "internal: unregister without a spawned worker");
        if (before.state == detail::State::shutdown && before.spawned == 1) join_event_.notify();
    }

    // Protocol B5, the drain: runs every task left anywhere, as the pool's last thread.
    // The drain works as worker 0 (its owner, if it ever ran, has left): what
    // the tasks it runs schedule goes into that slot's ring, and their waits
    // help newest task first, as on a worker (H2), so nested waits follow
    // the program's recursion instead of piling up one frame per leftover
    // task on the joining thread's stack. Its depth bound: drain_help_depth().
    void drain() noexcept {
        Context drainer{this, &workers_[0], &Helping::help, Helping::drain_help_depth(*this), 0, true};
        drainer.region_ids = detail::RegionIds(std::uint64_t{max_threads_} + 1);  // I1: its own ids
        void* const outer = Platform::current_context();
        Platform::set_current_context(&drainer);
        while (Task* task = take_leftover()) run(drainer, *task);
        Platform::set_current_context(outer);
    }

    Task* take_leftover() noexcept {
        if (Task* task = take_one(global_queue_)) return task;
        // Ordered by join()'s acquire; slot 0 is the drain's own even if no worker started.
        const std::uint32_t slots = std::max(registered_.load(std::memory_order_relaxed), 1u);
        for (std::uint32_t i = 0; i < slots; ++i) {
            Worker& worker = workers_[i];
            if (Task* task = worker.run_buffer.pop()) return task;  // its owner has left: we own it now
            if (Task* task = take_one(worker.run_queue)) return task;
            if (Task* task = take_one(worker.idle_queue)) return task;
        }
        return nullptr;
    }

    static Task* take_one(detail::Queue<Platform>& queue) noexcept {
        Task* cursor = nullptr;
        if (!queue.try_acquire_consumer(cursor)) return nullptr;
        Task* task = queue.pop(cursor);
        queue.release_consumer(cursor);
        return task;
    }

    // Three groups of cache lines. Read by every search, written only as
    // workers start and as the pool shuts down and joins:
    CoreConfig config_;
    std::uint32_t max_threads_;
    Worker* workers_ = nullptr;
    typename Platform::template Atomic<std::uint32_t> registered_{0};
    typename Platform::template Atomic<bool> join_claimed_{false};  // B4
    detail::CallCount<Platform> calls_;  // B7
    BasicWaitGroup<Platform> joined_;  // B4: done() once the claimer has joined
    // Written by every notify() that wakes a worker and by every wait():
    // Sync, and the idle event that the same notify() and wait() use next
    // (one line moves for both, docs/benchmarks.md):
    alignas(Platform::cache_line) typename Platform::template Atomic<std::uint32_t> sync_{0};
    detail::Event<Platform> idle_event_;
    detail::Event<Platform> join_event_;
    // Written by every post from outside the pool and every take from it:
    alignas(Platform::cache_line) detail::Queue<Platform> global_queue_;
    typename Platform::template Atomic<std::uint64_t> caller_regions_{0};  // outside_wait.hpp OC1's ids

    // Finds the tasks of an outside caller's region and hands out their ids (outside_wait.hpp).
    template <class>
    friend class OutsideWait;

    // I2's region for a thread that is not one of this pool's: its caller
    // region while it calls the pool from outside (outside_wait.hpp OC2),
    // else 0. A worker's is its context's, which schedule() already holds.
    std::uint64_t outside_region() const noexcept {
        const Context* context = Context::current();
        return context != nullptr && context->pool == this ? context->region : 0;
    }
};

}  // namespace zap::detail
