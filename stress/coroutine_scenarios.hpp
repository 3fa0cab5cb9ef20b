// SPDX-License-Identifier: MIT
// stress/coroutine_scenarios.hpp - `co_await pool.schedule()` under load
// (src/zap/schedule_awaiter.hpp): coroutines started from two outside
// threads and from tasks hop onto the pool again and again, while tasks of
// the pool wait (helping) for some of them to finish.
//
// Checks: every hop resumes on a worker of that pool (worker_index()), each
// coroutine makes exactly its hops and ends once (each hop counts itself
// through executed()), and every waiter's wait returns (a hang is the
// watchdog's); ThreadSanitizer sees the awaiter handed from thread to thread.
#pragma once

#include "scenarios.hpp"

#include "../tests/detached.hpp"

#include <coroutine>
#include <exception>
#include <thread>

namespace stress {

template <class P>
struct CoroutineKit {
    using Pool = zap::BasicThreadPool<P>;
    using WaitGroup = zap::BasicWaitGroup<P>;

    using Detached = zap_test::Detached;

    struct Shared {
        explicit Shared(Pool& p) : pool(p) {}
        Pool& pool;
        WaitGroup all;  // every coroutine of the round
        std::atomic<std::uint64_t> hops{0}, off_pool{0};
    };

    // `hops` hops; the count lives in the frame, so a hop lost or doubled
    // shows as a wrong total.
    static Detached hopper(Shared& shared, std::uint64_t hops, WaitGroup* also) {
        std::uint64_t made = 0;
        for (std::uint64_t i = 0; i < hops; ++i) {
            co_await shared.pool.schedule();
            executed();
            if (!shared.pool.worker_index().has_value()) shared.off_pool.fetch_add(1, std::memory_order_relaxed);
            ++made;
        }
        shared.hops.fetch_add(made, std::memory_order_relaxed);
        if (also != nullptr) also->done();  // a task of the pool waits for this one
        shared.all.done();
    }

    static void coroutine(Run& run) {
        for (std::uint32_t threads : {1u, 2u, 4u}) {
            stage("coroutine: pool");
            Pool pool(pool_config(threads));
            for (int r = 0; r < 3; ++r) {
                stage("coroutine: round");
                Shared shared(pool);
                const std::size_t per_thread = run.between(1, run.size(40));
                const std::uint64_t hops = run.between(1, 40);
                const std::size_t waiting_tasks = run.between(0, 8);
                const std::uint64_t coroutines = 2 * per_thread + waiting_tasks;
                shared.all.add(static_cast<std::uint32_t>(coroutines));
                scheduled(coroutines * hops + waiting_tasks);
                // Tasks that start a coroutine and wait (helping) for it to end.
                for (std::size_t t = 0; t < waiting_tasks; ++t) {
                    pool.spawn([&shared, hops] {
                        executed();
                        WaitGroup mine;
                        mine.add();
                        hopper(shared, hops, &mine);
                        mine.wait();
                    });
                }
                auto starter = [&] {
                    set_role("starter");
                    for (std::size_t c = 0; c < per_thread; ++c) hopper(shared, hops, nullptr);
                };
                std::thread a(starter), b(starter);
                a.join();
                b.join();
                shared.all.wait();
                STRESS_CHECK(shared.hops.load() == coroutines * hops);
                STRESS_CHECK(shared.off_pool.load() == 0);
            }
        }
    }
};

}  // namespace stress
