// bench/zap_bench.cpp - zap's rows.
//
//   zap (low-level)   intrusive tasks through ThreadPool::schedule, the
//                     continuation-passing workloads of continuation.hpp.
#include "continuation.hpp"

#include <zap/zap.hpp>

namespace bench {
namespace {

struct ZapExec {
    using Node = zap::Task;

    ZapExec() : pool(zap::Config{.max_threads = threads}) { pool.warm(threads); }
    void spawn(Node& node) noexcept { pool.schedule(node); }
    void spawn(Node** nodes, unsigned count) noexcept {
        zap::Batch batch;
        for (unsigned i = 0; i < count; ++i) batch.push(*nodes[i]);
        pool.schedule(std::move(batch));
    }

    zap::ThreadPool pool;
};

}  // namespace

std::vector<std::string> variants() { return {"zap (low-level)"}; }

bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    if (variant != "zap (low-level)") return false;
    ZapExec exec;
    Continuation<ZapExec> bench(exec);
    return bench.run(workload, size, meter, out);
}

}  // namespace bench
