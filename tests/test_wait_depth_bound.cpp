// SPDX-License-Identifier: MIT
// WaitDepth (wait_depth.hpp): once WaitDepth::max_wait_depth waits are in
// progress on a thread, the drop-in layer forks nothing there: a TaskGroup
// runs its child at once. A chain of TaskGroups, each waiting for one child
// that opens the next, therefore nests exactly max_wait_depth waits on the
// one worker: not fewer (the bound is not reached early), not more (the
// bound holds; docs/drop_in.md promises 128).
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace {

void chain(zap::ThreadPool& pool, std::uint32_t levels, std::uint32_t& deepest) {
    deepest = std::max(deepest, zap::detail::WaitDepth::current());
    if (levels == 0) return;
    zap::TaskGroup group(pool);
    group.run([&] { chain(pool, levels - 1, deepest); });
    group.wait();
}

TEST(WaitDepthBound, AChainOfWaitsNestsExactlyTheBound) {
    constexpr std::uint32_t bound = zap::detail::WaitDepth::max_wait_depth;
    zap::ThreadPool pool(zap::Config{.max_threads = 1});
    std::uint32_t deepest = 0;
    pool.submit([&] { chain(pool, bound + 16, deepest); }).get();
    EXPECT_EQ(deepest, bound) << "waits in progress on the worker at the deepest child of a chain of "
                              << bound + 16 << " TaskGroups";
}

}  // namespace
