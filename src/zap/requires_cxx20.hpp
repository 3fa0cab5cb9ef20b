// SPDX-License-Identifier: MIT
// zap/requires_cxx20.hpp - zap is C++20 (concepts, coroutines, std::atomic::wait,
// std::source_location): compiled in an earlier mode, a public header stops
// here with a single error that names C++20, before any other header is read.
// `#error` alone would not do: GCC and clang go on after it and bury the
// message under the errors of everything that follows. An #include of a file
// that cannot exist is fatal in every compiler, and its name is the message:
//   fatal error: zap needs C++20 or later (compile with -std=c++20): No such file or directory
// The test: unit.cxx20_gate (tests/consumer/check.sh cxx17).
//
// C++20 modes before the standard's final number (GCC 10's -std=c++20 says
// 201709L) pass: anything after C++17. MSVC reports its mode in _MSVC_LANG.
#pragma once

#if defined(_MSVC_LANG)
#if _MSVC_LANG <= 201703L
#include <zap needs C++20 or later (compile with /std:c++20)>
#endif
#elif !defined(__cplusplus) || __cplusplus <= 201703L
#include <zap needs C++20 or later (compile with -std=c++20)>
#endif
