// SPDX-License-Identifier: MIT
// bench/zap_bench.cpp - zap's rows.
//
//   zap (low-level)       intrusive tasks through ThreadPool::schedule (one
//                         Batch per fan-out), the continuation-passing
//                         workloads of continuation.hpp.
//   zap (drop-in)         when the drop-in layer is present: TaskGroup in the
//                         blocking workloads of blocking.hpp (the same code as
//                         oneTBB's row), parallel_reduce for psum (as oneTBB's
//                         row uses its parallel_reduce), and `co_await
//                         pool.schedule()` for hop.
//   zap (parallel_invoke) when ThreadPool::parallel_invoke exists: fib and
//                         qsort, forking with it.
//   zap (in-pool)         with the drop-in layer: pingpong only, both ends
//                         on pool threads (Go's row's shape).
//   zap (caller throttle) spawn only: the low-level row's posts, but the
//                         producer runs a task itself while more than 64
//                         per worker are outstanding (libgomp's inline
//                         throttle, kept by the caller: docs/benchmarks.md).
//
// Built against a patched copy of src/ (bench/run --zap-patch FILE), every
// row name ends in " + patch" (ZAP_BENCH_ROW_SUFFIX), so both builds run
// side by side.
#include "continuation.hpp"

#include "../tests/detached.hpp"

#include <zap/zap.hpp>

#include <coroutine>
#include <exception>
#include <optional>

#if __has_include(<zap/task_group.hpp>)
#include "blocking.hpp"
#define ZAP_BENCH_DROP_IN 1
#endif

#ifndef ZAP_BENCH_ROW_SUFFIX
#define ZAP_BENCH_ROW_SUFFIX ""
#endif

namespace bench {
namespace {

const std::string low_level = "zap (low-level)" ZAP_BENCH_ROW_SUFFIX;
const std::string drop_in = "zap (drop-in)" ZAP_BENCH_ROW_SUFFIX;
const std::string invoke = "zap (parallel_invoke)" ZAP_BENCH_ROW_SUFFIX;
const std::string in_pool = "zap (in-pool)" ZAP_BENCH_ROW_SUFFIX;
const std::string throttled = "zap (caller throttle)" ZAP_BENCH_ROW_SUFFIX;

zap::Config pool_config() {
    zap::Config config;
    config.max_threads = threads;
    return config;
}

struct LowLevel {
    using Node = zap::Task;

    LowLevel() : pool(pool_config()) { pool.warm(threads); }
    void spawn(Node& node) noexcept { pool.schedule(node); }
    void spawn(Node** nodes, unsigned count) noexcept {
        zap::Batch batch;
        for (unsigned i = 0; i < count; ++i) batch.push(*nodes[i]);
        pool.schedule(std::move(batch));
    }

    zap::ThreadPool pool;
};

#ifdef ZAP_BENCH_DROP_IN
struct DropIn {
    DropIn() : pool(pool_config()) { pool.warm(threads); }

    zap::TaskGroup group() { return zap::TaskGroup(pool); }

    std::optional<Outcome> psum(const std::uint32_t* words, std::uint64_t size, Meter* meter) {
        auto part = [&] {
            const std::uint64_t sum = pool.parallel_reduce(
                std::uint64_t{0}, size, std::uint64_t{0}, [words](std::uint64_t i) { return std::uint64_t{words[i]}; },
                [](std::uint64_t a, std::uint64_t b) { return a + b; });
            return Outcome{sum, 0};
        };
        return meter != nullptr ? meter->measure(part) : part();
    }

    using Detached = zap_test::Detached;  // its frame is the hop workload's one allocation
    static Detached hopper(zap::ThreadPool& pool, std::uint64_t hops, std::uint64_t& made, Signal& ended) {
        for (std::uint64_t i = 0; i < hops; ++i) {
            co_await pool.schedule();
            ++made;
        }
        ended.set();
    }
    std::optional<Outcome> hop(std::uint64_t size, Meter* meter) {
        auto part = [&] {
            std::uint64_t made = 0;
            hopper(pool, size, made, hop_ended);
            hop_ended.wait();
            return Outcome{made, size};
        };
        return meter != nullptr ? meter->measure(part) : part();
    }
    // The pool's own post-and-wait, as Go's row waits on its runtime's
    // channel and oneTBB's master on its arena: TaskGroup::run from outside,
    // then wait(), whose outside wait spins before it sleeps (wait_group.hpp
    // step 4). The low-level row posts the same way and waits on the
    // harness's Signal, which sleeps at once.
    std::optional<Outcome> pingpong(std::uint64_t size, Meter* meter) {
        auto part = [&] {
            zap::TaskGroup pong(pool);
            for (std::uint64_t i = 0; i < size; ++i) {
                pong.run([] {});
                pong.wait();
            }
            return Outcome{size, size};
        };
        return meter != nullptr ? meter->measure(part) : part();
    }

