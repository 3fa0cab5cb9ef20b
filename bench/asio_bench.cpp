// SPDX-License-Identifier: MIT
// bench/asio_bench.cpp - Boost.Asio's thread_pool: post() a lambda per task,
// the continuation-passing workloads of continuation.hpp (a task cannot wait
// for another on a 2-thread post()-only pool without risking deadlock).
#include "continuation.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

namespace bench {
namespace {

struct AsioExec {
    using Node = PlainNode;

    void spawn(Node& node) {
        boost::asio::post(pool, [task = &node] { task->run(); });
    }

    boost::asio::thread_pool pool{threads};
};

}  // namespace

std::vector<std::string> variants() { return {"Boost.Asio thread_pool"}; }

bool run_workload(const std::string& variant, const std::string& workload, std::uint64_t size, Meter& meter,
                  Outcome& out) {
    return run_row<Continuation, AsioExec>("Boost.Asio thread_pool", variant, workload, size, meter, out);
}

}  // namespace bench
