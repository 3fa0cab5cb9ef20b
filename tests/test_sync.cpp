// SPDX-License-Identifier: MIT
// The Sync word: every field round-trips and stays in its own bits.
#include <zap/sync.hpp>

#include <gtest/gtest.h>

using zap::detail::State;
using zap::detail::Sync;

TEST(Sync, ZeroWordIsInitialState) {
    EXPECT_EQ(Sync::decode(0), Sync{});
    EXPECT_EQ(Sync{}.encode(), 0u);
}

TEST(Sync, EveryFieldRoundTrips) {
    for (std::uint32_t idle : {0u, 1u, 77u, Sync::max_count})
        for (std::uint32_t spawned : {0u, 1u, 300u, Sync::max_count})
            for (bool notified : {false, true})
                for (State state : {State::pending, State::signaled, State::waking, State::shutdown}) {
                    const Sync s{idle, spawned, notified, state};
                    EXPECT_EQ(Sync::decode(s.encode()), s);
                }
}

TEST(Sync, FieldsDoNotOverlap) {
    const Sync all{Sync::max_count, Sync::max_count, true, State::shutdown};
    const std::uint32_t unused_bit = 1u << Sync::unused_shift;
    EXPECT_EQ(all.encode(), ~unused_bit) << "every bit but the unused one is a field's";
    EXPECT_EQ(Sync{.idle = 1}.encode() & Sync{.spawned = 1}.encode(), 0u);
}

TEST(Sync, OneSpawnedSubtractsExactlyOneWorker) {
    const Sync before{5, 3, true, State::shutdown};
    const Sync after = Sync::decode(before.encode() - Sync::one_spawned);
    EXPECT_EQ(after, (Sync{5, 2, true, State::shutdown}));
}