    zap::ThreadPool pool;
    Signal hop_ended;  // outlives every hopper's set()
};

// pingpong with both ends on pool threads, as Go's row has them (its main
// goroutine is one the runtime schedules, and the goroutine it readies runs
// next on the same thread): one task runs the rounds, each a TaskGroup::run
// and wait(). The wait helps, so the child runs on whichever worker takes
// it first - the waiting one from its own ring, or the spinning one by a
// steal. The other rows post from the external thread, a cross-thread
// hand-off every round.
bool in_pool_pingpong(std::uint64_t size, Meter& meter, Outcome& out) {
    zap::ThreadPool pool(pool_config());
    pool.warm(threads);
    auto rounds = [&pool](std::uint64_t n) {
        pool.submit([&pool, n] {
                zap::TaskGroup pong(pool);
                for (std::uint64_t i = 0; i < n; ++i) {
                    pong.run([] {});
                    pong.wait();
                }
            })
            .get();
        return Outcome{n, n};
    };
    rounds(warmup_size("pingpong", size));
    out = meter.measure([&] { return rounds(size); });
    meter.idle_second();
    return true;
}
#endif

// spawn with the throttle libgomp applies inside its task construct, here
// kept by the caller: it counts the tasks it posted that have not yet run
// (one relaxed load of the tasks' own countdown every 32 posts) and, past
// 64 per worker, runs the next task on its own thread instead of posting
// it. What a program that wants the throttle can do without the pool's
// help; the pool's schedule() itself runs nothing on the caller.
struct ThrottledSpawn {
    struct Node : zap::Task {
        Node() : zap::Task(&step) {}
        static void step(zap::Task* task) {
            Node& self = *static_cast<Node*>(task);
            ++self.runs;
            // acq_rel: the last task carries every task's writes to the producer.
            if (self.left->fetch_sub(1, std::memory_order_acq_rel) == 1) self.ended->set();
        }
        std::atomic<std::uint64_t>* left = nullptr;
        Signal* ended = nullptr;
        std::uint64_t runs = 0;
    };
    static constexpr std::uint64_t limit_per_worker = 64;
    static constexpr std::uint64_t look_every = 32;

    LowLevel exec;
    std::atomic<std::uint64_t> left{0};
    Signal ended;
    std::uint64_t inline_runs = 0;

    // Posts (or runs) nodes[0..n) and waits until all have run.
    void spawn(Node* nodes, std::uint64_t n) {
        left.store(n, std::memory_order_relaxed);  // published by the first post
        bool throttle = false;
        for (std::uint64_t i = 0; i < n; ++i) {
            nodes[i].left = &left;
            nodes[i].ended = &ended;
            if (i % look_every == 0) {
                const std::uint64_t finished = n - left.load(std::memory_order_relaxed);  // a count, orders nothing
                throttle = i - finished > limit_per_worker * threads;
            }
            if (throttle) {
                ++inline_runs;
                nodes[i].run();
            } else {
                exec.spawn(nodes[i]);
            }
        }
        ended.wait();
    }
    bool run(std::uint64_t size, Meter& meter, Outcome& out) {
        {
            const std::uint64_t warm = warmup_size("spawn", size);
            auto nodes = std::make_unique<Node[]>(warm);
            spawn(nodes.get(), warm);
        }
        auto nodes = std::make_unique<Node[]>(size);  // made before the clock starts, as the low-level row's
        inline_runs = 0;
        out = meter.measure([&] {
            spawn(nodes.get(), size);
            return Outcome{0, size};
        });
        for (std::uint64_t i = 0; i < size; ++i) out.checksum += nodes[i].runs;
        std::fprintf(stderr, "caller throttle: %llu of %llu tasks ran on the producer\n",
                     static_cast<unsigned long long>(inline_runs), static_cast<unsigned long long>(size));
        meter.idle_second();
        return true;
    }
};

template <class Pool>
concept HasParallelInvoke = requires(Pool& pool) { pool.parallel_invoke([] {}, [] {}); };

// fib and qsort with one parallel_invoke per fork.
template <class Pool>
struct Invoke {
    Pool pool{pool_config()};

    std::uint64_t fib(std::uint64_t n) {
        if (n < 2) return n;
        std::uint64_t a = 0, b = 0;
        pool.parallel_invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
        return a + b;
    }
    void sort(std::int32_t* data, std::size_t n) {
        if (n <= sort_cutoff) return insertion_sort(data, n);
        const std::size_t left = partition(data, n);
        pool.parallel_invoke([&] { sort(data, left); }, [&] { sort(data + left, n - left); });
    }
    std::optional<Outcome> once(const std::string& w, std::uint64_t size, Meter* meter) {
        auto timed = [&](auto&& part) { return meter != nullptr ? meter->measure(part) : part(); };
        if (w == "fib") return timed([&] { return Outcome{fib(size), expected_checksum("fib", size + 1) - 1}; });
        if (w != "qsort") return std::nullopt;
        std::vector<std::int32_t> v(size);
        const auto words = random_words(size);
        std::memcpy(v.data(), words.data(), size * sizeof(std::int32_t));
        timed([&] {
            sort(v.data(), v.size());
            return Outcome{};
        });
        return Outcome{sorted_checksum(v), 0};
    }
    bool run(const std::string& w, std::uint64_t size, Meter& meter, Outcome& out) {
        pool.warm(threads);
        if (!once(w, warmup_size(w, size), nullptr)) return false;
        out = *once(w, size, &meter);
        meter.idle_second();
        return true;
    }
};

}  // namespace

std::vector<std::string> variants() {
    std::vector<std::string> rows{low_level, throttled};
#ifdef ZAP_BENCH_DROP_IN
    rows.push_back(drop_in);
    rows.push_back(in_pool);
#endif
    if constexpr (HasParallelInvoke<zap::ThreadPool>) rows.push_back(invoke);
    return rows;
}

bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    if (run_row<Continuation, LowLevel>(low_level, variant, workload, size, meter, out)) return true;
    if (variant == throttled) return workload == "spawn" && ThrottledSpawn{}.run(size, meter, out);
#ifdef ZAP_BENCH_DROP_IN
    if (run_row<Blocking, DropIn>(drop_in, variant, workload, size, meter, out)) return true;
    if (variant == in_pool) return workload == "pingpong" && in_pool_pingpong(size, meter, out);
#endif
    if constexpr (HasParallelInvoke<zap::ThreadPool>) {
        if (variant == invoke) return Invoke<zap::ThreadPool>{}.run(workload, size, meter, out);
    }
    return false;
}

}  // namespace bench
