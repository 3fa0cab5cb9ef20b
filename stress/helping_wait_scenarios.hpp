// SPDX-License-Identifier: MIT
// stress/helping_wait_scenarios.hpp - helping waits (src/zap/helping_wait.hpp)
// under load: workers wait for groups that are completed from outside the
// pool, by tasks scheduled from outside while the waiters sleep, and by
// waiters nested inside other waiters' helping waits.
//
// Checks: every waiter's wait returns (a lost wake-up is a hang, which the
// watchdog reports), each waiter sees the value written before its group's
// last done() (TSan checks the edge), and every task runs exactly once.
//
// Scenario `isolation` (src/zap/isolation.hpp): the deadlocking shape isolation cures
// under isolate(). Tasks X, from outside, each create blockers T (which
// block the worker, not helping, until X's wait has returned) and unrelated
// tasks F, then inside isolate() a TaskGroup of children (some forking a
// nested group of their own) and wait; more blockers for X come from the
// outside thread while X waits. Checks: every X's wait returns (with a
// helping wait that picked a T up, it never would: the watchdog reports the
// hang), every child, blocker and unrelated task runs exactly once, and no
// blocker runs on a thread while that thread's isolated wait is inside it.
#pragma once

#include "scenarios.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace stress {

template <class P>
struct HelpingWaitKit {
    using Pool = zap::BasicThreadPool<P>;
    using Task = zap::BasicTask<P>;
    using WaitGroup = zap::BasicWaitGroup<P>;

    // Waits for its own group from inside the pool, then reports to `finished`.
    struct Waiter : Task {
        WaitGroup group;
        WaitGroup* finished = nullptr;
        std::uint64_t work = 0;  // written before the group's last done()
        std::uint64_t seen = 0;  // read after wait() returned
        std::atomic<std::uint32_t> runs{0};
        Waiter() : Task(&run) { group.add(1); }
        static void run(Task* t) {
            executed();
            auto* self = static_cast<Waiter*>(t);
            self->runs.fetch_add(1, std::memory_order_relaxed);
            note("wait group (helping)");
            self->group.wait();
            self->seen = self->work;
            self->finished->done();
        }
    };

    // Completes a waiter's group from a task.
    struct Completer : Task {
        Waiter* waiter = nullptr;
        std::uint64_t value = 0;
        std::atomic<std::uint32_t> runs{0};
        Completer() : Task(&run) {}
        static void run(Task* t) {
            executed();
            auto* self = static_cast<Completer*>(t);
            self->runs.fetch_add(1, std::memory_order_relaxed);
            self->waiter->work = self->value;
            self->waiter->group.done();
        }
    };

