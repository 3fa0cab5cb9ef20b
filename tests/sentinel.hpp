// SPDX-License-Identifier: MIT
// tests/sentinel.hpp - a capture that counts its destruction, for the rules on
// when a callable and its captures are gone (spawn/submit, TaskGroup's skipped
// children). Moved-from copies count nothing.
#pragma once

#include <atomic>
#include <memory>
#include <utility>

struct Sentinel {
    std::shared_ptr<std::atomic<int>> destroyed;
    explicit Sentinel(std::shared_ptr<std::atomic<int>> counter) : destroyed(std::move(counter)) {}
    Sentinel(Sentinel&&) noexcept = default;
    Sentinel(const Sentinel&) = delete;
    ~Sentinel() {
        if (destroyed) ++*destroyed;
    }
};
