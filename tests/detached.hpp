// SPDX-License-Identifier: MIT
// tests/detached.hpp - the least a coroutine needs to run on a pool, for the
// tests, the stress scenarios and the benchmarks of `co_await pool.schedule()`:
// it starts at once, nobody awaits it, and its frame goes when it ends (the
// frame is its one allocation). examples/coroutine.cpp writes its own: an
// example stands alone.
#pragma once

#include <coroutine>
#include <exception>

namespace zap_test {

struct Detached {
    struct promise_type {
        Detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

}  // namespace zap_test
