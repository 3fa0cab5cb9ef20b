// SPDX-License-Identifier: MIT
// zap/first_exception.hpp - keeps the first exception thrown by a group of
// children, to rethrow it once every child has ended.
//
// The drop-in layer's rule (TaskGroup, parallel_for, for_each,
// parallel_invoke): a throwing child cancels nothing; every child still runs,
// and the first exception is rethrown by the waiter after all have ended.
//
// Protocol:
//   1. A child that throws calls capture() inside its catch (...) block.
//      The first capture() to claim the slot (exchange on `claimed_`) stores
//      std::current_exception(); later ones drop theirs.
//   2. The waiter calls rethrow_if_any() only after the group's count reached
//      zero. The release/acquire that lets the waiter return (WaitGroup's
//      done()/wait()) orders the stored exception_ptr before that read.
#pragma once

#include <exception>

namespace zap::detail {

template <class Platform>
class FirstException {
public:
    // Step 1: call from inside a catch block.
    void capture() noexcept {
        // Claims the slot; orders nothing (the group's done() publishes the store below).
        if (claimed_.exchange(true, std::memory_order_relaxed)) return;
        exception_ = std::current_exception();
    }

    // Step 2: rethrows the first captured exception, if any.
    void rethrow_if_any() {
        if (exception_) std::rethrow_exception(exception_);
    }

private:
    typename Platform::template Atomic<bool> claimed_{false};
    std::exception_ptr exception_;
};

}  // namespace zap::detail
