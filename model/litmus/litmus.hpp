// SPDX-License-Identifier: MIT
// model/litmus/litmus.hpp - the small patterns the pool rests on, each a
// litmus test: two or three threads, a few atomic operations, and one
// outcome that the memory orders either forbid or allow.
//
// Each litmus is written once, against a Platform (src/zap/platform.hpp),
// and checked by both model checkers: relacy_litmus.cpp instantiates it on
// the Relacy platform, genmc_litmus.cpp on the GenMC platform. Both explore
// every execution (Relacy's full scheduler, GenMC always), so a litmus that
// passes shows the outcome is forbidden, and one that fails prints the
// execution that reaches it. A native run proves nothing: the outcome may be
// allowed and still never show on this machine.
//
// Every litmus has:
//   static constexpr unsigned threads;   how many threads run thread(i)
//   void thread(unsigned i);             thread i's operations
//   bool ok() const;                     false for the outcome it is about,
//                                        read after every thread has ended
//   static constexpr const char* outcome;   that outcome, in words
//   static constexpr bool racy;          true when the outcome reads a Cell
//                                        (a plain field) that races with its
//                                        write: both checkers then report a
//                                        data race before ok() is asked
//
// Which pattern is which part of the pool (docs/exercises.md walks
// through them):
//   StoreBuffering  notify() against wait() (pool_core.hpp A2/A5): each
//                   side writes one location, then reads the other.
//   NotifyWait      the same with the pool's operations: the producer's
//                   push and load of `notified`, the worker's CAS that
//                   clears it and its search (docs/seed-defects.md D7).
//   MessagePassing  publishing a task: the fields of a task are plain
//                   memory, written before a release (a ring's tail, a
//                   queue's CAS, the Event) and read after the acquire
//                   that reads it.
//   ReleaseSequence shutdown() against join(): shutdown's CAS on Sync is a
//                   release, and join() acquires a later value of Sync
//                   written by a worker's read-modify-write (unregister's
//                   fetch_sub); a plain store in between would cut the
//                   sequence (pool_core.hpp B1, B3, B5).
#pragma once

#include <atomic>

namespace zap_litmus {

constexpr auto relaxed = std::memory_order_relaxed;
constexpr auto acquire = std::memory_order_acquire;
constexpr auto release = std::memory_order_release;
constexpr auto acq_rel = std::memory_order_acq_rel;
constexpr auto seq_cst = std::memory_order_seq_cst;

// Store buffering. x and y start at 0.
//   thread 0                 thread 1
//   x.store(1, Store)        y.store(1, Store)
//   fence(Fence0)            fence(Fence1)
//   r0 = y.load(Load)        r1 = x.load(Load)
// Outcome: r0 == 0 && r1 == 0. Allowed unless the two threads' store and
// load are ordered in the single total order S: both fences seq_cst, or
// every store and load seq_cst. A fence of `relaxed` is no fence.
template <class Platform, std::memory_order Store, std::memory_order Load, std::memory_order Fence0,
          std::memory_order Fence1 = Fence0>
struct StoreBuffering {
    static constexpr unsigned threads = 2;
    static constexpr bool racy = false;
    static constexpr const char* outcome = "r0 == 0 && r1 == 0: each thread missed the other's store";
    typename Platform::template Atomic<int> x{0}, y{0};
    int r0 = -1, r1 = -1;

    void thread(unsigned i) {
        if (i == 0) {
            x.store(1, Store);
            Platform::fence(Fence0);
            r0 = y.load(Load);
        } else {
            y.store(1, Store);
            Platform::fence(Fence1);
            r1 = x.load(Load);
        }
    }
    bool ok() const { return !(r0 == 0 && r1 == 0); }
};

// The pool's store buffering (pool_core.hpp A2 against A5). `notified`
// starts set (an earlier schedule() set it and no worker has consumed it);
// the queue starts empty.
//   producer: schedule() + notify()     worker: wait(), then its search
//   queue.store(1, release)  // push    expected = 1
//   fence(Notify)            // A2      notified.CAS(expected, 0, acquire)  // A5
//   r0 = notified.load(relaxed)         fence(Wait)                         // A5
//   // r0 == 1: fast path, return       r1 = queue.load(acquire)  // search
// Outcome: r0 == 1 && r1 == 0: the producer leaves the task to a worker
// that is bound to look (notified was set), and that worker's look misses
// it: the task waits while every worker sleeps.
template <class Platform, std::memory_order Notify, std::memory_order Wait>
struct NotifyWait {
    static constexpr unsigned threads = 2;
    static constexpr bool racy = false;
    static constexpr const char* outcome =
        "r0 == 1 && r1 == 0: notify() saw `notified` set and returned, the worker that cleared it found no task";
    typename Platform::template Atomic<int> queue{0}, notified{1};
    int r0 = -1, r1 = -1;

