// SPDX-License-Identifier: MIT
// WaitDepth (wait_depth.hpp): once WaitDepth::max_wait_depth waits are in
// progress on a thread, the drop-in layer forks nothing there: a TaskGroup
// runs its child at once. A chain of TaskGroups, each waiting for one child
// that opens the next, therefore nests exactly max_wait_depth waits on the
// one worker: not fewer (the bound is not reached early), not more (the
// bound holds; docs/drop_in.md promises 128). The chain counts its own
// waits too, so that a WaitDepth that miscounts cannot vouch for itself.
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace {

struct Depths {
    std::uint32_t deepest = 0;      // WaitDepth::current() at the deepest child
    std::uint32_t waiting = 0;      // the chain's own count of its waits in progress
    std::uint32_t deepest_own = 0;  // and at the deepest child
};

void chain(zap::ThreadPool& pool, std::uint32_t levels, Depths& d) {
    d.deepest = std::max(d.deepest, zap::detail::WaitDepth::current());
    d.deepest_own = std::max(d.deepest_own, d.waiting);
    if (levels == 0) return;
    zap::TaskGroup group(pool);
    group.run([&] { chain(pool, levels - 1, d); });
    ++d.waiting;
    group.wait();
    --d.waiting;
}

TEST(WaitDepthBound, AChainOfWaitsNestsExactlyTheBound) {
    constexpr std::uint32_t bound = zap::detail::WaitDepth::max_wait_depth;
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    Depths d, again;
    std::uint32_t after = bound;
    pool.submit([&] {
        chain(pool, bound + 16, d);
        chain(pool, bound + 16, again);  // the bound counts waits in progress, not waits ever made
        after = zap::detail::WaitDepth::current();
    }).get();
    EXPECT_EQ(d.deepest, bound) << "waits in progress on the worker at the deepest child of a chain of "
                                << bound + 16 << " TaskGroups";
    EXPECT_EQ(d.deepest_own, bound) << "the chain's own count of its waits in progress at its deepest child";
    EXPECT_EQ(again.deepest_own, bound) << "a second chain on the same worker, after the first has returned";
    EXPECT_EQ(after, 0u) << "waits in progress on the worker once every wait has returned";
}

}  // namespace
