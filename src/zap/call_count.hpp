// SPDX-License-Identifier: MIT
// zap/call_count.hpp - the calls of an object's methods still under way, so
// that its destructor can wait for them (pool_core.hpp B7).
//
// Protocol:
//   1. A counted call constructs a Call first thing: fetch_add(1), before
//      it touches anything else of the object.
//   2. The Call's destructor is the call's last touch: fetch_sub(1), release.
//   3. The owner's destructor calls wait_until_none(): it polls the count
//      (acquire) until it reads zero, spinning briefly, then sleeping in
//      short timed waits (backoff.hpp): nobody wakes it, since a call's last
//      step is the fetch_sub itself.
// A call whose fetch_add comes after the owner's last read of zero started
// after the object's end, as a call on any destroyed object would: the
// count cannot make that safe, and nothing can.
#pragma once

#include <zap/backoff.hpp>

#include <atomic>
#include <cstdint>

namespace zap::detail {

template <class Platform>
class CallCount {
public:
    class Call {
    public:
        explicit Call(CallCount& count) noexcept : count_(count) {
            count_.calls_.fetch_add(1, std::memory_order_relaxed);  // step 1; ordered by step 2's release
        }
        ~Call() {
            // Step 2. Release: the call's touches of the object happen before
            // wait_until_none()'s acquire.
            count_.calls_.fetch_sub(1, std::memory_order_release);
        }
        Call(const Call&) = delete;
        Call& operator=(const Call&) = delete;

    private:
        CallCount& count_;
    };

    // Step 3.
    void wait_until_none() noexcept {
        Backoff<Platform> backoff;
        // Synchronizes with ~Call()'s release: those calls are done with the object.
        for (std::uint32_t calls; (calls = calls_.load(std::memory_order_acquire)) != 0;) backoff.pause(calls_, calls);
    }

private:
    typename Platform::template Atomic<std::uint32_t> calls_{0};
};

}  // namespace zap::detail
