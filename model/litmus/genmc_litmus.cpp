// SPDX-License-Identifier: MIT
// model/litmus/genmc_litmus.cpp - the litmus tests of litmus.hpp on the
// GenMC platform: one function per variant, chosen by model/genmc/run's
// -DZAP_GENMC_TEST=VARIANT.
//
// Usage: model/genmc/run [--model rc11|imm|sc] [--expect E] \
//            model/litmus/genmc_litmus.cpp VARIANT
// (model/litmus/run VARIANT --checker genmc does this, with the expected
// verdict). GenMC explores every execution the memory model allows, each
// once: a variant that passes has no execution with its outcome; one that
// fails prints the execution graph that reaches it.
#include "genmc_platform.hpp"

#include "litmus.hpp"

#include <cassert>

namespace {

using namespace zap_litmus;
using P = zap::GenmcPlatform;

// One thread's part: the litmus and the index of the thread.
template <class Litmus>
struct Part {
    Litmus* litmus;
    unsigned index;
};

// Starts the litmus's threads, joins them, then asks for its outcome. The
// litmus is a local: GenMC does not run the constructors of globals.
template <class Litmus>
void run() {
    Litmus litmus;
    Part<Litmus> parts[Litmus::threads];
    pthread_t threads[Litmus::threads];
    for (unsigned i = 0; i < Litmus::threads; ++i) {
        parts[i] = Part<Litmus>{&litmus, i};
        threads[i] = zap_genmc::start_thread(
            [](void* arg) -> void* {
                auto* part = static_cast<Part<Litmus>*>(arg);
                part->litmus->thread(part->index);
                return nullptr;
            },
            &parts[i]);
    }
    for (pthread_t t : threads) pthread_join(t, nullptr);
    assert(litmus.ok() && "the litmus outcome was reached");
}

}  // namespace

#define ZAP_GENMC_LITMUS(name, ...) \
    void name() { run<__VA_ARGS__>(); }
ZAP_LITMUS_VARIANTS(ZAP_GENMC_LITMUS, P)

int main() {
    ZAP_GENMC_TEST();
    return 0;
}
