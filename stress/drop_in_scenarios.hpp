// SPDX-License-Identifier: MIT
// stress/drop_in_scenarios.hpp - the drop-in layer under load: nested
// parallel_for / for_each inside TaskGroup children, with submit() traffic
// from an outside thread and injected exceptions, on pools of 1 to 4
// threads, run from outside the pool and from inside one of its tasks.
//
// Checks: every call of every loop and every child ran exactly once (each
// counts itself through executed(), the total through main.cpp's
// executed == scheduled); each loop's result is right; a round with an
// injected exception rethrows it at the top, after every call still ran.
#pragma once

#include "scenarios.hpp"

#include <zap/zap.hpp>

#include <atomic>
#include <cstdint>
#include <future>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

namespace stress {

template <class P>
struct DropInKit {
    using Pool = zap::BasicThreadPool<P>;
    using TaskGroup = zap::BasicTaskGroup<P>;

    struct Injected : std::runtime_error {
        Injected() : std::runtime_error("injected") {}
    };

    // One round's shape, drawn from the run's generator.
    struct Shape {
        std::size_t rows, columns;   // the outer loop and each row's inner loops
        std::size_t outer_grain, inner_grain;  // 0: automatic
        std::size_t throw_at;        // a cell index, or rows * columns for none
        bool inside;                 // run the round from a task of the pool
    };

    static Shape draw(Run& run) {
        Shape s{};
        s.rows = run.between(1, 48);
        s.columns = run.below(run.size(1200));
        s.outer_grain = run.below(2) == 0 ? 0 : run.between(1, 8);
        s.inner_grain = run.below(2) == 0 ? 0 : run.between(1, 96);
        s.throw_at = run.below(4) == 0 && s.columns > 0 ? run.below(s.rows * s.columns) : s.rows * s.columns;
        s.inside = run.below(2) == 0;
        return s;
    }

    // Each row: a TaskGroup whose children cover the row's two halves, one
    // with parallel_for and one with for_each, and a third child that
    // submits nothing but counts itself. Every cell records its visit.
    static void round(Pool& pool, const Shape& s, std::vector<std::atomic<std::uint8_t>>& cells) {
        pool.parallel_for(std::size_t{0}, s.rows, [&](std::size_t r) {
            std::atomic<std::uint8_t>* row = &cells[r * s.columns];
            auto visit = [&](std::size_t c) {
                executed();
                row[c].fetch_add(1, std::memory_order_relaxed);
                if (r * s.columns + c == s.throw_at) throw Injected();
            };
            const std::size_t half = s.columns / 2;
            TaskGroup group(pool);
            group.run([&] { pool.parallel_for(std::size_t{0}, half, visit, zap::Grain{s.inner_grain}); });
            group.run([&] {
                std::span<std::atomic<std::uint8_t>> upper(row + half, s.columns - half);
                pool.for_each(upper, [&](std::atomic<std::uint8_t>&, std::size_t i) { visit(half + i); },
                              zap::Grain{s.inner_grain});
            });
            group.run([] { executed(); });
            group.wait();
        }, zap::Grain{s.outer_grain});
    }

    static bool threw_injected(Pool& pool, const Shape& s, std::vector<std::atomic<std::uint8_t>>& cells) {
        try {
            round(pool, s, cells);
            return false;
        } catch (const Injected&) {
            return true;
        }
    }

    // ---- drop_in: the rounds, with an outside thread submitting meanwhile.
    static void drop_in(Run& run) {
        for (std::uint32_t threads : {1u, 2u, 4u}) {
            stage("drop_in: pool");
            Pool pool(pool_config(threads));
            std::atomic<bool> stop{false};
            std::atomic<std::uint64_t> load_sum{0};
            std::uint64_t load_expected = 0;
            std::thread load([&] {  // submit() traffic while the loops run
                set_role("submitter");
                std::uint64_t sent = 0;
                while (!stop.load(std::memory_order_relaxed)) {
                    scheduled(1);
                    ++sent;
                    auto future = pool.submit([&load_sum, sent] {
                        executed();
                        load_sum.fetch_add(sent, std::memory_order_relaxed);
                        return sent;
                    });
                    STRESS_CHECK(future.get() == sent);
                }
                load_expected = sent * (sent + 1) / 2;
            });
            for (int r = 0; r < 12; ++r) {
                stage("drop_in: round");
                const Shape s = draw(run);
                std::vector<std::atomic<std::uint8_t>> cells(s.rows * s.columns);
                scheduled(s.rows * s.columns + s.rows);  // every cell, and each row's third child
                // The exception is caught where the round runs: one crossing a
                // future is unit.spawn's business (tests/tsan_future_exception.supp).
                const bool threw = s.inside ? pool.submit([&] { return threw_injected(pool, s, cells); }).get()
                                            : threw_injected(pool, s, cells);
                STRESS_CHECK(threw == (s.throw_at < s.rows * s.columns));
                for (auto& cell : cells) STRESS_CHECK(cell.load(std::memory_order_relaxed) == 1);
            }
            stop = true;
            load.join();
            stage("drop_in: destroying pool");
            STRESS_CHECK(load_sum.load() == load_expected);
        }
    }
};

}  // namespace stress
