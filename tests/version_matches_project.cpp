// SPDX-License-Identifier: MIT
// unit.version: compiled, not run. <zap/version.hpp> must say the version of
// project(zap VERSION ...) in CMakeLists.txt (passed as ZAP_PROJECT_VERSION_*),
// which the CMake package and zap.pc carry, and ZAP_VERSION must be its
// documented single number.
#include <zap/version.hpp>

static_assert(ZAP_VERSION_MAJOR == ZAP_PROJECT_VERSION_MAJOR && ZAP_VERSION_MINOR == ZAP_PROJECT_VERSION_MINOR &&
                  ZAP_VERSION_PATCH == ZAP_PROJECT_VERSION_PATCH,
              "src/zap/version.hpp and project(zap VERSION ...) in CMakeLists.txt name different versions");
static_assert(ZAP_VERSION == ZAP_PROJECT_VERSION_MAJOR * 10000 + ZAP_PROJECT_VERSION_MINOR * 100 + ZAP_PROJECT_VERSION_PATCH,
              "ZAP_VERSION is not major * 10000 + minor * 100 + patch");
static_assert(ZAP_PROJECT_VERSION_MINOR < 100 && ZAP_PROJECT_VERSION_PATCH < 100,
              "ZAP_VERSION holds minor and patch numbers below 100 only");
