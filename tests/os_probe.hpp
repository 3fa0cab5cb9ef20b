// SPDX-License-Identifier: MIT
// What a test asks the operating system about the calling thread: its name,
// its stack size, how often it has slept. Each answer is empty where the
// system has no such thing, and the test then reports SKIPPED, never a pass.
#pragma once

#include <zap/portable_platform.hpp>
#include <zap/std_platform.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>

#if defined(__linux__)
#include <pthread.h>
#include <sys/resource.h>
#elif defined(_WIN32)
#include <windows.h>
#endif

namespace zap_test {

// False on the portable platform: std::thread cannot name a thread or size its stack.
inline constexpr bool platform_names_threads_and_sizes_stacks =
    !std::is_base_of_v<zap::PortablePlatform, zap::StdPlatform>;

// The calling thread's name as the OS reports it.
inline std::optional<std::string> thread_name() {
#if defined(__linux__)
    char name[16] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return std::nullopt;
    return std::string(name);
#elif defined(_WIN32)
    using GetThreadDescriptionFn = HRESULT(WINAPI*)(HANDLE, PWSTR*);
    const auto get = reinterpret_cast<GetThreadDescriptionFn>(
        reinterpret_cast<void (*)()>(GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "GetThreadDescription")));
    PWSTR wide = nullptr;
    if (get == nullptr || FAILED(get(GetCurrentThread(), &wide))) return std::nullopt;
    std::string name;
    // The tests' names are ASCII.
    for (PWSTR c = wide; *c != L'\0'; ++c) name += *c < 128 ? static_cast<char>(*c) : '?';
    LocalFree(wide);
    return name;
#else
    return std::nullopt;
#endif
}

// The calling thread's stack size in bytes (Windows: its reservation).
inline std::optional<std::size_t> stack_size() {
#if defined(__linux__)
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return std::nullopt;
    std::size_t bytes = 0;
    pthread_attr_getstacksize(&attr, &bytes);
    pthread_attr_destroy(&attr);
    return bytes;
#elif defined(_WIN32)
    ULONG_PTR low = 0, high = 0;
    GetCurrentThreadStackLimits(&low, &high);
    return static_cast<std::size_t>(high - low);
#else
    return std::nullopt;
#endif
}

// How many times the calling thread went to sleep (voluntary context switches).
inline std::optional<long> sleeps() {
#if defined(__linux__)
    rusage usage{};
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return std::nullopt;
    return usage.ru_nvcsw;
#else
    return std::nullopt;  // Windows counts context switches per thread only in its performance counters
#endif
}

}  // namespace zap_test
