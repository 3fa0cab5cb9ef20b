// SPDX-License-Identifier: MIT
// zap_stress: runs the stress scenarios on the production platform and/or the
// chaos platform, checks their invariants, and turns a hang into a failure.
//
//   zap_stress [--scenario NAME|all] [--platform std|chaos|both] [--seed N]
//              [--rounds N] [--duration SECONDS] [--scale X] [--watchdog SECONDS]
//              [--verbose] [--list]
//
// Every selected scenario runs once per platform and round (--rounds, 1 by
// default); round 0 uses the given seed (a random one if none is given), each
// later round a fresh seed derived from it. With --duration the rounds go on
// until the time is up (soak mode). The last line gives the number of tasks executed.
// A failed check or a hang prints the run's seed and the replay command line.
#include "cancel_scenarios.hpp"
#include "chaos_platform.hpp"
#include "coroutine_scenarios.hpp"
#include "drop_in_scenarios.hpp"
#include "helping_wait_scenarios.hpp"
#include "mailbox_scenarios.hpp"
#include "reduce_scenarios.hpp"
#include "scenarios.hpp"
#include "wait_for_scenarios.hpp"
#include "trace.hpp"
#include "work_conserving_scenarios.hpp"
#include "worker_index_scenarios.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using stress::ChaosPlatform;
using stress::Run;
using stress::SpawnFaults;
using stress::SpawnPolicy;
using stress::StdSpawnFaultPlatform;
using StdKit = stress::Kit<zap::StdPlatform>;
using ChaosKit = stress::Kit<ChaosPlatform>;

struct Scenario {
    const char* name;
    const char* checks;
    void (*on_std)(Run&);
    void (*on_chaos)(Run&);
};

const Scenario scenarios[] = {
    {"submitters", "1-4 outside threads schedule singles and batches; each task once, sum", &StdKit::submitters,
     &ChaosKit::submitters},
    {"fib", "fib-shaped tree of heap tasks; node count and leaf sum", &StdKit::fib_tree, &ChaosKit::fib_tree},
    {"quicksort", "1M values sorted by partition tasks + WaitGroup; equals std::sort", &StdKit::quicksort,
     &ChaosKit::quicksort},
    {"overflow", "roots schedule 200-700 children each from a worker; each once, sum", &StdKit::overflow,
     &ChaosKit::overflow},
    {"imbalance", "one worker pushes all the work, the rest steal; each once", &StdKit::imbalance,
     &ChaosKit::imbalance},
    {"lifecycle", "hundreds of pools created and ended six ways; each task once", &StdKit::lifecycle,
     &ChaosKit::lifecycle},
    {"shutdown_busy", "shutdown() while trees still spawn; every node runs before join returns",
     &StdKit::shutdown_busy, &ChaosKit::shutdown_busy},
    {"spawn_failure", "first/all/random spawns fail; every task (and waiting parent) runs",
     [](Run& run) { stress::Kit<StdSpawnFaultPlatform>::spawn_failure(run, SpawnPolicy::never); },
     [](Run& run) { ChaosKit::spawn_failure(run, SpawnPolicy::random_safe); }},
    {"nested", "fork-join fib waiting on WaitGroups inside tasks, 1/2/4 threads; result", &StdKit::nested,
     &ChaosKit::nested},
    {"for_each", "for-each over ranges (nested too) from batches; every index once", &StdKit::for_each_range,
     &ChaosKit::for_each_range},
    {"drop_in", "nested parallel_for/for_each in TaskGroups under submit() load, throws; every call once",
     &stress::DropInKit<zap::StdPlatform>::drop_in, &stress::DropInKit<ChaosPlatform>::drop_in},
    {"mailbox", "senders, receivers (some timed) and close() race; each value received once, handed back or refused",
     &stress::MailboxKit<zap::StdPlatform>::mailbox, &stress::MailboxKit<ChaosPlatform>::mailbox},
    {"object_pool", "users get/put objects, getters race close(); one holder at a time, every object back",
     &stress::MailboxKit<zap::StdPlatform>::object_pool, &stress::MailboxKit<ChaosPlatform>::object_pool},
    {"helping_wait", "workers wait for groups done from outside or by new work, waits nest; each returns, sees the work",
     &stress::HelpingWaitKit<zap::StdPlatform>::helping_wait, &stress::HelpingWaitKit<ChaosPlatform>::helping_wait},
    {"isolation", "X waits inside isolate() while blockers of X and unrelated tasks are queued; every wait returns",
     &stress::HelpingWaitKit<zap::StdPlatform>::isolation, &stress::HelpingWaitKit<ChaosPlatform>::isolation},
    {"rendezvous", "k tasks that wait for each other, from outside or a task, batch or not, lazy or warm; all meet",
     &stress::WorkConservingKit<zap::StdPlatform>::rendezvous, &stress::WorkConservingKit<ChaosPlatform>::rendezvous},
    {"reduce", "float parallel_reduce bitwise equal on 1/2/4 threads, nested, throws; every map once",
     &stress::ReduceKit<zap::StdPlatform>::reduce, &stress::ReduceKit<ChaosPlatform>::reduce},
    {"cancel", "TaskGroups canceled by a child, the owner or an outside thread; each child ran or skipped once",
     &stress::CancelKit<zap::StdPlatform>::cancel, &stress::CancelKit<ChaosPlatform>::cancel},
    {"coroutine", "coroutines hop onto the pool from outside, from workers, awaited by helping tasks; every hop once",
     &stress::CoroutineKit<zap::StdPlatform>::coroutine, &stress::CoroutineKit<ChaosPlatform>::coroutine},
    {"worker_index", "per-worker scratch without atomics, spawn exceptions to the handler; exact totals",
     &stress::WorkerIndexKit<zap::StdPlatform>::worker_index, &stress::WorkerIndexKit<ChaosPlatform>::worker_index},
    {"wait_for", "timed waits with 0-200 us timeouts race the last done(), outside and helping; group freed at once",
     &stress::WaitForKit<zap::StdPlatform>::wait_for, &stress::WaitForKit<ChaosPlatform>::wait_for},
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "zap_stress: %s\n"
                 "usage: zap_stress [--scenario NAME|all] [--platform std|chaos|both] [--seed N]\n"
                 "                  [--rounds N] [--duration SECONDS] [--scale X] [--watchdog SECONDS]\n"
                 "                  [--verbose] [--list]\n",
                 why);
    std::exit(2);
}

