// SPDX-License-Identifier: MIT
// How many rounds a repeated race test runs: its own count natively, and
// that count divided by ZAP_TEST_ROUNDS_DIVISOR when the variable is set.
// tools/emulate sets it for the Windows and arm64 runs: there a thread start
// costs milliseconds (Wine, qemu) instead of microseconds, and those runs check the
// platform's code, not the odds of a race, which the native runs (with the
// full count, under TSan too) are for.
#pragma once

#include <cstdlib>

namespace zap_test {

inline int rounds(int native) {
    const char* divisor = std::getenv("ZAP_TEST_ROUNDS_DIVISOR");
    const int by = divisor != nullptr ? std::atoi(divisor) : 1;
    return by > 1 ? (native + by - 1) / by : native;
}

}  // namespace zap_test
