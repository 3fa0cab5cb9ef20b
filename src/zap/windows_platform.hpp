// SPDX-License-Identifier: MIT
// zap/windows_platform.hpp - the Windows Platform: WaitOnAddress and
// WakeByAddressSingle/All for futex_wait/futex_wake (Windows 8 and later;
// link with synchronization.lib, which the CMake target and zap.pc do),
// _beginthreadex threads with the configured stack size reserved, thread
// names through SetThreadDescription where the system has it (Windows 10
// 1607 and later: looked up at run time, so older systems run unnamed).
//
// Built with MinGW-w64 (GCC 12) and tested under Wine here; MSVC is untested.
#pragma once

#include <zap/std_primitives.hpp>

// Only what this header needs from <windows.h>, and no min/max macros (they
// would break std::min and std::max in every header that follows).
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#define ZAP_UNDEF_WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#define ZAP_UNDEF_NOMINMAX
#endif
#include <windows.h>
#include <process.h>
#ifdef ZAP_UNDEF_WIN32_LEAN_AND_MEAN
#undef WIN32_LEAN_AND_MEAN
#undef ZAP_UNDEF_WIN32_LEAN_AND_MEAN
#endif
#ifdef ZAP_UNDEF_NOMINMAX
#undef NOMINMAX
#undef ZAP_UNDEF_NOMINMAX
#endif

#ifdef _MSC_VER
#pragma comment(lib, "synchronization.lib")
#endif

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <utility>

namespace zap {

// A worker thread: its handle, and what it runs. Allocated by spawn(), freed
// by join(): a Windows thread cannot learn a handle to itself that another
// thread may wait on, so the worker finds this through the thread-local.
struct WindowsThread {
    HANDLE handle;
    void* (*entry)(void*);
    void* arg;
};

namespace detail {

// The two Win32 calls whose failure decides a path of the platform that no
// test could otherwise reach: ResumeThread on the thread spawn() has just
// created suspended, and the lookup of SetThreadDescription (absent before
// Windows 10 1607). A test replaces them with failing ones
// (tests/test_std_platform.cpp); zap::WindowsPlatform uses these.
struct Win32Calls {
    static DWORD resume_thread(HANDLE thread) noexcept { return ResumeThread(thread); }
    static FARPROC find_set_thread_description() noexcept {
        return GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "SetThreadDescription");
    }
};

// The platform over the Win32 calls of `Os`; zap::WindowsPlatform, below,
// is it over the real ones.
template <class Os>
struct WindowsPlatform : StdPrimitives {
    // spawn.hpp's heap tasks come from closure_alloc.hpp's per-thread blocks.
    static constexpr bool recycles_closures = true;