// Aborts with a dump when no task has started and no scenario step has been
// taken for `limit` seconds.
class Watchdog {
public:
    explicit Watchdog(double limit) : limit_(limit), thread_([this] { loop(); }) {}
    ~Watchdog() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

private:
    void loop() {
        stress::set_role("watchdog");
        auto last_change = std::chrono::steady_clock::now();
        std::uint64_t last = ~0ULL;
        std::unique_lock lock(mutex_);
        while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
            const std::uint64_t now_progress =
                stress::progress.total_executed.load() + stress::progress.cycles.load();
            const auto now = std::chrono::steady_clock::now();
            if (now_progress != last) {
                last = now_progress;
                last_change = now;
                continue;
            }
            if (std::chrono::duration<double>(now - last_change).count() < limit_) continue;
            std::fprintf(stderr, "\nzap_stress: HANG: no progress for %.0f seconds\n", limit_);
            stress::dump(stderr);
            std::abort();
        }
    }

    double limit_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread thread_;
};

std::uint64_t parse_u64(const char* s) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s, &end, 0);
    if (end == s || *end != '\0') usage("bad number");
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    std::string only = "all";
    std::string platform = "both";
    std::uint64_t seed = std::random_device{}() * 0x100000001ULL ^ std::random_device{}();
    double duration = 0;
    std::uint64_t rounds = 1;
    double scale = 1;
    double watchdog_limit = 60;
    bool verbose = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
            return argv[++i];
        };
        if (arg == "--scenario") only = value();
        else if (arg == "--platform") platform = value();
        else if (arg == "--seed") seed = parse_u64(value());
        else if (arg == "--duration") duration = std::atof(value());
        else if (arg == "--rounds") rounds = parse_u64(value());
        else if (arg == "--scale") scale = std::atof(value());
        else if (arg == "--watchdog") watchdog_limit = std::atof(value());
        else if (arg == "--verbose") verbose = true;
        else if (arg == "--list") {
            for (const auto& s : scenarios) std::printf("%-14s %s\n", s.name, s.checks);
            return 0;
        } else usage(("unknown argument " + arg).c_str());
    }
    if (platform != "std" && platform != "chaos" && platform != "both") usage("--platform is std, chaos or both");
    if (!(scale > 0)) usage("--scale must be positive");
    std::vector<const Scenario*> selected;
    for (const auto& s : scenarios)
        if (only == "all" || only == s.name) selected.push_back(&s);
    if (selected.empty()) usage(("no scenario named " + only).c_str());

    stress::set_role("main");
    std::printf("zap_stress: seed %llu, platform %s, scenario %s, scale %g%s\n",
                static_cast<unsigned long long>(seed), platform.c_str(), only.c_str(), scale,
                duration > 0 ? (", soak for " + std::to_string(duration) + " s").c_str() : "");
    std::fflush(stdout);

    Watchdog watchdog(watchdog_limit);
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    std::uint64_t runs = 0;
    for (std::uint64_t round = 0;; ++round) {
        // Round 0 uses the seed as given, so a printed seed replays with --seed.
        const std::uint64_t round_seed = round == 0 ? seed : stress::splitmix64(seed + round);
        for (const Scenario* s : selected) {
            for (const char* plat : {"std", "chaos"}) {
                if (platform != "both" && platform != plat) continue;
                const bool chaos = std::strcmp(plat, "chaos") == 0;
                auto& p = stress::progress;
                p.scenario = s->name;
                p.platform = plat;
                p.seed = round_seed;
                p.scheduled = 0;
                p.executed = 0;
                // The chaos generators depend on the scenario too, so replaying
                // one scenario alone draws what it drew inside "all".
                std::uint64_t chaos_seed = round_seed;
                for (const char* c = s->name; *c != '\0'; ++c) chaos_seed = stress::splitmix64(chaos_seed ^ *c);
                stress::set_chaos_seed(chaos_seed);
                SpawnFaults::reset(chaos ? SpawnPolicy::random_safe : SpawnPolicy::never);
                Run run{round_seed, scale, verbose};
                const auto t0 = std::chrono::steady_clock::now();
                (chaos ? s->on_chaos : s->on_std)(run);
                const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                // Every spawned worker thread has returned (join() joined them all).
                STRESS_CHECK(SpawnFaults::live.load() == 0);
                STRESS_CHECK(p.executed.load() == p.scheduled.load());
                ++runs;
                if (verbose || duration == 0)
                    std::printf("  ok %-14s %-5s seed %llu: %llu tasks, %.2f s\n", s->name, plat,
                                static_cast<unsigned long long>(round_seed),
                                static_cast<unsigned long long>(p.executed.load()), secs);
                std::fflush(stdout);
                p.stage = "(between runs)";
            }
        }
        if (duration > 0 && round % 10 == 9) {
            std::printf("  soak: %.0f s, %llu runs, %llu tasks\n", elapsed(), static_cast<unsigned long long>(runs),
                        static_cast<unsigned long long>(stress::progress.total_executed.load()));
            std::fflush(stdout);
        }
        if (duration > 0 ? elapsed() >= duration : round + 1 >= rounds) break;
    }
    const auto& c = stress::chaos_stats;
    if (platform != "std")
        std::printf("zap_stress: chaos injected: %llu points, %llu yields, %llu sleeps, %llu spurious CAS failures, "
                    "%llu spurious futex wake-ups, %llu wake-alls, %llu spawn failures (both platforms)\n",
                    static_cast<unsigned long long>(c.points.load()), static_cast<unsigned long long>(c.yields.load()),
                    static_cast<unsigned long long>(c.sleeps.load()),
                    static_cast<unsigned long long>(c.cas_failures.load()),
                    static_cast<unsigned long long>(c.spurious_wakes.load()),
                    static_cast<unsigned long long>(c.wake_alls.load()),
                    static_cast<unsigned long long>(SpawnFaults::total_failures.load()));
    std::printf("zap_stress: passed: %llu runs in %.1f s; tasks executed: %llu\n",
                static_cast<unsigned long long>(runs), elapsed(),
                static_cast<unsigned long long>(stress::progress.total_executed.load()));
    return 0;
}
