// SPDX-License-Identifier: MIT
// zap/core_config.hpp - what the pool's core (pool_core.hpp) is set up with:
// the plain parts of zap::Config (config.hpp), and its thread hooks as plain
// function pointers. No allocation, no std::string or std::function, so the
// core compiles wherever <atomic> does (the GenMC model, docs/model.md
// section 7); BasicThreadPool (thread_pool.hpp) makes one from a Config.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zap::detail {

struct CoreConfig {
    // Stack bytes per worker when Config does not say (4 MiB, the seed's).
    static constexpr std::size_t default_stack_size = 4 << 20;

    // Called on each worker: `start` before its first task (with its
    // index, after the worker has its context), `exit` after its last one;
    // each receives `context`. Null: nothing is called. BasicThreadPool's
    // name the thread and run Config::on_thread_start / on_thread_exit.
    struct Hooks {
        void (*start)(void* context, std::uint32_t index) noexcept = nullptr;
        void (*exit)(void* context) noexcept = nullptr;
        void* context = nullptr;
    };

    std::uint32_t max_threads = 1;  // 1 .. Sync::max_count (sync.hpp): the caller checks
    std::size_t stack_size = default_stack_size;
    std::uint32_t max_help_depth = 0;  // Config::max_help_depth (0: from stack_size)
    std::uint32_t spin_rounds = 0;     // Config::spin_rounds (0: no spin)
    Hooks hooks = {};
};

}  // namespace zap::detail