    static void pause(Run& run) {
        const auto us = run.below(4) == 0 ? run.below(300) : 0;  // often none: the wake races the sleep
        if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds{us});
    }

    static void helping_wait(Run& run) {
        const std::size_t rounds = run.size(60);
        for (std::size_t round = 0; round < rounds; ++round) {
            stage("helping_wait: round");
            const auto threads = static_cast<std::uint32_t>(run.between(1, 3));
            // More waiters than workers: queued waiters are run by helping
            // waits, so waits nest.
            const std::size_t n = run.between(1, threads + 3);
            Pool pool(pool_config(threads));
            WaitGroup finished;
            finished.add(static_cast<std::uint32_t>(n));
            std::vector<std::unique_ptr<Waiter>> waiters;
            std::vector<std::unique_ptr<Completer>> completers;
            for (std::size_t i = 0; i < n; ++i) {
                waiters.push_back(std::make_unique<Waiter>());
                waiters.back()->finished = &finished;
                scheduled(1);
                pool.schedule(*waiters.back());
            }
            for (std::size_t i = 0; i < n; ++i) {
                pause(run);
                Waiter& w = *waiters[i];
                const std::uint64_t value = splitmix64(run.seed + round * 64 + i) | 1;
                if (run.below(2) == 0) {  // the last done() from outside the pool
                    w.work = value;
                    w.group.done();
                } else {  // new work that completes the group
                    completers.push_back(std::make_unique<Completer>());
                    completers.back()->waiter = &w;
                    completers.back()->value = value;
                    scheduled(1);
                    pool.schedule(*completers.back());
                }
            }
            note("wait group (outside)");
            finished.wait();
            for (std::size_t i = 0; i < n; ++i) {
                STRESS_CHECK(waiters[i]->runs.load() == 1);
                STRESS_CHECK(waiters[i]->seen == (splitmix64(run.seed + round * 64 + i) | 1));
            }
            for (const auto& c : completers) STRESS_CHECK(c->runs.load() == 1);
            stage("helping_wait: destroying pool");
        }
    }

    // Scenario `isolation`: one X, drawn before the round starts.
    struct Isolated {
        std::size_t blockers_before = 0;  // created by X, outside its region
        std::size_t blockers_outside = 0;  // created by the outside thread while X runs
        std::size_t unrelated = 0;
        std::size_t children = 0;
        std::size_t forking = 0;  // children that fork a nested group of two
        std::uint32_t child_us = 0;  // each child's work, so that X's wait outlasts its own ring
        std::atomic<bool> waited{false};  // X's wait has returned: its blockers may go
        std::atomic<bool> waiting{false};
        std::atomic<std::uint32_t> child_runs{0};
        std::atomic<std::uint32_t> blocker_runs{0};
        std::atomic<std::uint32_t> unrelated_runs{0};
    };

    static void isolation(Run& run) {
        using TaskGroup = zap::BasicTaskGroup<P>;
        const std::size_t rounds = run.size(40);
        for (std::size_t round = 0; round < rounds; ++round) {
            stage("isolation: round");
            const auto threads = static_cast<std::uint32_t>(run.between(1, 4));
            std::vector<std::unique_ptr<Isolated>> xs(run.between(1, threads + 2));
            for (auto& x : xs) {
                x = std::make_unique<Isolated>();
                x->blockers_before = run.below(3);
                x->blockers_outside = run.below(2);
                x->unrelated = run.below(4);
                x->children = run.between(1, 12);
                x->forking = run.below(x->children + 1);
                x->child_us = static_cast<std::uint32_t>(run.below(3) == 0 ? 0 : run.below(200));
            }
            Pool pool(pool_config(threads));
            WaitGroup finished;
            finished.add(static_cast<std::uint32_t>(xs.size()));
            auto blocker = [](Isolated& x) {
                executed();
                x.waited.wait(false);  // blocks this worker without helping
                x.blocker_runs.fetch_add(1, std::memory_order_relaxed);
            };
            for (auto& owned : xs) {
                Isolated* x = owned.get();
                scheduled(1);
                pool.spawn([&pool, &finished, blocker, x] {
                    executed();
                    for (std::size_t i = 0; i < x->blockers_before; ++i) {
                        scheduled(1);
                        pool.spawn([blocker, x] { blocker(*x); });
                    }
                    for (std::size_t i = 0; i < x->unrelated; ++i) {
                        scheduled(1);
                        pool.spawn([x] {
                            executed();
                            x->unrelated_runs.fetch_add(1, std::memory_order_relaxed);
                        });
                    }
                    pool.isolate([&] {
                        TaskGroup group(pool);
                        for (std::size_t c = 0; c < x->children; ++c) {
                            scheduled(1);
                            group.run([&pool, x, fork = c < x->forking] {
                                executed();
                                if (fork) {
                                    TaskGroup nested(pool);
                                    for (int g = 0; g < 2; ++g) {
                                        scheduled(1);
                                        nested.run([] { executed(); });
                                    }
                                    nested.wait();
                                }
                                if (x->child_us > 0) std::this_thread::sleep_for(std::chrono::microseconds{x->child_us});
                                x->child_runs.fetch_add(1, std::memory_order_relaxed);
                            });
                        }
                        x->waiting.store(true);
                        note("wait group (isolated)");
                        group.wait();
                    });
                    x->waited.store(true);
                    x->waited.notify_all();
                    finished.done();
                });
            }
            for (auto& x : xs) {
                while (x->blockers_outside > 0 && !x->waiting.load() && !x->waited.load()) std::this_thread::yield();
                for (std::size_t i = 0; i < x->blockers_outside; ++i) {
                    scheduled(1);
                    pool.spawn([blocker, x = x.get()] { blocker(*x); });
                }
            }
            note("wait group (outside)");
            finished.wait();
            pool.shutdown();
            pool.join();
            for (const auto& x : xs) {
                STRESS_CHECK(x->child_runs.load() == x->children);
                STRESS_CHECK(x->blocker_runs.load() == x->blockers_before + x->blockers_outside);
                STRESS_CHECK(x->unrelated_runs.load() == x->unrelated);
            }
            stage("isolation: destroying pool");
        }
    }
};

}  // namespace stress
