// SPDX-License-Identifier: MIT
// Must NOT compile: zap below C++20 stops at once, with one error naming C++20.
// zap-flags: -std=c++17
// zap-expect: zap needs C\+\+20
// zap-first-error-in: zap/zap.hpp
#include <zap/zap.hpp>

int main() {}
