// SPDX-License-Identifier: MIT
// The job pool pattern (seed 004) on zap: a master pre-loads a job queue and
// seeds an ObjectPool with N empty containers; taking a container from the
// pool gates each dispatch, so at most N jobs are in flight; the job goes in
// the container, through worker i's Mailbox, to worker i, which doubles the
// job's code and puts the container back in the pool (which lets the
// master dispatch the next job).
//
// Shutdown, in the seed's order: close every mailbox (a worker blocked in
// receive() wakes with nothing and ends; a job its worker never received
// comes back from close(), and the master runs it itself so that no job is
// lost, then returns its container), wait for the workers, close the pool
// (it hands back every container). The program checks that every job ran
// exactly once with the right result and that all N containers came back.
//
// The workers are long-running zap tasks that block in receive(), so the
// pool gets exactly N threads, all started up front, and the master
// schedules the next worker task only once the previous one has started
// (it parks on a Parker that each worker unparks first thing): the pool
// promises to run every task, not to run N blocking tasks at once, and a
// task queued behind a worker that blocks for good could wait for ever
// while another thread sleeps (reproduced with three tasks that each block
// until all three have started: one of them stalled within two rounds).
#include <zap/zap.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

namespace {

constexpr int workers = 3;  // N: containers, mailboxes and worker tasks
constexpr int job_count = 12;

struct Container {
    int job = -1;   // index into the master's queue
    int code = 0;   // the job's value, doubled by the worker
};
using Slot = std::unique_ptr<Container>;

struct Results {
    std::atomic<int> runs[job_count] = {};
    int codes[job_count] = {};  // written by the one run of each job; read after the WaitGroup

    void record(const Container& c) {
        codes[c.job] = c.code;
        runs[c.job].fetch_add(1, std::memory_order_relaxed);
    }
};

void process(Container& c) { c.code *= 2; }

struct Worker : zap::Task {
    zap::Mailbox<Slot> mailbox;
    zap::ObjectPool<Slot>* containers = nullptr;
    zap::WaitGroup* running = nullptr;
    zap::Parker* master = nullptr;
    Results* results = nullptr;
    int processed = 0;

    Worker() : zap::Task(&run) {}

    static void run(zap::Task* task) {
        auto& self = *static_cast<Worker*>(task);
        self.master->unpark();  // started: the master may schedule the next worker
        while (std::optional<Slot> slot = self.mailbox.receive()) {  // nullopt once closed
            process(**slot);
            self.results->record(**slot);
            ++self.processed;
            self.containers->put(std::move(*slot));  // frees the master to dispatch the next job
        }
        self.running->done();
    }
};

}  // namespace

int main() {
    std::vector<int> queue;  // the master's pre-loaded jobs: 10, 20, 30, ...
    for (int i = 0; i < job_count; ++i) queue.push_back(10 * (i + 1));

    zap::ObjectPool<Slot> containers;
    for (int i = 0; i < workers; ++i) containers.put(std::make_unique<Container>());

    Results results;
    zap::WaitGroup running;
    Worker crew[workers];
    zap::Config config;
    config.max_threads = workers;
    zap::ThreadPool pool(config);
    pool.warm(workers);
    zap::Parker master;
    running.add(workers);
    for (Worker& w : crew) {
        w.containers = &containers;
        w.running = &running;
        w.master = &master;
        w.results = &results;
        pool.schedule(w);
        master.park();  // until this worker runs
    }

    // dispatchJobs: one container per job; round-robin over the workers.
    for (int job = 0; job < job_count; ++job) {
        Slot slot = *containers.get();  // the gate: waits until a worker returns a container
        slot->job = job;
        slot->code = queue[job];
        if (!crew[job % workers].mailbox.send(std::move(slot))) return 1;  // no mailbox is closed yet
    }

    // shutdown: close the mailboxes; what no worker received, the master runs.
    int run_by_master = 0;
    for (Worker& w : crew) {
        for (Slot& slot : w.mailbox.close()) {
            process(*slot);
            results.record(*slot);
            ++run_by_master;
            containers.put(std::move(slot));
        }
    }
    running.wait();  // every worker has left its loop: no put() after this
    const std::vector<Slot> returned = containers.close();

    bool ok = static_cast<int>(returned.size()) == workers;
    int run_by_workers = 0;
    for (const Worker& w : crew) run_by_workers += w.processed;
    for (int job = 0; job < job_count; ++job)
        ok = ok && results.runs[job].load(std::memory_order_relaxed) == 1 && results.codes[job] == 2 * queue[job];
    std::printf("job_pool: %d jobs, %d run by workers, %d handed back by close() and run by the master; "
                "%zu of %d containers returned\n",
                job_count, run_by_workers, run_by_master, returned.size(), workers);
    if (!ok) {
        std::printf("job_pool: FAILED: a job ran twice or never, a result is wrong, or a container is missing\n");
        return 1;
    }
    std::printf("job_pool: every job done exactly once, every container returned\n");
    return 0;
}
