// SPDX-License-Identifier: MIT
// model/litmus/relacy_litmus.cpp - the litmus tests of litmus.hpp on the
// Relacy platform: one model per variant, run by model_main.cpp.
//
// Usage: zap_model_litmus VARIANT --sched full [--expect RESULT]
// (model/litmus/run VARIANT does this, with the expected verdict). Relacy's
// full scheduler tries every interleaving and, at every load, every store
// the memory orders let it read: a variant that passes has no execution
// with its outcome; one that fails prints the history that reaches it.
#include "litmus.hpp"

#include "model_registry.hpp"

namespace {

using namespace zap_litmus;
using P = zap::RelacyPlatform;

template <class Litmus>
struct RelacyLitmus : zap_model::Model<RelacyLitmus<Litmus>, Litmus::threads> {
    Litmus litmus;
    void thread(unsigned index) { litmus.thread(index); }
    void after() { RL_ASSERT(litmus.ok()); }
};

#define ZAP_RELACY_LITMUS(name, ...)           \
    using name##_litmus = __VA_ARGS__;         \
    ZAP_MODEL_TEST(name, RelacyLitmus<name##_litmus>, false, P::SpawnFailure::never, name##_litmus::outcome);
ZAP_LITMUS_VARIANTS(ZAP_RELACY_LITMUS, P)

}  // namespace
