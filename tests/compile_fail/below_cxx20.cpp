// SPDX-License-Identifier: MIT
// Must NOT compile: zap below C++20 stops at once, with one error naming C++20
// (requires_cxx20.hpp: a fatal include, so nothing else is reported).
// zap-flags: -std=c++17
// zap-expect: zap needs C\+\+20
// zap-first-error-in: zap/requires_cxx20.hpp
#include <zap/zap.hpp>

int main() {}
