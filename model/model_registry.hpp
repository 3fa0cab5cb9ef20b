// SPDX-License-Identifier: MIT
// model/model_registry.hpp - how a Relacy model becomes a runnable test.
//
// Each model file registers its models at namespace scope:
//
//   ZAP_MODEL_TEST(queue, QueueModel, true, P::SpawnFailure::never, "the claim it checks");
//
// (a model type whose name has a comma, such as SyncModel<1, 2, false>,
// needs a `using` alias first: the preprocessor splits arguments at commas).
// model/model_main.cpp holds the one main() every model binary shares: it
// looks the test up by name, runs it under the scheduler the command line
// asks for, prints the scheduler, bound and executions explored, and checks
// Relacy's verdict against --expect (docs/model.md).
#pragma once

#include "model_support.hpp"

#include <map>
#include <string>

namespace zap_model {

struct Entry {
    bool (*run)(rl::test_params&);
    bool spurious;          // futex wake-ups may be spurious (safety) or not (liveness)
    P::SpawnFailure spawn;  // when the model platform's thread spawn fails
    const char* claim;
};

// Every registered model of this binary, by name.
inline std::map<std::string, Entry>& registry() {
    static std::map<std::string, Entry> models;
    return models;
}

struct Registrar {
    Registrar(const char* name, Entry entry) { registry().emplace(name, entry); }
};

template <class T>
bool simulate(rl::test_params& params) {
    return rl::simulate<T>(params);
}

}  // namespace zap_model

#define ZAP_MODEL_TEST(name, Type, spurious, spawn, claim)                  \
    static const ::zap_model::Registrar zap_model_registrar_##name{         \
        #name, ::zap_model::Entry{&::zap_model::simulate<Type>, spurious, spawn, claim}}
