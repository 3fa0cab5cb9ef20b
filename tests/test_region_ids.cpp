// SPDX-License-Identifier: MIT
// RegionIds (isolation.hpp, I1): every region a thread opens gets an id no
// other region of that thread or of another thread has, and none is 0 (the
// id of "no region"). Nested isolate() calls rely on it: an inner region
// whose id equalled the outer one's would let the outer wait run the inner
// region's tasks.
#include <zap/isolation.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace {

TEST(RegionIds, EveryRegionOfAThreadHasItsOwnId) {
    zap::detail::RegionIds ids(1);
    std::set<std::uint64_t> seen;
    for (int i = 1; i <= 1000; ++i) {
        const std::uint64_t id = ids.next();
        EXPECT_NE(id, 0u) << "region " << i << " got the id of no region";
        EXPECT_TRUE(seen.insert(id).second) << "region " << i << " got the id of an earlier region: " << id;
    }
}

TEST(RegionIds, TwoThreadsNeverShareAnId) {
    zap::detail::RegionIds first(1);
    zap::detail::RegionIds second(2);
    std::set<std::uint64_t> of_first;
    for (int i = 0; i < 1000; ++i) of_first.insert(first.next());
    for (int i = 0; i < 1000; ++i) {
        const std::uint64_t id = second.next();
        EXPECT_EQ(of_first.count(id), 0u) << "thread 2's region " << i + 1 << " has thread 1's id " << id;
    }
}

}  // namespace
