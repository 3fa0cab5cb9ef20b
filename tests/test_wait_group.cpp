// SPDX-License-Identifier: MIT
// WaitGroup: counts, wakes, helps on workers, and may be destroyed right after wait().
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "held_wake_platform.hpp"
#include "os_probe.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

TEST(WaitGroup, DoneWithoutWaitersAndWaitOnZero) {
    zap::WaitGroup wg;
    EXPECT_TRUE(wg.is_done());
    wg.add(2);
    EXPECT_FALSE(wg.is_done());
    wg.done();
    wg.done();
    EXPECT_TRUE(wg.is_done());
    wg.wait();
}

TEST(WaitGroup, WaitReturnsAfterEveryDone) {
    for (int round = 0; round < 200; ++round) {
        zap::WaitGroup wg;
        constexpr int n = 4;
        std::atomic<int> finished{0};
        wg.add(n);
        std::vector<std::thread> threads;
        for (int i = 0; i < n; ++i) threads.emplace_back([&] {
            finished++;
            wg.done();
        });
        wg.wait();
        EXPECT_EQ(finished.load(), n);
        for (auto& t : threads) t.join();
    }
}

// The production platform, counting its spin hints and futex waits.
struct SpinAndSleepCounting : zap::StdPlatform {
    static inline std::atomic<long> hints{0};
    static inline std::atomic<long> sleeps{0};
    static void spin_hint() noexcept {
        hints.fetch_add(1);  // a counter only
        zap::StdPlatform::spin_hint();
    }
    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc loc = Loc::current()) noexcept {
        sleeps.fetch_add(1);  // a counter only
        return zap::StdPlatform::futex_wait(word, expected, timeout, loc);
    }
};

// A wait from outside the pool spins a while first (Platform::wait_spin_rounds:
// the done() may be a moment away), then sleeps (it may not be): the done()
// comes 50 ms later, long after the spin, and finds the waiter asleep.
TEST(WaitGroup, AnOutsideWaitSpinsOnceThenSleeps) {
    zap::BasicWaitGroup<SpinAndSleepCounting> group;
    group.add(1);
    std::thread later([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        group.done();
    });
    group.wait();
    later.join();
    EXPECT_GE(SpinAndSleepCounting::hints.load(), 1) << "no spin before sleeping";
    EXPECT_GE(SpinAndSleepCounting::sleeps.load(), 1) << "the wait never slept: it spun for 50 ms";
}

TEST(WaitGroup, DestroyedRightAfterWait) {
    // The waiter frees the group as soon as wait() returns; under ASan a done()
    // touching it afterwards is a use-after-free (W1).
    for (int round = 0; round < 500; ++round) {
        auto wg = std::make_unique<zap::WaitGroup>();
        wg->add(1);
        std::thread t([raw = wg.get()] { raw->done(); });
        wg->wait();
        wg.reset();
        t.join();
    }
}

namespace {
struct Job : zap::Task {
    zap::WaitGroup* wg;
    std::atomic<int>* ran;
    Job() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Job*>(t);
        self->ran->fetch_add(1);
        self->wg->done();
    }
};

// A task that schedules children on its own pool and waits for them.
struct Parent : zap::Task {
    zap::ThreadPool* pool;
    std::atomic<int>* ran;
    Parent() : zap::Task(&run) {}
    static void run(zap::Task* t) {
        auto* self = static_cast<Parent*>(t);
        zap::WaitGroup wg;
        std::vector<Job> jobs(16);
        wg.add(static_cast<std::uint32_t>(jobs.size()));
        zap::Batch batch;
        for (auto& j : jobs) {
            j.wg = &wg;
            j.ran = self->ran;
            batch.push(j);
        }
        self->pool->schedule(std::move(batch));
        wg.wait();  // helps: with one worker, nobody else could run the jobs
        self->ran->fetch_add(1);
    }
};
}  // namespace

