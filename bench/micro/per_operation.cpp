// SPDX-License-Identifier: MIT
// bench/micro/per_operation.cpp - what one operation of zap costs, with
// Google Benchmark (Debian's libbenchmark-dev): the figures bench/run's
// whole-workload rows are made of.
//
//   fork         one parallel_invoke nobody steals (a pool of one worker,
//                the loop on that worker): push, run a, take back, run b
//   schedule     one low-level schedule() of an intrusive Task and its run
//   spawn        one drop-in spawn() of a small lambda and its run
//   submit       one submit() (a future per task) and its run
//   group_run    one TaskGroup::run() and its run
//   (co_await    one hop of a coroutine onto the pool: to be added here with
//                the coroutine layer, as BM_CoAwaitHop)
//
// Each of the last four is measured from the external thread (the pool's
// injector, 2 workers running the tasks) and on a worker (its own ring, the
// tasks run by the same worker's helping wait or stolen by the other). They
// are amortized over batches: every `batch` operations the loop waits until
// the batch has run, so a figure is (issue + run + a share of the wait) per
// task; the time is wall-clock (the loop's thread may sleep in the wait).
//
// Built by bench/run (target bench_micro) and run after its table; by hand:
//   build/bench/bench/bench_micro [--benchmark_repetitions=5 ...]
#include <zap/zap.hpp>

#include <benchmark/benchmark.h>

#include <functional>
#include <future>
#include <vector>

namespace {

constexpr unsigned batch = 1024;

// Runs `body` on a worker of `pool` and returns when it has.
void on_worker(zap::ThreadPool& pool, const std::function<void()>& body) {
    struct Job : zap::Task {
        const std::function<void()>* body;
        zap::WaitGroup finished;
        explicit Job(const std::function<void()>& b) : zap::Task(&run), body(&b) { finished.add(1); }
        static void run(zap::Task* task) {
            auto* self = static_cast<Job*>(task);
            (*self->body)();
            self->finished.done();
        }
    } job(body);
    pool.schedule(job);
    job.finished.wait();
}

zap::Config workers(std::uint32_t n) {
    zap::Config config;
    config.max_threads = n;
    return config;
}

void BM_Fork(benchmark::State& state) {
    zap::ThreadPool pool(workers(1));
    on_worker(pool, [&] {
        int a = 0, b = 0;
        for (auto _ : state) {
            pool.parallel_invoke([&] { benchmark::DoNotOptimize(++a); }, [&] { benchmark::DoNotOptimize(++b); });
        }
    });
}
BENCHMARK(BM_Fork)->UseRealTime();

// A Task that counts itself done in a WaitGroup.
struct Counted : zap::Task {
    zap::WaitGroup* group = nullptr;
    Counted() : zap::Task(&run) {}
    static void run(zap::Task* task) { static_cast<Counted*>(task)->group->done(); }
};

// The loop of the batched benchmarks: `issue(i, group)` issues operation i
// of its batch, whose task must call group.done() once it has run.
template <class Issue>
void batched(benchmark::State& state, Issue&& issue) {
    zap::WaitGroup group;
    unsigned i = 0;
    for (auto _ : state) {
        if (i == 0) group.add(batch);
        issue(i, group);
        if (++i == batch) {
            group.wait();
            i = 0;
        }
    }
    if (i != 0) {
        for (; i < batch; ++i) group.done();  // the last batch's unissued rest
        group.wait();
    }
}

// `where` 0: from the external thread; 1: on a worker.
template <class Body>
void from(benchmark::State& state, zap::ThreadPool& pool, Body&& body) {
    pool.warm(2);
    if (state.range(0) == 0) {
        body();
    } else {
        on_worker(pool, body);
    }
}

void BM_Schedule(benchmark::State& state) {
    zap::ThreadPool pool(workers(2));
    std::vector<Counted> tasks(batch);
    from(state, pool, [&] {
        batched(state, [&](unsigned i, zap::WaitGroup& group) {
            tasks[i].group = &group;
            pool.schedule(tasks[i]);
        });
    });
}
BENCHMARK(BM_Schedule)->ArgName("on_worker")->Arg(0)->Arg(1)->UseRealTime();

void BM_Spawn(benchmark::State& state) {
    zap::ThreadPool pool(workers(2));
    from(state, pool, [&] {
        batched(state, [&](unsigned, zap::WaitGroup& group) { pool.spawn([&group] { group.done(); }); });
    });
}
BENCHMARK(BM_Spawn)->ArgName("on_worker")->Arg(0)->Arg(1)->UseRealTime();

void BM_Submit(benchmark::State& state) {
    zap::ThreadPool pool(workers(2));
    std::vector<std::future<void>> futures(batch);
    from(state, pool, [&] {
        batched(state, [&](unsigned i, zap::WaitGroup& group) {
            futures[i] = pool.submit([&group] { group.done(); });
        });
    });
}
BENCHMARK(BM_Submit)->ArgName("on_worker")->Arg(0)->Arg(1)->UseRealTime();

void BM_GroupRun(benchmark::State& state) {
    zap::ThreadPool pool(workers(2));
    from(state, pool, [&] {
        zap::TaskGroup tasks(pool);
        batched(state, [&](unsigned, zap::WaitGroup& group) { tasks.run([&group] { group.done(); }); });
        tasks.wait();
    });
}
BENCHMARK(BM_GroupRun)->ArgName("on_worker")->Arg(0)->Arg(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
