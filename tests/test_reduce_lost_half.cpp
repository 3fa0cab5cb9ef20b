// SPDX-License-Identifier: MIT
// parallel_reduce's step 4 (parallel_reduce.hpp): a half whose call threw
// is lost, and a node with a lost half is lost too; reduce never sees a lost
// half. Built with libstdc++'s assertions, so that reading the empty value
// of a lost half aborts with a message instead of combining garbage (which
// the rethrown exception would hide).
#define _GLIBCXX_ASSERTIONS 1

#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

namespace {

struct Boom {};

TEST(ReduceLostHalf, ReduceNeverCombinesALostHalf) {
    for (std::uint32_t threads : {1u, 2u}) {
        zap::ThreadPool pool(zap::Config{.max_threads = threads});
        std::atomic<int> reduced{0};
        EXPECT_THROW(pool.parallel_reduce(0, 4096, std::int64_t{0},
                                          [](int i) -> std::int64_t {
                                              if (i == 1000) throw Boom();
                                              return i;
                                          },
                                          [&](std::int64_t a, std::int64_t b) {
                                              reduced++;
                                              return a + b;
                                          }),
                     Boom)
            << threads << " threads";
        EXPECT_GT(reduced.load(), 0) << "the halves without the throwing index are still combined";
    }
}

}  // namespace
