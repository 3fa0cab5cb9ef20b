// SPDX-License-Identifier: MIT
// model/genmc/litmus_5f.cpp - the two-thread litmus behind buffer.hpp step
// 5f (docs/orderings.md, "Step 5f"), without zap: x is the ring's head, y
// its tail.
//
//   T1 (the owner)                  T2 (a thief)
//   x.store(1, relaxed)             r2 = x.load(seq_cst)   // reads 2
//   y.store(1, relaxed)             r3 = y.load(seq_cst)   // reads 1, not 2
//   y.store(2, seq_cst)    // 5c
//   r1 = x.load(seq_cst)   // 5d, reads 1
//   x.store(r1 + 1, W)     // 5f
//
// The outcome r1 = 1, r2 = 2, r3 != 2 is the one that runs a task twice.
// The first two stores make every value read come from an atomic
// modification (the C++ text's coherence-ordered-before is stated for
// those). With W relaxed,
// GenMC's RC11 and IMM allow the outcome; with W seq_cst (or release) they
// forbid it; -sc forbids it either way. The C++20 text forbids it for every
// W (docs/orderings.md argues it step by step).
#include <atomic>
#include <cassert>
#include <pthread.h>

namespace {

std::atomic<int> x{0}, y{0};
int r1, r2, r3;

template <std::memory_order W>
void* owner(void*) {
    x.store(1, std::memory_order_relaxed);
    y.store(1, std::memory_order_relaxed);
    y.store(2, std::memory_order_seq_cst);
    r1 = x.load(std::memory_order_seq_cst);
    x.store(r1 + 1, W);
    return nullptr;
}

void* thief(void*) {
    r2 = x.load(std::memory_order_seq_cst);
    r3 = y.load(std::memory_order_seq_cst);
    return nullptr;
}

template <std::memory_order W>
void litmus() {
    pthread_t a, b;
    pthread_create(&a, nullptr, &owner<W>, nullptr);
    pthread_create(&b, nullptr, &thief, nullptr);
    pthread_join(a, nullptr);
    pthread_join(b, nullptr);
    assert(!(r1 == 1 && r2 == 2 && r3 != 2) && "the thief saw 5f's head with a tail older than 5c's");
}

}  // namespace

void relaxed_write() { litmus<std::memory_order_relaxed>(); }
void release_write() { litmus<std::memory_order_release>(); }
void seq_cst_write() { litmus<std::memory_order_seq_cst>(); }

int main() {
    ZAP_GENMC_TEST();
    return 0;
}
