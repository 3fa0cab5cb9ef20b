// SPDX-License-Identifier: MIT
// model/genmc/wait_group_tests.cpp - the WaitGroup (src/zap/wait_group.hpp)
// off the pool (no helping: the waiter is not a worker) under GenMC: the
// Relacy models wait_group (model/model_tests.cpp) and wait_group_is_done
// (model/mutation/scenarios.cpp). The group is malloc'ed and freed as soon
// as the waiter may: GenMC reports any access to it that the free does not
// follow in happens-before (W1).
#include "harness.hpp"

#include <zap/wait_group.hpp>

#include <new>

using namespace zap_genmc;

using WaitGroup = zap::BasicWaitGroup<P>;

namespace {

WaitGroup* new_group(std::uint32_t count) {
    auto* group = new (std::malloc(sizeof(WaitGroup))) WaitGroup;
    group->add(count);
    return group;
}

void free_group(WaitGroup* group) {
    group->~WaitGroup();
    std::free(group);
}

}  // namespace

// Two done(), one wait() that frees the group as soon as it returns: the
// work is visible, and no done() touches the group afterwards (W1).
void wait_group() {
    WaitGroup* group = new_group(2);
    int work[2] = {0, 0};
    auto worker0 = [&] {
        work[0] = 1;
        group->done();
    };
    auto worker1 = [&] {
        work[1] = 1;
        group->done();
    };
    pthread_t a = go(worker0), b = go(worker1);
    group->wait();
    assert(work[0] == 1 && work[1] == 1 && "the counted work happens before wait() returns");
    free_group(group);
    join(a);
    join(b);
}

// is_done() polled instead of wait(): true means the work is visible and the
// group may go.
void wait_group_is_done() {
    WaitGroup* group = new_group(2);
    int work[2] = {0, 0};
    auto worker0 = [&] {
        work[0] = 1;
        group->done();
    };
    auto worker1 = [&] {
        work[1] = 1;
        group->done();
    };
    pthread_t a = go(worker0), b = go(worker1);
    __VERIFIER_assume(group->is_done());
    assert(work[0] == 1 && work[1] == 1 && "the counted work happens before is_done()");
    free_group(group);
    join(a);
    join(b);
}

ZAP_GENMC_MAIN()
