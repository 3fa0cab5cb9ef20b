// SPDX-License-Identifier: MIT
// stress/work_conserving_scenarios.hpp - work conservation (pool_core.hpp
// A4, P6) under load: k tasks (2 <= k <= max_threads) that each wait until
// all k have started, scheduled from outside or from a running task, one
// schedule() each or as one batch, on a lazy or a warmed pool. They all
// complete only if no worker sleeps or stays unspawned while one of them is
// queued behind the others.
//
// A member that waits too long gives up and the round fails (STRESS_CHECK
// with the seed), well before the watchdog; the chaos platform's delays,
// yields and spurious wake-ups stretch every window of the wake rule. Spawn
// failures are switched off for this scenario: with a worker missing, k
// members cannot all run at once, and the promise does not cover that.
#pragma once

#include "scenarios.hpp"

#include <chrono>
#include <deque>
#include <thread>

namespace stress {

template <class P>
struct WorkConservingKit {
    using Pool = zap::BasicThreadPool<P>;
    using Task = zap::BasicTask<P>;
    using Batch = zap::BasicBatch<P>;
    using WaitGroup = zap::BasicWaitGroup<P>;
    using Clock = std::chrono::steady_clock;

    struct Meeting {
        std::uint32_t k = 0;
        Clock::time_point deadline;
        std::atomic<std::uint32_t> arrived{0};
        std::atomic<std::uint32_t> gave_up{0};
        WaitGroup finished;
    };

    struct Member : Task {
        Meeting* meeting = nullptr;
        Member() : Task(&run) {}
        static void run(Task* t) {
            executed();
            Meeting& m = *static_cast<Member*>(t)->meeting;
            m.arrived.fetch_add(1);
            note("rendezvous: waiting for the others");
            while (m.arrived.load() < m.k) {
                if (Clock::now() > m.deadline) {
                    m.gave_up.fetch_add(1);
                    break;
                }
                std::this_thread::yield();
            }
            m.finished.done();
        }
    };

    // Schedules the members from inside the pool, then returns.
    struct Driver : Task {
        Pool* pool = nullptr;
        std::deque<Member>* members = nullptr;
        bool batch = false;
        Driver() : Task(&run) {}
        static void run(Task* t) {
            executed();
            auto* self = static_cast<Driver*>(t);
            schedule_members(*self->pool, *self->members, self->batch);
        }
    };

    static void schedule_members(Pool& pool, std::deque<Member>& members, bool batch) {
        Batch all;
        for (Member& m : members) {
            if (batch) {
                all.push(m);
            } else {
                pool.schedule(m);
            }
        }
        if (batch) pool.schedule(std::move(all));
    }

    static void rendezvous(Run& run) {
        SpawnFaults::reset(SpawnPolicy::never);
        const std::size_t rounds = run.size(400);
        for (std::size_t round = 0; round < rounds; ++round) {
            stage("rendezvous: round");
            const auto threads = static_cast<std::uint32_t>(run.between(2, 4));
            Meeting meeting;
            meeting.k = static_cast<std::uint32_t>(run.between(2, threads));
            meeting.deadline = Clock::now() + std::chrono::seconds(20);
            meeting.finished.add(meeting.k);
            std::deque<Member> members(meeting.k);
            for (Member& m : members) m.meeting = &meeting;
            scheduled(meeting.k);
            const bool batch = run.below(2) == 0;
            const bool from_task = run.below(2) == 0;
            Driver driver;  // before the pool: it outlives the pool's last touch of it
            Pool pool(pool_config(threads));
            if (run.below(2) == 0) pool.warm(threads);
            driver.pool = &pool;
            driver.members = &members;
            driver.batch = batch;
            if (from_task) {
                scheduled(1);
                pool.schedule(driver);
            } else {
                schedule_members(pool, members, batch);
            }
            note("wait group (outside)");
            meeting.finished.wait();
            STRESS_CHECK(meeting.gave_up.load() == 0);  // a member waited in a queue while a worker idled
            stage("rendezvous: destroying pool");
        }
    }
};

}  // namespace stress
