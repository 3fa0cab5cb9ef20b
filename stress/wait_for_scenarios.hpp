// SPDX-License-Identifier: MIT
// stress/wait_for_scenarios.hpp - timed waits under load (WaitGroup::wait_for
// and TaskGroup::wait_for: step 5 of src/zap/wait_group.hpp, step 8 of
// task_group.hpp). Groups of children run on pools of 1 to 3 threads; each
// group's waiter - a thread outside the pool or a task on a worker, which
// helps - calls wait_for with short random timeouts (0 to 200 us) until it
// returns true, so timeouts race the last done() all the time, and frees the
// group the moment it does (W1). Some groups hold one count for the outside
// thread, which gives it back only after the pool is destroyed: their
// worker's wait_for times out and returns, and the last done() then comes
// with the workers gone (W2: it must name no helper word). TaskGroups whose
// children may throw are waited for the same way.
//
// Checks: every wait_for that returns true comes after every child of its
// group ran exactly once, and sees each child's write (TSan checks the
// edge); a freed group touched by a late done() is AddressSanitizer's; a
// TaskGroup's wait_for throws exactly when a child threw, and only on the
// call that returns (a wait that never returns is the watchdog's).
#pragma once

#include "scenarios.hpp"

#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace stress {

template <class P>
struct WaitForKit {
    using Pool = zap::BasicThreadPool<P>;
    using WaitGroup = zap::BasicWaitGroup<P>;
    using TaskGroup = zap::BasicTaskGroup<P>;

    // One group and what its children wrote.
    struct Group {
        std::unique_ptr<WaitGroup> wait_group = std::make_unique<WaitGroup>();
        std::vector<std::uint64_t> written;  // child i writes its slot before done()
        std::unique_ptr<std::atomic<std::uint32_t>[]> runs;
        std::uint64_t seed = 0;
        bool on_worker = false;      // the waiter is a task of the pool (it helps)
        bool held = false;           // one count held by the outside thread until the pool is gone
        bool spawned_by_waiter = false;  // the waiter schedules the children itself
        std::atomic<bool> returned{false};
        std::uint64_t timeouts = 0;
    };

    static std::uint64_t expected(const Group& g, std::size_t i) { return splitmix64(g.seed + i) | 1; }

    static void schedule_children(Pool& pool, Group& g, Run* run_for_work) {
        for (std::size_t i = 0; i < g.written.size(); ++i) {
            const unsigned work = run_for_work != nullptr ? static_cast<unsigned>(run_for_work->below(400)) : 50;
            scheduled(1);
            pool.spawn([&g, i, work] {
                executed();
                g.runs[i].fetch_add(1, std::memory_order_relaxed);
                g.written[i] = busy(0, work) == 1 ? 0 : expected(g, i);  // never 0: busy() only delays
                g.wait_group->done();
            });
        }
    }

    // Waits with short timeouts until true; then checks and frees the group
    // at once. `limited`: one try only (a held group cannot finish yet).
    static void wait_and_free(Group& g, std::uint64_t seed, bool limited) {
        std::mt19937_64 rng(seed);
        for (;;) {
            note(g.on_worker ? "wait_for (helping)" : "wait_for (outside)");
            if (g.wait_group->wait_for(std::chrono::microseconds{rng() % 201})) break;
            ++g.timeouts;
            if (limited) {
                g.returned.store(true);
                return;
            }
        }
        STRESS_CHECK(!g.held);
        for (std::size_t i = 0; i < g.written.size(); ++i) {
            STRESS_CHECK(g.runs[i].load(std::memory_order_relaxed) == 1);
            STRESS_CHECK(g.written[i] == expected(g, i));
        }
        g.wait_group.reset();  // W1: the last done() must be done with it
        g.returned.store(true);
    }

