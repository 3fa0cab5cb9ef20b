// SPDX-License-Identifier: MIT
// zap/version.hpp - which zap this is: ZAP_VERSION_MAJOR, _MINOR and _PATCH,
// and ZAP_VERSION = major * 10000 + minor * 100 + patch (1.0.0 is 10000), so
// that a program can test for a version with #if. Macros only: this header
// compiles in every C++ mode (and C99), so a build may read the version
// even where <zap/zap.hpp> would refuse the language version.
//
// The same number is project(zap VERSION ...) in CMakeLists.txt, which the
// CMake package (find_package(zap 1.0 CONFIG)) and zap.pc carry; the test
// unit.version fails when the two differ. Versions follow semantic
// versioning: a new major version may break programs, a new minor version
// only adds; CHANGELOG.md says what each changed.
#pragma once

#define ZAP_VERSION_MAJOR 1
#define ZAP_VERSION_MINOR 0
#define ZAP_VERSION_PATCH 0
#define ZAP_VERSION (ZAP_VERSION_MAJOR * 10000 + ZAP_VERSION_MINOR * 100 + ZAP_VERSION_PATCH)
