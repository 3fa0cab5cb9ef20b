// SPDX-License-Identifier: MIT
// bench/tbb_bench.cpp - oneTBB's row: task_group for the fork/join and flat
// workloads (blocking.hpp), parallel_reduce for psum, task_arena::enqueue
// for pingpong. The external thread is TBB's master thread: it runs tasks
// while it waits, as TBB is meant to be used; BENCH_THREADS (2) in all.
#include "blocking.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

namespace bench {
namespace {

struct TbbContext {
    tbb::task_group group() { return tbb::task_group{}; }

    std::optional<Outcome> psum(const std::uint32_t* words, std::uint64_t size, Meter* meter) {
        auto part = [&] {
            const std::uint64_t sum = tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, size), std::uint64_t{0},
                [&](const tbb::blocked_range<std::size_t>& r, std::uint64_t s) {
                    for (std::size_t i = r.begin(); i != r.end(); ++i) s += words[i];
                    return s;
                },
                [](std::uint64_t a, std::uint64_t b) { return a + b; });
            return Outcome{sum, 0};
        };
        return meter != nullptr ? meter->measure(part) : part();
    }

    // Not task_group::run: a task the master thread spawns sits in its own
    // deque, and TBB only promises that some thread runs it by the master's
    // wait(); a master sleeping on something else can wait for ever (it did,
    // here). enqueue() is TBB's fire-and-forget post to the workers.
    std::optional<Outcome> pingpong(std::uint64_t size, Meter* meter) {
        Signal pong;
        auto part = [&] {
            for (std::uint64_t i = 0; i < size; ++i) {
                arena.enqueue([&pong] { pong.set(); });
                pong.wait();
            }
            return Outcome{size, size};
        };
        return meter != nullptr ? meter->measure(part) : part();
    }

    tbb::global_control control{tbb::global_control::max_allowed_parallelism, threads};
    tbb::task_arena arena{static_cast<int>(threads)};
};

}  // namespace

std::vector<std::string> variants() { return {"oneTBB"}; }

// Every workload but pingpong runs inside `arena`: the implicit arena of the
// calling thread has the machine's default concurrency whatever
// global_control allows, so BENCH_THREADS above the CPU count (the
// oversubscription rows) would otherwise still run on 2 threads.
bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    if (variant != "oneTBB") return false;
    TbbContext context;
    Blocking<TbbContext> bench(context);
    if (workload == "pingpong") return bench.run(workload, size, meter, out);  // the master posts from outside
    bool ran = false;
    context.arena.execute([&] { ran = bench.run(workload, size, meter, out); });
    return ran;
}

}  // namespace bench