    // `groups` outlive the pool: the held ones are finished after it is gone.
    static void wait_groups(Run& run, Pool& pool, std::vector<std::unique_ptr<Group>>& groups) {
        groups.resize(run.between(1, 5));
        std::vector<std::thread> outside;
        WaitGroup waiters;  // the worker waiters' tasks
        for (auto& owned : groups) {
            owned = std::make_unique<Group>();
            Group& g = *owned;
            const std::size_t n = run.between(1, 8);
            g.written.assign(n, 0);
            g.runs = std::make_unique<std::atomic<std::uint32_t>[]>(n);
            g.seed = run.rng();
            g.on_worker = run.below(2) == 0;
            g.held = run.below(4) == 0;
            g.spawned_by_waiter = g.on_worker && run.below(2) == 0;
            g.wait_group->add(static_cast<std::uint32_t>(n + (g.held ? 1 : 0)));
            if (!g.spawned_by_waiter) schedule_children(pool, g, &run);
            const std::uint64_t seed = run.rng();
            if (g.on_worker) {
                waiters.add(1);
                scheduled(1);
                pool.spawn([&pool, &g, &waiters, seed] {
                    executed();
                    if (g.spawned_by_waiter) schedule_children(pool, g, nullptr);
                    wait_and_free(g, seed, g.held);
                    waiters.done();
                });
            } else {
                outside.emplace_back([&g, seed] {
                    set_role("timed waiter");
                    wait_and_free(g, seed, g.held);
                });
            }
        }
        note("wait group (waiters)");
        waiters.wait();
        for (auto& t : outside) t.join();
        for (auto& g : groups) STRESS_CHECK(g->returned.load());
    }

    // After the pool is gone: the held counts' done(), then the usual check.
    static void finish_held(std::vector<std::unique_ptr<Group>>& groups) {
        for (auto& g : groups) {
            if (!g->held) continue;
            g->held = false;
            g->wait_group->done();  // W2: the worker's word it armed with is freed by now
            wait_and_free(*g, g->seed, false);
        }
    }

    struct Thrown : std::runtime_error {
        Thrown() : std::runtime_error("thrown by a child") {}
    };

    // A TaskGroup waited for with short timeouts; true exactly once, throwing
    // exactly when a child threw.
    static void task_group(Run& run, Pool& pool) {
        TaskGroup group(pool);
        const std::size_t n = run.between(1, 12);
        const std::size_t throw_at = run.below(2 * n);  // >= n: nobody throws
        std::atomic<std::uint32_t> ran{0};
        scheduled(n);
        for (std::size_t i = 0; i < n; ++i) group.run([&ran, i, throw_at, work = run.below(300)] {
            executed();
            busy(i, static_cast<unsigned>(work));
            ran.fetch_add(1, std::memory_order_relaxed);
            if (i == throw_at) throw Thrown();
        });
        bool threw = false;
        for (;;) {
            try {
                if (group.wait_for(std::chrono::microseconds{run.below(201)})) break;
            } catch (const Thrown&) {
                threw = true;
                break;
            }
        }
        STRESS_CHECK(ran.load() == n);
        STRESS_CHECK(threw == (throw_at < n));
        STRESS_CHECK(group.wait_for(std::chrono::nanoseconds{0}));  // the round ended: nothing left to report
    }

    static void wait_for(Run& run) {
        const std::size_t rounds = run.size(60);
        for (std::size_t round = 0; round < rounds; ++round) {
            stage("wait_for: round");
            const auto threads = static_cast<std::uint32_t>(run.between(1, 3));
            std::vector<std::unique_ptr<Group>> groups;
            {
                Pool pool(pool_config(threads));
                if (run.below(2) == 0) pool.warm(threads);
                wait_groups(run, pool, groups);
                stage("wait_for: task group");
                if (run.below(2) == 0) {
                    task_group(run, pool);
                } else {
                    scheduled(1);
                    pool.submit([&] {
                            executed();
                            task_group(run, pool);
                        }).get();
                }
                stage("wait_for: destroying pool");
            }
            stage("wait_for: held groups, pool gone");
            finish_held(groups);
        }
    }
};

}  // namespace stress
