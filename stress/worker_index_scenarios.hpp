// SPDX-License-Identifier: MIT
// stress/worker_index_scenarios.hpp - worker_index() and
// Config::on_unhandled_exception under load: per-worker scratch written with
// plain (non-atomic) adds from parallel_for pieces, TaskGroup children,
// parallel_reduce terms and spawned tasks, some of which throw into the
// pool's handler, which counts in the same scratch.
//
// Checks: the scratch totals are exact (two threads sharing an index while
// they run would lose updates, and ThreadSanitizer reports the race); every
// thrown exception reaches the handler once, on a worker; every task runs.
#pragma once

#include "scenarios.hpp"

#include <exception>
#include <stdexcept>
#include <vector>

namespace stress {

template <class P>
struct WorkerIndexKit {
    using Pool = zap::BasicThreadPool<P>;
    using TaskGroup = zap::BasicTaskGroup<P>;

    struct alignas(64) Slot {
        std::uint64_t sum = 0;
        std::uint64_t caught = 0;
    };

    struct Scratch {
        Pool* pool = nullptr;
        std::vector<Slot> slots;
        std::uint64_t outside = 0;  // the owner's own pieces (only the owner adds here)
        std::atomic<std::uint64_t> handled_off_pool{0};

        // Adds on the calling thread's own slot: a worker's, or the owner's.
        void add(std::uint64_t x) {
            if (const auto index = pool->worker_index()) {
                slots[*index].sum += x;
            } else {
                outside += x;
            }
        }
    };

    static void worker_index(Run& run) {
        for (std::uint32_t threads : {1u, 2u, 4u}) {
            stage("worker_index: pool");
            Scratch scratch;
            scratch.slots.resize(threads);
            zap::Config config = pool_config(threads);
            config.on_unhandled_exception = [&scratch](std::exception_ptr) {
                const auto index = scratch.pool->worker_index();
                if (!index) {
                    scratch.handled_off_pool.fetch_add(1, std::memory_order_relaxed);
                    return;
                }
                scratch.slots[*index].caught += 1;
            };
            std::uint64_t expected = 0, thrown = 0;
            {
                Pool pool(config);
                scratch.pool = &pool;
                for (int r = 0; r < 4; ++r) {
                    stage("worker_index: round");
                    const std::size_t n = run.between(1, run.size(5'000));
                    scheduled(n);
                    pool.parallel_for(std::size_t{0}, n, [&](std::size_t i) {
                        executed();
                        scratch.add(i);
                    }, zap::Grain{run.between(1, 64)});
                    expected += n * (n - 1) / 2;
                    const std::size_t children = run.between(1, 64);
                    scheduled(children);
                    {
                        TaskGroup group(pool);
                        for (std::size_t c = 0; c < children; ++c) group.run([&scratch, c] {
                            executed();
                            scratch.add(c + 1);
                        });
                        group.wait();
                    }
                    expected += children * (children + 1) / 2;
                    scheduled(n);
                    const std::uint64_t reduced = pool.parallel_reduce(
                        std::size_t{0}, n, std::uint64_t{0},
                        [&](std::size_t i) {
                            executed();
                            scratch.add(1);
                            return std::uint64_t{i};
                        },
                        [](std::uint64_t a, std::uint64_t b) { return a + b; });
                    STRESS_CHECK(reduced == n * (n - 1) / 2);
                    expected += n;
                    const std::size_t spawns = run.between(1, 100);
                    scheduled(spawns);
                    for (std::size_t s = 0; s < spawns; ++s) {
                        const bool throws = run.below(3) == 0;
                        thrown += throws ? 1 : 0;
                        pool.spawn([&scratch, throws] {
                            executed();
                            scratch.add(7);
                            if (throws) throw std::runtime_error("spawned");
                        });
                    }
                    expected += 7 * spawns;
                }
            }  // the destructor runs every spawned task
            std::uint64_t total = scratch.outside, caught = 0;
            for (const Slot& s : scratch.slots) {
                total += s.sum;
                caught += s.caught;
            }
            STRESS_CHECK(total == expected);
            STRESS_CHECK(caught + scratch.handled_off_pool.load() == thrown);
        }
    }
};

}  // namespace stress
