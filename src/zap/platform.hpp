// SPDX-License-Identifier: MIT
// zap/platform.hpp - the seam between the algorithm and the machine it runs on.
//
// Every template in src/zap/ takes a `Platform` parameter and touches shared
// memory, futexes, threads and the thread-local only through it. The
// production build instantiates StdPlatform (std_platform.hpp: the Linux,
// Windows or portable platform, by the system compiled for); the Relacy
// model (model/), the chaos stress platform (stress/) and the test platforms
// (tests/) instantiate the very same templates with their own Platform, so the
// algorithm exists once.
//
// A Platform is a class with these static members (linux_platform.hpp and
// std_primitives.hpp make one):
//
//   using Loc = ...;
//       The call-site type its operations take: SourceLocation, or a
//       model's own type built from it (GenMC's finds the call site's
//       ordering override when the call is compiled). Helpers that pass
//       their caller's site on (the pool's load_sync/cas_sync) take it too.
//
//   template <class T> class Atomic;
//       Atomic<T> a{init}; every operation names its memory order and takes a
//       trailing `Loc loc = Loc::current()` (SourceLocation below)
//       so a model can report, or mutate, the exact call site:
//         T    load(std::memory_order, loc) const
//         void store(T, std::memory_order, loc)
//         T    exchange(T, std::memory_order, loc)
//         bool compare_exchange_weak(T& expected, T desired,
//                                    std::memory_order success,
//                                    std::memory_order failure, loc)
//         bool compare_exchange_strong(...same...)
//         T    fetch_add / fetch_sub / fetch_or / fetch_and (T, std::memory_order, loc)
//
//   template <class T> class Cell;
//       A plain (non-atomic) field that more than one thread touches at
//       different times, ordered by the atomics around it (list links, the
//       queue's consumer cache). Production: a bare T. A model: a cell that
//       reports data races.
//         T    read(loc) const
//         void write(T, loc)
//
//   static void fence(std::memory_order, loc);
//   static void spin_hint() noexcept;
//
//   static bool futex_wait(Atomic<std::uint32_t>&, std::uint32_t expected,
//                          const std::chrono::nanoseconds* timeout, loc);
//       Sleeps while the atomic holds `expected`. May return spuriously.
//       Returns false only when the timeout (if any) expired.
//   static void futex_wake(Atomic<std::uint32_t>&, std::uint32_t count, loc);
//
//   using Thread = ...;   a joinable OS thread handle
//   static bool   spawn(const ThreadOptions&, void* (*entry)(void*), void* arg) noexcept;
//       Starts a joinable thread running entry(arg); false when the OS refused.
//   static Thread this_thread() noexcept;          the handle of the calling thread
//   static void   join(Thread) noexcept;           waits for that thread to exit
//   static void   name_this_thread(const char*) noexcept;
//
//   static void* current_context() noexcept;        a per-thread pointer,
//   static void  set_current_context(void*) noexcept;   null on new threads
//
//   static void* allocate(std::size_t size, std::size_t align);
//   static void  deallocate(void*, std::size_t size, std::size_t align) noexcept;
//
//   static constexpr std::size_t   cache_line;      alignment that keeps hot
//                                                   fields of different threads apart
//   static constexpr std::uint32_t ring_capacity;   slots per worker ring (a power of two)
//   static constexpr std::uint32_t wait_spin_rounds; spin hints a WaitGroup's outside
//                                                   wait and Parker::park spend watching
//                                                   their word before they sleep (spin.hpp)
//   static constexpr std::uint32_t steal_delay_rounds; spin hints a thief leaves a
//                                                   ring's lone task to its owner
//                                                   before it claims it (buffer.hpp 3a)
//
//   Optional: static constexpr bool recycles_closures; when present, the
//   drop-in layer's heap tasks come from closure_alloc.hpp's per-thread
//   blocks instead of one allocate() each (the Linux and Windows
//   platforms; not the portable one or the models), and the Platform has
//     template <void (*Fn)(void*)> static bool at_thread_exit(void* arg) noexcept;
//   which calls Fn(arg) when the calling thread exits (registered once
//   per Fn and thread), handing it `arg` without reading a thread_local;
//   false: it cannot.
//
// Capacities are constants of the Platform so that a model can shrink them
// (a ring of 2 to 4 slots makes overflow and wrap-around reachable in a few
// steps) while production keeps the seed's 256; so is the waiters' spin (a
// model spins a round or two, every round a step to explore).
#pragma once

#include <cstddef>
#include <cstdint>
#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

namespace zap {

// The call site that Platform operations receive. std::source_location where
// the standard library has it; otherwise (clang 14 with libstdc++ 12, the
// ThreadSanitizer build) the compiler builtins that std::source_location is
// made of, which also take the caller's location when used as default arguments.
#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
class SourceLocation {
public:
    static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                            const char* function = __builtin_FUNCTION(),
                                            unsigned line = __builtin_LINE()) noexcept {
        SourceLocation here;
        here.file_ = file;
        here.function_ = function;
        here.line_ = line;
        return here;
    }
    constexpr const char* file_name() const noexcept { return file_; }
    constexpr const char* function_name() const noexcept { return function_; }
    constexpr unsigned line() const noexcept { return line_; }
    constexpr unsigned column() const noexcept { return 0; }

private:
    const char* file_ = "";
    const char* function_ = "";
    unsigned line_ = 0;
};
#endif

// What a Platform needs to start a worker thread.
struct ThreadOptions {
    std::size_t stack_size;  // bytes; the Platform rounds up to what the OS accepts
};

}  // namespace zap