    // Calls Fn(arg) when the calling thread exits, through a fiber-local
    // slot's callback, which Windows hands the slot's value. Not a
    // thread_local's destructor: MinGW-w64 frees its emulated thread_locals
    // before it runs those, so a destructor that read the thread's Cache
    // pointer read a fresh null (a write to address 0x28, seen under Wine).
    // For the same reason a late destructor can call again for the same Fn
    // while the thread exits: that call is chained to the earlier one.
    template <void (*Fn)(void*)>
    static bool at_thread_exit(void* arg) noexcept {
        static const DWORD slot = FlsAlloc(&run_exit_calls<Fn>);
        if (slot == FLS_OUT_OF_INDEXES) return false;
        auto* call = new (std::nothrow) ExitCall{arg, static_cast<ExitCall*>(FlsGetValue(slot))};
        if (call == nullptr) return false;
        if (FlsSetValue(slot, call)) return true;
        delete call;
        return false;
    }

    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected, const std::chrono::nanoseconds* timeout,
                           Loc = Loc::current()) noexcept {
        if (timeout == nullptr) {
            WaitOnAddress(&word.underlying(), &expected, sizeof expected, INFINITE);
            return true;  // a wake-up, or a spurious return
        }
        const auto start = std::chrono::steady_clock::now();
        if (WaitOnAddress(&word.underlying(), &expected, sizeof expected, wait_milliseconds(*timeout))) return true;
        if (GetLastError() != ERROR_TIMEOUT) return true;
        // Windows may end a wait up to a timer tick early, and a timeout
        // beyond wait_milliseconds() is cut short: either way the caller's timeout
        // has not expired yet, so this is a spurious return, not a timeout.
        return std::chrono::steady_clock::now() - start < *timeout;
    }

    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc = Loc::current()) noexcept {
        if (count == 1) {
            WakeByAddressSingle(&word.underlying());
        } else {
            WakeByAddressAll(&word.underlying());  // wakes more than `count`: for them a spurious return
        }
    }

    using Thread = WindowsThread*;

    // The thread starts suspended and is resumed once its handle is stored,
    // so the handle is written before anything the worker does: join() reads
    // it after synchronizing with the worker.
    static bool spawn(const ThreadOptions& options, void* (*entry)(void*), void* arg) noexcept {
        auto* thread = new (std::nothrow) WindowsThread{nullptr, entry, arg};
        if (thread == nullptr) return false;
        const std::uintptr_t handle = _beginthreadex(nullptr, stack_bytes(options.stack_size), &start, thread,
                                                     CREATE_SUSPENDED | STACK_SIZE_PARAM_IS_A_RESERVATION, nullptr);
        if (handle == 0) {
            delete thread;
            return false;
        }
        thread->handle = reinterpret_cast<HANDLE>(handle);
        if (Os::resume_thread(thread->handle) != static_cast<DWORD>(-1)) return true;
        // The thread never ran a line of ours: end it and report the failure.
        TerminateThread(thread->handle, 0);
        join(thread);
        return false;
    }

    static Thread this_thread() noexcept { return current_thread(); }

    static void join(Thread thread) noexcept {
        WaitForSingleObject(thread->handle, INFINITE);
        CloseHandle(thread->handle);
        delete thread;
    }

    static void name_this_thread(const char* name) noexcept {
        using SetThreadDescriptionFn = HRESULT(WINAPI*)(HANDLE, PCWSTR);
        // Through void(*)(): a cast between unrelated function types would warn (-Wcast-function-type).
        static const auto set_description =
            reinterpret_cast<SetThreadDescriptionFn>(reinterpret_cast<void (*)()>(Os::find_set_thread_description()));
        if (set_description == nullptr) return;
        // Names longer than the buffer are cut; each UTF-8 byte yields at most one UTF-16 unit.
        wchar_t wide[256];
        const int bytes = static_cast<int>(std::min<std::size_t>(std::strlen(name), std::size(wide) - 1));
        const int units = MultiByteToWideChar(CP_UTF8, 0, name, bytes, wide, bytes);
        wide[units] = L'\0';
        set_description(GetCurrentThread(), wide);
    }

private:
    struct ExitCall {
        void* arg;
        ExitCall* next;  // registered before this one
    };
    template <void (*Fn)(void*)>
    static void NTAPI run_exit_calls(void* first) {
        for (auto* call = static_cast<ExitCall*>(first); call != nullptr;) {
            Fn(call->arg);
            delete std::exchange(call, call->next);
        }
    }

    static unsigned __stdcall start(void* argument) {
        auto* self = static_cast<WindowsThread*>(argument);
        current_thread() = self;
        self->entry(self->arg);
        return 0;
    }

    static WindowsThread*& current_thread() noexcept {
        thread_local WindowsThread* thread = nullptr;
        return thread;
    }

    // WaitOnAddress takes whole milliseconds below INFINITE: rounded up, so
    // that a short timeout still sleeps, and capped.
    static DWORD wait_milliseconds(std::chrono::nanoseconds timeout) noexcept {
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(std::max(timeout, std::chrono::nanoseconds{0}));
        return static_cast<DWORD>(std::min<std::chrono::milliseconds::rep>(ms.count(), INFINITE - 1));
    }

    // _beginthreadex takes an unsigned count of bytes; Windows rounds it up
    // to its allocation granularity.
    static unsigned stack_bytes(std::size_t requested) noexcept {
        return static_cast<unsigned>(std::min<std::size_t>(requested, std::numeric_limits<unsigned>::max()));
    }
};

}  // namespace detail

using WindowsPlatform = detail::WindowsPlatform<detail::Win32Calls>;

}  // namespace zap