TEST(WaitGroup, WaitForAPreemptedDoneSleepsInsteadOfSpinning) {
    // A waiter woken by the last done() must still wait for that done() to
    // clear WAKING (W1). If that thread is preempted there, a spinning waiter
    // burns its whole time slice (3-4 ms per wait were measured; a higher
    // real-time priority would never let the done() run again). The wait must
    // turn into timed sleeps after a short spin (backoff.hpp). Here the done()
    // is held for 50 ms: the old pure spin made about a million spin hints
    // and no timed wait.
    HeldWakePlatform::release = false;
    HeldWakePlatform::holding = false;
    HeldWakePlatform::timed_waits = 0;
    zap::BasicWaitGroup<HeldWakePlatform> group;
    group.add(1);
    std::atomic<bool> returned{false};
    std::thread waiter([&] {
        group.wait();
        returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds{20});  // lets the waiter set WAITERS and sleep
    std::thread doer([&] {
        HeldWakePlatform::held = std::this_thread::get_id();
        group.done();
    });
    while (!HeldWakePlatform::holding.load()) std::this_thread::yield();
    HeldWakePlatform::spins = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
    EXPECT_FALSE(returned.load()) << "wait() returned while the last done() was still waking (W1)";
    const long spins = HeldWakePlatform::spins.load();
    HeldWakePlatform::release = true;
    doer.join();
    waiter.join();
    EXPECT_TRUE(returned.load());
    EXPECT_LE(spins, 1000) << "the waiter spun on WAKING instead of sleeping";
    EXPECT_GE(HeldWakePlatform::timed_waits.load(), 1) << "the waiter never slept in a timed wait";
}

TEST(WaitGroup, WaitOnAWorkerRunsPoolTasks) {
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    std::atomic<int> ran{0};
    Parent parent;
    parent.pool = &pool;
    parent.ran = &ran;
    pool.schedule(parent);
    pool.shutdown();
    pool.join();
    EXPECT_EQ(ran.load(), 17);
}

// ---- helping waits (helping_wait.hpp) ----------------------------------------

namespace {

// Voluntary context switches of the calling thread: how often it went to
// sleep. A count of sleeps, not a time, so the machine's load cannot move it
// much (CPU time is measured in bench/, never asserted here).
struct ThreadUsage {
    long switches;
    static ThreadUsage now() { return {zap_test::sleeps().value_or(0)}; }
};

// A task running a callable.
template <class F>
struct Call : zap::Task {
    F f;
    explicit Call(F fn) : zap::Task(&run), f(std::move(fn)) {}
    static void run(zap::Task* t) { static_cast<Call*>(t)->f(); }
};

// Blocks the test thread until `flag` is set (by a task).
void await_flag(const std::atomic<bool>& flag) {
    while (!flag.load()) std::this_thread::sleep_for(std::chrono::milliseconds{1});
}

}  // namespace

TEST(HelpingWait, NothingToDoBurnsNoCpu) {
    // A worker waits 300 ms for a done() from outside with nothing to run: it
    // must sleep, not poll. The old wait napped 50 us..1 ms and looked again:
    // hundreds of wake-ups (voluntary context switches) over 300 ms; a woken
    // wait sleeps once or twice. The 300 ms only gives a poller time to show.
    if (!zap_test::sleeps()) GTEST_SKIP() << "this system does not count a thread's sleeps";
    for (const std::uint32_t threads : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        zap::WaitGroup group;
        group.add(1);
        std::atomic<bool> waiting{false};
        ThreadUsage before{}, after{};
        Call waiter([&] {
            waiting = true;
            before = ThreadUsage::now();
            group.wait();
            after = ThreadUsage::now();
        });
        pool.schedule(waiter);
        await_flag(waiting);
        std::this_thread::sleep_for(std::chrono::milliseconds{300});
        group.done();
        pool.shutdown();
        pool.join();
        EXPECT_LT(after.switches - before.switches, 20) << "the waiter woke up again and again";
    }
}

TEST(HelpingWait, WokenByNewWorkThatOnlyItCanRun) {
    // max_threads 1: the waiting worker is the only one, asleep in wait(); a
    // task scheduled from outside completes its group. If notify did not
    // wake the waiter, this would hang.
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    zap::WaitGroup group;
    group.add(1);
    std::atomic<bool> waiting{false};
    std::thread::id waiter_thread, child_thread;
    Call waiter([&] {
        waiter_thread = std::this_thread::get_id();
        waiting = true;
        group.wait();
    });
    Call child([&] {
        child_thread = std::this_thread::get_id();
        group.done();
    });
    pool.schedule(waiter);
    await_flag(waiting);
    std::this_thread::sleep_for(std::chrono::milliseconds{50});  // let it fall asleep
    pool.schedule(child);
    pool.shutdown();
    pool.join();
    EXPECT_EQ(child_thread, waiter_thread);  // the helping wait ran it
}

TEST(HelpingWait, TwoWorkersBothWaitingAreWokenByNewWork) {
    zap::ThreadPool pool(zap::Config{.max_threads = 2});
    pool.warm(2);
    zap::WaitGroup groups[2];
    std::atomic<int> waiting{0};
    std::atomic<int> ran{0};
    auto wait_on = [&](zap::WaitGroup& g) {
        return [&] {
            waiting++;
            g.wait();
        };
    };
    auto finish = [&](zap::WaitGroup& g) {
        return [&] {
            ran++;
            g.done();
        };
    };
    for (auto& g : groups) g.add(1);
    Call w0(wait_on(groups[0])), w1(wait_on(groups[1]));
    pool.schedule(w0);
    pool.schedule(w1);
    while (waiting.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds{1});
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
    Call c0(finish(groups[0])), c1(finish(groups[1]));
    pool.schedule(c1);
    pool.schedule(c0);
    for (auto& g : groups) {
        while (!g.is_done()) std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
    EXPECT_EQ(ran.load(), 2);
}

namespace {
// fib(n) with one WaitGroup per call: both halves are tasks, the caller waits.
// `deepest` records the most Fib frames stacked on one thread.
struct Fib : zap::Task {
    zap::ThreadPool* pool;
    int n;
    long result = 0;
    zap::WaitGroup* parent;
    std::atomic<int>* deepest;
    Fib(zap::ThreadPool* p, int k, zap::WaitGroup* g, std::atomic<int>* d)
        : zap::Task(&run), pool(p), n(k), parent(g), deepest(d) {}
    static void run(zap::Task* t) {
        static thread_local int frames = 0;
        auto* self = static_cast<Fib*>(t);
        const int mine = ++frames;
        int seen = self->deepest->load();
        while (mine > seen && !self->deepest->compare_exchange_weak(seen, mine)) {
        }
        if (self->n < 2) {
            self->result = self->n;
        } else {
            zap::WaitGroup group;
            Fib a(self->pool, self->n - 1, &group, self->deepest), b(self->pool, self->n - 2, &group, self->deepest);
            group.add(2);
            zap::Batch batch;
            batch.push(a);
            batch.push(b);
            self->pool->schedule(std::move(batch));
            group.wait();
            self->result = a.result + b.result;
        }
        --frames;
        if (self->parent != nullptr) self->parent->done();
    }
};
}  // namespace

TEST(HelpingWait, NestedWaitsOnOneAndTwoThreads) {
    for (const std::uint32_t threads : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        zap::WaitGroup top;
        top.add(1);
        std::atomic<int> deepest{0};
        Fib root(&pool, 16, &top, &deepest);
        pool.schedule(root);
        top.wait();  // from outside: sleeps until zero
        EXPECT_EQ(root.result, 987) << threads << " thread(s)";
    }
}

TEST(HelpingWait, NestedWaitsFollowTheRecursionOnOneWorker) {
    // A helping wait takes its own ring's newest task first (H2): its own
    // child. On one worker nothing is stolen, so the frames stacked are the
    // recursion's: fib(16) nests 16 deep. (Oldest first, the same run nested
    // 876 deep, and fib(20) passed the default depth bound of 4096 and hung.)
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    zap::WaitGroup top;
    top.add(1);
    std::atomic<int> deepest{0};
    Fib root(&pool, 16, &top, &deepest);
    pool.schedule(root);
    top.wait();
    EXPECT_EQ(root.result, 987);
    EXPECT_EQ(deepest.load(), 16);
}

TEST(HelpingWait, PrefersItsOwnChildren) {
    // An unrelated task waits in the global queue; the waiter's child is in its
    // own ring. The wait runs the child (own ring first) and returns without
    // taking the unrelated task (latency inversion avoided).
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    std::vector<std::string> order;  // touched by the one worker only
    std::atomic<bool> started{false}, release{false};
    zap::WaitGroup group;
    Call child([&] {
        order.push_back("child");
        group.done();
    });
    Call parent([&] {
        started = true;
        while (!release.load()) std::this_thread::yield();  // until `unrelated` is queued
        group.add(1);
        pool.schedule(child);
        group.wait();
        order.push_back("wait returned");
    });
    Call unrelated([&] { order.push_back("unrelated"); });
    pool.schedule(parent);
    await_flag(started);
    pool.schedule(unrelated);
    release = true;
    pool.shutdown();
    pool.join();
    EXPECT_EQ(order, (std::vector<std::string>{"child", "wait returned", "unrelated"}));
}

TEST(HelpingWait, DepthBoundIsMaxHelpDepthNestedWaits) {
    // Where the documented limit lies (helping_wait.hpp H2). One worker, a
    // chain of tasks: link k schedules link k + 1 and waits for it. Link 0
    // runs from the worker's loop; link k runs inside the helping waits of
    // links 0..k-1. With max_help_depth D, the waits of links 0..D-1 help
    // (each runs the next link: nobody else could), and the wait of link D is
    // at the bound: it does not run its own child, the leaf, queued on the
    // same worker, and sleeps until the count is zero. On this pool of one
    // thread that is the hang the bound trades a stack overflow for; here the
    // test thread completes link D's group, so the test cannot hang.
    for (const std::uint32_t bound : {1u, 3u, 16u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = 1, .max_help_depth = bound});
        struct Link : zap::Task {
            zap::ThreadPool* pool = nullptr;
            zap::Task* next = nullptr;
            zap::WaitGroup group;                 // link k waits here for link k + 1
            zap::WaitGroup* parent = nullptr;     // link k - 1's group
            std::atomic<bool>* last_waiting = nullptr;  // set by link D before its wait
            Link() : zap::Task(&run) {}
            static void run(zap::Task* t) {
                auto* self = static_cast<Link*>(t);
                self->group.add(1);
                self->pool->schedule(*self->next);
                if (self->last_waiting != nullptr) *self->last_waiting = true;
                self->group.wait();
                if (self->parent != nullptr) self->parent->done();
            }
        };
        std::vector<Link> links(bound + 1);
        std::atomic<bool> last_waiting{false}, leaf_ran{false};
        Call leaf([&] { leaf_ran = true; });  // link D's child; its group is completed from outside
        for (std::uint32_t k = 0; k <= bound; ++k) {
            links[k].pool = &pool;
            links[k].next = k < bound ? static_cast<zap::Task*>(&links[k + 1]) : &leaf;
            links[k].parent = k > 0 ? &links[k - 1].group : nullptr;
        }
        links[bound].last_waiting = &last_waiting;
        pool.schedule(links[0]);
        await_flag(last_waiting);  // links 1..D ran: D nested waits helped
        std::this_thread::sleep_for(std::chrono::milliseconds{50});
        EXPECT_FALSE(leaf_ran.load()) << "the wait nested " << bound + 1 << " deep ran its child (bound " << bound
                                      << ")";
        links[bound].group.done();  // in place of the leaf
        pool.shutdown();
        pool.join();
        EXPECT_TRUE(leaf_ran.load());  // run by the worker once the chain returned
        for (auto& link : links) EXPECT_TRUE(link.group.is_done());
    }
}

TEST(HelpingWait, DepthBoundBoundsTheStackOfNestedTasks) {
    // A chain of four tasks, each waiting for the next, on two workers with
    // max_help_depth 1: no worker ever has more than two task frames stacked.
    // (Three waiting tasks cannot block both workers, so the chain finishes.)
    zap::ThreadPool pool(zap::Config{.max_threads = 2, .max_help_depth = 1});
    static thread_local int frames = 0;
    std::atomic<int> deepest{0};
    struct Link : zap::Task {
        zap::ThreadPool* pool = nullptr;
        Link* next = nullptr;
        zap::WaitGroup* parent = nullptr;
        std::atomic<int>* deepest = nullptr;
        Link() : zap::Task(&run) {}
        static void run(zap::Task* t) {
            auto* self = static_cast<Link*>(t);
            ++frames;
            int seen = self->deepest->load();
            while (frames > seen && !self->deepest->compare_exchange_weak(seen, frames)) {
            }
            if (self->next != nullptr) {
                zap::WaitGroup group;
                group.add(1);
                self->next->parent = &group;
                self->pool->schedule(*self->next);
                group.wait();
            }
            --frames;
            if (self->parent != nullptr) self->parent->done();
        }
    };
    for (int round = 0; round < 200; ++round) {
        Link links[4];
        zap::WaitGroup all;
        all.add(1);
        for (int i = 0; i < 4; ++i) {
            links[i].pool = &pool;
            links[i].deepest = &deepest;
            links[i].next = i + 1 < 4 ? &links[i + 1] : nullptr;
        }
        links[0].parent = &all;
        pool.schedule(links[0]);
        all.wait();
    }
    EXPECT_LE(deepest.load(), 2);
}

TEST(HelpingWait, RunsTasksThatNeedALockTheWaiterHolds) {
    // The limit the pool documents (helping_wait.hpp): a helping wait may run
    // any task of the pool, here one queued after the waiter's own child (the
    // newest, which it runs first), while the waiter holds a lock. With a std::mutex that task would
    // deadlock; the test uses an owner-recording lock to see the re-entry.
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    std::atomic<std::thread::id> owner{};
    bool needed_held_lock = false;
    zap::WaitGroup group;
    Call needs_lock([&] { needed_held_lock = owner.load() == std::this_thread::get_id(); });
    Call child([&] { group.done(); });
    Call holder([&] {
        owner = std::this_thread::get_id();  // "lock"
        group.add(1);
        pool.schedule(child);
        pool.schedule(needs_lock);  // the newest in the ring: the wait runs it first
        group.wait();
        owner = std::thread::id{};  // "unlock"
    });
    pool.schedule(holder);
    pool.shutdown();
    pool.join();
    EXPECT_TRUE(needed_held_lock);
}
