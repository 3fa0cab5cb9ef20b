// SPDX-License-Identifier: MIT
// zap/std_platform.hpp - zap::StdPlatform, the production Platform: the
// native platform of the system being compiled for, chosen here and only
// here (the algorithm's headers never test the operating system).
//
//   Linux                   LinuxPlatform     (linux_platform.hpp: futex, pthreads)
//   Windows                 WindowsPlatform   (windows_platform.hpp: WaitOnAddress, Windows threads)
//   anything else           PortablePlatform  (portable_platform.hpp: std::atomic::wait, std::thread)
//   ZAP_PORTABLE_PLATFORM   PortablePlatform everywhere (CMake: -DZAP_PLATFORM=portable)
//
// StdPlatform is a struct derived from the chosen platform rather than an
// alias, so that a platform derived from it (the tests' counting platforms)
// may name its base `StdPlatform`. Every translation unit of a program must
// make the same choice (define ZAP_PORTABLE_PLATFORM in all or none), or
// zap::ThreadPool would mean two different classes. docs/platforms.md maps
// each platform's primitives and says where each was tested.
#pragma once

#if defined(ZAP_PORTABLE_PLATFORM)
#include <zap/portable_platform.hpp>
namespace zap {
struct StdPlatform : PortablePlatform {};
}
#elif defined(__linux__)
#include <zap/linux_platform.hpp>
namespace zap {
struct StdPlatform : LinuxPlatform {};
}
#elif defined(_WIN32)
#include <zap/windows_platform.hpp>
namespace zap {
struct StdPlatform : WindowsPlatform {};
}
#else
#include <zap/portable_platform.hpp>
namespace zap {
struct StdPlatform : PortablePlatform {};
}
#endif