    void thread(unsigned i) {
        if (i == 0) {
            queue.store(1, release);
            Platform::fence(Notify);
            r0 = notified.load(relaxed);
        } else {
            int expected = 1;
            if (!notified.compare_exchange_strong(expected, 0, acquire, relaxed)) return;
            Platform::fence(Wait);
            r1 = queue.load(acquire);
        }
    }
    bool ok() const { return !(r0 == 1 && r1 == 0); }
};

// Message passing: a task's plain fields published by a release, read
// after the acquire that reads it.
//   thread 0                     thread 1
//   data = 42      (plain)       if (flag.load(Load) == 1)
//   flag.store(1, Store)             seen = data   (plain)
// Outcome: thread 1 sees the flag and not the data (a data race on `data`:
// both checkers report it as such). Forbidden with Store release and Load
// acquire (the load synchronizes with the store); allowed if either is
// relaxed.
template <class Platform, std::memory_order Store, std::memory_order Load>
struct MessagePassing {
    static constexpr unsigned threads = 2;
    static constexpr bool racy = true;
    static constexpr const char* outcome = "flag seen, data not: the payload read races with its write";
    typename Platform::template Cell<int> data{0};
    typename Platform::template Atomic<int> flag{0};
    int seen = -1;

    void thread(unsigned i) {
        if (i == 0) {
            data.write(42);
            flag.store(1, Store);
        } else if (flag.load(Load) == 1) {
            seen = data.read();
        }
    }
    bool ok() const { return seen == -1 || seen == 42; }
};

// The release sequence that shutdown()'s CAS heads (pool_core.hpp B1,
// B3, B5). Sync starts with one worker spawned (1); `shut` is the state bit.
//   shutdown()                      the last worker (unregister)        join()
//   data = 1        (plain)         Step == rmw:                         if (sync.load(acquire) == shut)
//   sync.fetch_or(shut, Head)         sync.fetch_sub(1, relaxed)             seen = data  (plain)
//                                   Step == plain store:
//                                     v = sync.load(relaxed)
//                                     sync.store(v - 1, relaxed)
// join() reads `shut` (shut down, no worker left) from whichever write came
// last. When that is the worker's fetch_sub, a read-modify-write, it
// continues the release sequence headed by shutdown's fetch_or, so join()
// still synchronizes with shutdown() and sees `data` ([intro.races]/5,
// [atomics.order]/2). A plain store is not part of any release sequence: a
// join() that reads it synchronizes with nobody. So does one that reads a
// relaxed head's value.
enum class Step { rmw, plain_store };
template <class Platform, std::memory_order Head, Step WorkerStep>
struct ReleaseSequence {
    static constexpr unsigned threads = 3;
    static constexpr bool racy = true;
    static constexpr const char* outcome =
        "join() read `shut` and not shutdown()'s write before it: the read of data races with its write";
    static constexpr int shut = 4;
    typename Platform::template Cell<int> data{0};
    typename Platform::template Atomic<int> sync{1};
    int seen = -1;

    void thread(unsigned i) {
        if (i == 0) {
            data.write(1);
            sync.fetch_or(shut, Head);
        } else if (i == 1) {
            if constexpr (WorkerStep == Step::rmw) {
                sync.fetch_sub(1, relaxed);
            } else {
                const int v = sync.load(relaxed);
                sync.store(v - 1, relaxed);
            }
        } else if (sync.load(acquire) == shut) {
            seen = data.read();
        }
    }
    bool ok() const { return seen == -1 || seen == 1; }
};

// Every variant the checks run, by name: the drivers expand it, inside a
// scope that sees zap_litmus's names, with their own X(name, Type...) and
// their Platform as P. What each must show (the outcome forbidden, or found
// and how) is model/litmus/variants, which the tests and model/litmus/run
// read.
#define ZAP_LITMUS_VARIANTS(X, P) \
    X(sb_relaxed, StoreBuffering<P, relaxed, relaxed, relaxed>)                    \
    X(sb_release_acquire, StoreBuffering<P, release, acquire, relaxed>)            \
    X(sb_acq_rel_fences, StoreBuffering<P, relaxed, relaxed, acq_rel>)             \
    X(sb_one_seq_cst_fence, StoreBuffering<P, relaxed, relaxed, seq_cst, acq_rel>) \
    X(sb_seq_cst_fences, StoreBuffering<P, relaxed, relaxed, seq_cst>)             \
    X(sb_seq_cst_operations, StoreBuffering<P, seq_cst, seq_cst, relaxed>)         \
    X(notify_no_fences, NotifyWait<P, relaxed, relaxed>)                           \
    X(notify_acq_rel_fence, NotifyWait<P, acq_rel, seq_cst>)                       \
    X(notify_fences, NotifyWait<P, seq_cst, seq_cst>)                              \
    X(mp_release_acquire, MessagePassing<P, release, acquire>)                     \
    X(mp_relaxed_store, MessagePassing<P, relaxed, acquire>)                       \
    X(mp_relaxed_load, MessagePassing<P, release, relaxed>)                        \
    X(rs_rmw, ReleaseSequence<P, release, Step::rmw>)                              \
    X(rs_plain_store, ReleaseSequence<P, release, Step::plain_store>)              \
    X(rs_relaxed_head, ReleaseSequence<P, relaxed, Step::rmw>)

}  // namespace zap_litmus
