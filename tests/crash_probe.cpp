// SPDX-License-Identifier: MIT
// tests/crash_probe.cpp - a program that crashes: it writes through a null
// pointer. unit.emulator_reports_a_crash expects it to fail (WILL_FAIL), so
// a test command that reports a crashed test as passed fails there: Wine's
// default crash debugger ended such a program with exit code 0, which
// tools/emulate prevents by turning the debugger off.
#include <chrono>
#include <cstdio>
#include <thread>

int main() {
    // A second thread still alive, as in a test binary: with one, a crash
    // under Wine's default debugger ended with exit code 0.
    std::thread([] { std::this_thread::sleep_for(std::chrono::seconds(30)); }).detach();
    volatile int* nowhere = nullptr;
    *nowhere = 1;
    std::puts("zap crash probe: the write through null did not crash");
    return 0;
}
