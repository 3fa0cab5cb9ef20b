// stress/helping_wait_scenarios.hpp - helping waits (src/zap/helping_wait.hpp)
// under load: workers wait for groups that are completed from outside the
// pool, by tasks scheduled from outside while the waiters sleep, and by
// waiters nested inside other waiters' helping waits.
//
// Checks: every waiter's wait returns (a lost wake-up is a hang, which the
// watchdog reports), each waiter sees the value written before its group's
// last done() (TSan checks the edge), and every task runs exactly once.
#pragma once

#include "scenarios.hpp"

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
};

}  // namespace stress
