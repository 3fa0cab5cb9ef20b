// SPDX-License-Identifier: MIT
// model/genmc/parker_tests.cpp - the Parker (src/zap/parker.hpp) under
// GenMC: the Relacy models parker_unpark, parker_timed and
// parker_ping_pong (model/parker_models.cpp). Safety runs take spurious
// wake-ups (the Parker must absorb them, P1); liveness runs take none and
// check that no unpark is lost.
#include "harness.hpp"

#include <zap/parker.hpp>

using namespace zap_genmc;

using Parker = zap::BasicParker<P>;

// Long enough that only GenMC's choice, never the clock, ends a timed wait.
constexpr std::chrono::nanoseconds forever = std::chrono::hours(1);

// One unpark, one park, either order: the owner returns and sees the
// waker's write (P2).
void parker_unpark() {
    Parker parker;
    int data = 0;
    auto owner = [&] {
        parker.park();
        assert(data == 1 && "the token carries the waker's write");
    };
    pthread_t o = go(owner);
    data = 1;
    parker.unpark();
    join(o);
}

// park_for against one unpark: whether it returns true (then it sees the
// write) or times out, exactly one token is consumed: by park_for, or left
// for the next park (P3).
void parker_timed() {
    Parker parker;
    int data = 0;
    int took = 0;
    auto owner = [&] {
        if (parker.park_for(forever)) {
            assert(data == 1 && "the token carries the waker's write");
            took = 1;
        }
    };
    pthread_t o = go(owner);
    data = 1;
    parker.unpark();
    join(o);
    const int left = parker.park_for(std::chrono::nanoseconds{0}) ? 1 : 0;
    assert(took + left == 1 && "one unpark, one token");
}

// Two threads hand a turn back and forth twice, each on its own Parker: no
// unpark is lost, before or during a park, across reuse.
void parker_ping_pong() {
    Parker ping, pong;
    int turns = 0;
    auto other = [&] {
        for (int round = 0; round < 2; ++round) {
            pong.park();
            ++turns;
            ping.unpark();
        }
    };
    pthread_t o = go(other);
    for (int round = 0; round < 2; ++round) {
        ++turns;
        pong.unpark();
        ping.park();
    }
    join(o);
    assert(turns == 4 && "every turn taken");
}

ZAP_GENMC_MAIN()
