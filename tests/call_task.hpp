// SPDX-License-Identifier: MIT
// tests/call_task.hpp - a caller-owned task of any Platform that calls a
// function and counts its runs, for tests that schedule one-off work as
// plain tasks (no heap task, so the pool's own paths for them are what runs).
#pragma once

#include <zap/task.hpp>

#include <atomic>
#include <functional>
#include <utility>

template <class Platform>
struct BasicCall : zap::BasicTask<Platform> {
    std::function<void()> f;
    std::atomic<int> runs{0};
    explicit BasicCall(std::function<void()> f = [] {}) : zap::BasicTask<Platform>(&run), f(std::move(f)) {}
    static void run(zap::BasicTask<Platform>* t) {
        auto* self = static_cast<BasicCall*>(t);
        self->f();
        self->runs.fetch_add(1);
    }
};
