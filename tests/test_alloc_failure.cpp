// SPDX-License-Identifier: MIT
// Allocation failure, injected: every allocation that spawn, submit,
// TaskGroup::run (with and without a stop_token) and Mailbox::send/close
// make fails in turn (the first, then the second, ... until the call makes
// no more), through the Platform's allocate() and the global operator new
// (failing_allocation.hpp). Each time: the call throws std::bad_alloc; the
// callable of a call that threw never runs and is destroyed (nothing leaks:
// the AddressSanitizer build checks the rest); the callable of a call that
// returned runs exactly once; a value a send could not queue stays with the
// caller; a failure that new(std::nothrow) reports as null is absorbed by
// its caller by design (failing_allocation.hpp). The pool works afterwards,
// and a failed slab allocation uses up no part of the thread's block budget
// (closure_alloc.hpp CA2').
#include "failing_allocation.hpp"

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace {

using Pool = zap::BasicThreadPool<FailingPlatform>;
using TaskGroup = zap::BasicTaskGroup<FailingPlatform>;
using WaitGroup = zap::BasicWaitGroup<FailingPlatform>;

// What became of each attempt's callable.
struct Ledger {
    static constexpr long attempts = 64;
    std::array<std::atomic<int>, attempts> runs{};
    std::array<bool, attempts> threw{};
    std::shared_ptr<int> alive = std::make_shared<int>(0);  // every callable holds a copy

    // Every attempt that threw never ran, every other ran once; no callable
    // is left (a spawned one is destroyed by its worker just after it ran:
    // given 10 s).
    void expect_consistent(long made) const {
        for (long k = 0; k < made; ++k) EXPECT_EQ(runs[k].load(), threw[k] ? 0 : 1) << "attempt " << k;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (alive.use_count() > 1 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        EXPECT_EQ(alive.use_count(), 1) << "a callable was neither run nor destroyed";
    }
};

// Arms this thread around one call: its k-th allocation fails.
class Armed {
public:
    explicit Armed(long k) noexcept { failing::fail_after(k); }
    ~Armed() { failing::disarm(); }
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;
};

// Runs attempt(k, ledger) for k = 0, 1, ..., each on a fresh thread (whose
// first allocations make its closure cache), until an attempt makes fewer
// than k + 1 allocations. Returns the number of attempts that threw. An
// attempt that returned normally with its failure injected swallowed a
// std::bad_alloc: a failure of the test.
template <class Attempt>
long fail_each_allocation_in_turn(Ledger& ledger, Attempt attempt) {
    long k = 0;
    for (;; ++k) {
        EXPECT_LT(k, Ledger::attempts) << "more allocations than expected";
        if (k == Ledger::attempts) break;
        bool threw = false, injected = false;
        const long injected_before = failing::injected.load();
        const long absorbed_before = failing::absorbed.load();
        std::thread([&] {
            try {
                attempt(k, ledger);
            } catch (const std::bad_alloc&) {
                threw = true;
            }
        }).join();
        injected = failing::injected.load() != injected_before;  // only this thread was armed
        const bool absorbed = failing::absorbed.load() != absorbed_before;  // a new(std::nothrow) by design
        ledger.threw[k] = threw;
        EXPECT_EQ(threw, injected && !absorbed) << "attempt " << k << (threw ? " threw without a failure to throw"
                                                                            : " swallowed an allocation failure");
        if (!injected) break;  // it made k allocations or fewer: every one has failed once
    }
    return k;  // attempts k' < k threw; attempt k completed
}

}  // namespace

// Whether spawn.hpp takes heap tasks from closure_alloc.hpp on platform P.
template <class P>
constexpr bool recycles_closures = requires { P::recycles_closures; };

// What a heap task allocates on a fresh thread: its closure cache and first
// slab where the Platform recycles closures (closure_alloc.hpp), else one block.
constexpr long heap_task_points = recycles_closures<FailingPlatform> ? 2 : 1;

TEST(AllocFailure, SpawnSubmitAndTaskGroupRunThrowAndLoseNothing) {
    Pool pool(2);
    pool.warm(2);  // no worker spawn (the core's allocation) during an armed call
    struct Case {
        const char* name;
        std::function<void(Pool&, long, Ledger&)> attempt;
        long min_points;  // allocations the call is known to make on a fresh thread
    };
    const std::vector<Case> cases = {
        {"spawn", [](Pool& p, long k, Ledger& l) {
             WaitGroup done;
             done.add();
             {
                 const Armed armed(k);
                 try {
                     p.spawn([&l, k, keep = l.alive, &done] {
                         l.runs[k]++;
                         done.done();
                     });
                 } catch (...) {
                     done.done();
                     throw;
                 }
             }
             done.wait();
         }, heap_task_points},
        {"spawn (a task too large for a block)", [](Pool& p, long k, Ledger& l) {
             WaitGroup done;
             done.add();
             std::array<char, 200> big{};
             {
                 const Armed armed(k);
                 try {
                     p.spawn([&l, k, keep = l.alive, &done, big] {
                         l.runs[k] += big[0] + 1;
                         done.done();
                     });
                 } catch (...) {
                     done.done();
                     throw;
                 }
             }
             done.wait();
         }, 1},
        {"submit", [](Pool& p, long k, Ledger& l) {
             std::future<int> result;
             {
                 const Armed armed(k);
                 result = p.submit([&l, k, keep = l.alive] { return ++l.runs[k]; });
             }
             EXPECT_EQ(result.get(), 1);
         }, heap_task_points + (ZAP_TEST_FAILS_NEW ? 1 : 0)},  // + the future's shared state
        {"TaskGroup::run", [](Pool& p, long k, Ledger& l) {
             TaskGroup group(p);
             {
                 const Armed armed(k);
                 group.run([&l, k, keep = l.alive] { l.runs[k]++; });
             }
             group.wait();
         }, heap_task_points},
        {"TaskGroup::run with a stop_token", [](Pool& p, long k, Ledger& l) {
             TaskGroup group(p);
             {
                 const Armed armed(k);
                 group.run([&l, k, keep = l.alive](std::stop_token token) { l.runs[k] += token.stop_possible() ? 1 : 100; });
             }
             group.wait();
         }, heap_task_points + (ZAP_TEST_FAILS_NEW ? 1 : 0)},  // + the group's std::stop_source
    };
    for (const Case& c : cases) {
        Ledger ledger;
        const long points = fail_each_allocation_in_turn(ledger, [&](long k, Ledger& l) { c.attempt(pool, k, l); });
        EXPECT_GE(points, c.min_points) << c.name << ": fewer allocations failed than it makes";
        ledger.expect_consistent(points + 1);
        std::printf("%s: %ld allocation(s) failed in turn\n", c.name, points);
    }

    // The pool works afterwards, from outside and from its workers.
    std::atomic<int> ran{0};
    TaskGroup group(pool);
    for (int i = 0; i < 100; ++i) group.run([&] {
        pool.parallel_for(0, 10, [&](int) { ran++; });
        pool.spawn([&] { ran++; });
    });
    group.wait();
    pool.parallel_for(0, 100, [&](int) { ran++; });
    while (ran.load() < 1200) std::this_thread::yield();
}

namespace {

// A value that fills a deque node on its own: each send past the first needs a new node.
struct Big {
    std::unique_ptr<int> value;
    std::array<char, 600> pad{};
};

}  // namespace

TEST(AllocFailure, MailboxSendAndCloseThrowAndKeepTheValues) {
    if (!ZAP_TEST_FAILS_NEW) GTEST_SKIP() << "a Mailbox allocates through operator new, which ThreadSanitizer owns";
    zap::BasicMailbox<FailingPlatform, Big> box;
    ASSERT_TRUE(box.send(Big{std::make_unique<int>(0)}));
    int sent = 1, refused = 0;
    for (int i = 1; i <= 20; ++i) {
        Big big{std::make_unique<int>(i)};
        bool accepted = false;
        try {
            const Armed armed(0);  // the send's first allocation fails
            accepted = box.send(std::move(big));
        } catch (const std::bad_alloc&) {
            ASSERT_NE(big.value, nullptr) << "a send that threw took the value";
            EXPECT_EQ(*big.value, i);
            ++refused;
            accepted = box.send(std::move(big));  // the retry succeeds
        }
        ASSERT_TRUE(accepted);
        ++sent;
    }
    EXPECT_GT(refused, 0) << "no send allocated";
    std::vector<Big> left;
    try {
        const Armed armed(0);
        left = box.close();
        FAIL() << "close() allocated nothing";
    } catch (const std::bad_alloc&) {
        EXPECT_FALSE(box.closed()) << "a close() that threw changed the mailbox";
    }
    left = box.close();
    ASSERT_EQ(static_cast<int>(left.size()), sent);
    for (int i = 0; i < sent; ++i) EXPECT_EQ(*left[i].value, i);
}

TEST(AllocFailure, AFailedSlabUsesUpNoneOfTheBlockBudget) {
    if constexpr (!recycles_closures<FailingPlatform>) {
        GTEST_SKIP() << "this platform allocates every heap task (closure recycling is the Linux and Windows platforms')";
    }
    // On one thread: its Cache is made, then its first slab fails 1000
    // times - more than keep_blocks / slab_blocks (512) slabs. Afterwards
    // its tasks must still come from slabs, not one Platform allocation
    // each (closure_alloc.hpp raised its slab count before the allocation:
    // 512 failures used up the budget for good).
    Pool pool(2);
    pool.warm(2);  // no worker spawn (the core's allocation) during an armed call
    std::atomic<int> ran{0};
    std::thread([&] {
        pool.submit([] {}).get();  // the Cache and a first slab; the block is back when get() returns
        // Use up that slab (63 blocks: the one back, 62 more), keeping every block out.
        WaitGroup hold;
        hold.add();
        std::atomic<int> held{0};
        const auto keep = [&] {
            held++;
            hold.wait();
        };
        TaskGroup holders(pool);
        long failures = 0;
        for (int i = 0; i < 63; ++i) holders.run(keep);
        for (int i = 0; i < 1000; ++i) {
            try {
                const Armed armed(0);  // the next slab fails
                pool.spawn([&] { ran++; });
            } catch (const std::bad_alloc&) {
                ++failures;
            }
        }
        EXPECT_EQ(failures, 1000);
        const long singles = FailingPlatform::single_blocks.load();
        const long slabs = FailingPlatform::slabs.load();
        for (int i = 0; i < 50; ++i) pool.spawn([&] { ran++; });
        EXPECT_EQ(FailingPlatform::single_blocks.load() - singles, 0) << "tasks no longer come from slabs";
        EXPECT_EQ(FailingPlatform::slabs.load() - slabs, 1);
        hold.done();
        holders.wait();
    }).join();
    while (ran.load() < 50) std::this_thread::yield();
}

TEST(AllocFailure, AStopSourceThatCannotBeMadeLeavesTheGroupUsable) {
    if (!ZAP_TEST_FAILS_NEW) GTEST_SKIP() << "std::stop_source allocates through operator new, which ThreadSanitizer owns";
    // run(f(stop_token)) makes the group's stop_source first (cancellation.hpp
    // C8). When that throws, the claim on the making is given back: the next
    // request makes it (else it would wait for a maker that is gone, forever).
    Pool pool(2);
    pool.warm(2);  // no worker spawn (the core's allocation) during an armed call
    TaskGroup group(pool);
    std::atomic<int> ran{0};
    {
        const Armed armed(0);
        EXPECT_THROW(group.run([&](std::stop_token) { ran += 100; }), std::bad_alloc);
    }
    std::atomic<bool> finished{false};
    std::thread retry([&] {
        group.run([&](std::stop_token token) { ran += token.stop_possible() ? 1 : 100; });
        group.wait();
        group.cancel();
        EXPECT_TRUE(group.stop_token().stop_requested());
        group.wait();
        finished = true;
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!finished.load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!finished.load()) {
        std::fprintf(stderr, "the request after the failed one waits for the stop_source forever\n");
        std::abort();
    }
    retry.join();
    EXPECT_EQ(ran.load(), 1);
}

namespace {

zap::Lazy<int> hop_and_count(Pool& pool, std::shared_ptr<int> keep) {
    co_await pool.schedule();
    co_return keep ? 1 : 0;
}

// Makes both children's frames and when_all's frame on the calling thread
// (the fork's body runs there until its first suspension), then joins them.
zap::Lazy<int> fork_two(Pool& pool, Ledger& ledger, long k) {
    auto [a, b] = co_await zap::basic_when_all<FailingPlatform>(hop_and_count(pool, ledger.alive),
                                                                hop_and_count(pool, ledger.alive));
    ledger.runs[k] += a + b - 1;  // once, when both children ran
    co_return a + b;
}

}  // namespace

// Lazy's frames (lazy.hpp) come from operator new: each frame of a fork -
// the outer lazy, each child, when_all's own - fails in turn. The failure
// reaches the caller of sync_wait as std::bad_alloc (a frame that cannot be
// made is an exception inside the body that asked for it), no child runs
// and every frame already made is destroyed (the children's copies of
// `alive` are gone); then the pool works.
TEST(AllocFailure, ALazyForkWhoseFrameCannotBeMadeThrowsAndLeavesNothing) {
    if (!ZAP_TEST_FAILS_NEW) GTEST_SKIP() << "coroutine frames come from operator new, which ThreadSanitizer owns";
    Pool pool(2);
    pool.warm(2);  // no worker spawn (the core's allocation) during an armed call
    Ledger ledger;
    const long attempts = fail_each_allocation_in_turn(ledger, [&](long k, Ledger& l) {
        const Armed armed(k);
        EXPECT_EQ(zap::basic_sync_wait<FailingPlatform>(fork_two(pool, l, k)), 2);
    });
    EXPECT_GE(attempts, 4) << "the outer frame, two children and when_all's frame: each an allocation";
    ledger.expect_consistent(attempts + 1);
    EXPECT_EQ(zap::basic_sync_wait<FailingPlatform>(fork_two(pool, ledger, 0)), 2);
}

#if defined(_WIN32)
namespace {
std::atomic<int> exit_calls{0};
void count_exit_call(void*) { exit_calls.fetch_add(1); }
}  // namespace

// Windows keeps a thread's exit calls in a chain of its own allocations
// (windows_platform.hpp at_thread_exit). A call whose link cannot be
// allocated is refused (false: the caller frees what it meant to hand over),
// and the calls registered before it still run when the thread exits.
TEST(AllocFailure, AThreadExitCallThatCannotBeRecordedIsRefusedAndKeepsTheEarlierOne) {
    if (!ZAP_TEST_FAILS_NEW) GTEST_SKIP() << "the link comes from operator new, which ThreadSanitizer owns";
    bool first = false;
    bool refused = false;
    std::thread thread([&] {
        first = zap::WindowsPlatform::at_thread_exit<&count_exit_call>(nullptr);
        const Armed armed(0);
        refused = !zap::WindowsPlatform::at_thread_exit<&count_exit_call>(nullptr);
    });
    thread.join();
    EXPECT_TRUE(first);
    EXPECT_TRUE(refused) << "a call that could not be recorded was reported recorded";
    EXPECT_EQ(exit_calls.load(), 1) << "the call registered before the failed one ran " << exit_calls.load() << " times";
}

// Windows' spawn allocates the thread's record first: when it cannot, no
// thread starts and spawn reports the failure (the pool then runs with the
// workers it has, pool_core.hpp A7).
TEST(AllocFailure, AThreadWhoseRecordCannotBeAllocatedIsNotStarted) {
    if (!ZAP_TEST_FAILS_NEW) GTEST_SKIP() << "the record comes from operator new, which ThreadSanitizer owns";
    bool started = true;
    {
        const Armed armed(0);
        started = zap::WindowsPlatform::spawn(zap::ThreadOptions{0}, +[](void*) -> void* { return nullptr; }, nullptr);
    }
    EXPECT_FALSE(started);
}

// A thread whose closure cache cannot be registered for its exit (the
// chain's link cannot be allocated) gives the cache back at once, and its
// heap tasks take blocks of their own (closure_alloc.hpp CA1): a cache kept
// without its exit call would keep its slabs after the thread is gone.
TEST(AllocFailure, AThreadWhoseCacheCannotBeRegisteredTakesBlocksOfItsOwn) {
    if (!ZAP_TEST_FAILS_NEW) GTEST_SKIP() << "the link comes from operator new, which ThreadSanitizer owns";
    using Memory = zap::detail::ClosureMemory<FailingPlatform>;
    const long singles = FailingPlatform::single_blocks.load();
    const long slabs = FailingPlatform::slabs.load();
    std::thread thread([] {
        void* task = nullptr;
        {
            const Armed armed(1);  // the Cache is allocated; its exit call's link is not
            task = Memory::allocate(48, alignof(std::max_align_t));
        }
        Memory::deallocate(task, 48, alignof(std::max_align_t));
    });
    thread.join();
    EXPECT_EQ(FailingPlatform::single_blocks.load() - singles, 1) << "the task did not take a block of its own";
    EXPECT_EQ(FailingPlatform::slabs.load() - slabs, 0) << "the unregistered cache carved a slab";
}
#endif
