// SPDX-License-Identifier: MIT
// stress/trace.hpp - what the watchdog prints when a run hangs or a check
// fails: the run's identity (scenario, platform, seed), the scenario's
// progress counters, and one slot per thread saying what it did last.
//
// Slots are written with relaxed atomics by their own thread and read by the
// watchdog, so dumping them while the pool runs is not a data race. The chaos
// platform notes every atomic operation of the pool (with its call site); the
// scenarios note coarse steps ("run task", "wait group") on both platforms.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <zap/platform.hpp>

namespace stress {

// One thread's last recorded operation.
struct Slot {
    std::atomic<bool> used{false};
    std::atomic<const char*> role{nullptr};  // "main", "submitter", "worker", ...
    std::atomic<const char*> op{nullptr};    // a string literal
    std::atomic<const char*> file{nullptr};  // source_location::file_name(): static storage
    std::atomic<std::uint32_t> line{0};
    std::atomic<std::uint64_t> count{0};  // operations noted so far
};

inline constexpr std::size_t max_slots = 256;
inline Slot slots[max_slots];

// Which run is in progress, and its counters (the watchdog prints them).
struct Progress {
    std::atomic<const char*> scenario{"(none)"};
    std::atomic<const char*> platform{"(none)"};
    std::atomic<const char*> stage{"(none)"};
    std::atomic<std::uint64_t> seed{0};
    std::atomic<std::uint64_t> scheduled{0};  // tasks handed to a pool in this run
    std::atomic<std::uint64_t> executed{0};   // tasks whose callback started, in this run
    std::atomic<std::uint64_t> cycles{0};     // scenario-defined steps (pool cycles, rounds)
    std::atomic<std::uint64_t> total_executed{0};  // over the whole process
};
inline Progress progress;

namespace detail {

// Gives the slot back when its thread exits (pools come and go by thousands).
struct SlotHandle {
    Slot* slot = nullptr;
    ~SlotHandle() {
        if (slot != nullptr) slot->used.store(false, std::memory_order_release);
    }
};

inline Slot* claim_slot() noexcept {
    for (auto& s : slots) {
        bool expected = false;
        if (!s.used.load(std::memory_order_relaxed) &&
            s.used.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
            s.role.store("thread", std::memory_order_relaxed);
            s.op.store("started", std::memory_order_relaxed);
            s.file.store(nullptr, std::memory_order_relaxed);
            s.count.store(0, std::memory_order_relaxed);
            return &s;
        }
    }
    return nullptr;  // more threads than slots: this one is not traced
}

inline Slot* my_slot() noexcept {
    thread_local SlotHandle handle{claim_slot()};
    return handle.slot;
}

}  // namespace detail

// Names the calling thread's role in dumps.
inline void set_role(const char* role) noexcept {
    if (Slot* s = detail::my_slot()) s->role.store(role, std::memory_order_relaxed);
}

// Records the calling thread's latest operation.
inline void note(const char* op, zap::SourceLocation loc = zap::SourceLocation::current()) noexcept {
    Slot* s = detail::my_slot();
    if (s == nullptr) return;
    s->op.store(op, std::memory_order_relaxed);
    s->file.store(loc.file_name(), std::memory_order_relaxed);
    s->line.store(loc.line(), std::memory_order_relaxed);
    s->count.fetch_add(1, std::memory_order_relaxed);
}

inline void dump(std::FILE* out) noexcept {
    const auto& p = progress;
    std::fprintf(out, "  scenario %s, platform %s, stage %s\n", p.scenario.load(), p.platform.load(), p.stage.load());
    std::fprintf(out, "  replay: zap_stress --scenario %s --platform %s --seed %llu\n", p.scenario.load(),
                 p.platform.load(), static_cast<unsigned long long>(p.seed.load()));
    std::fprintf(out, "  progress: scheduled %llu, executed %llu, cycles %llu\n",
                 static_cast<unsigned long long>(p.scheduled.load()),
                 static_cast<unsigned long long>(p.executed.load()),
                 static_cast<unsigned long long>(p.cycles.load()));
    std::fprintf(out, "  threads (last operation noted):\n");
    for (std::size_t i = 0; i < max_slots; ++i) {
        const Slot& s = slots[i];
        if (!s.used.load(std::memory_order_acquire)) continue;
        const char* file = s.file.load(std::memory_order_relaxed);
        std::fprintf(out, "    [%3zu] %-10s %-22s at %s:%u  (%llu ops)\n", i, s.role.load(std::memory_order_relaxed),
                     s.op.load(std::memory_order_relaxed), file != nullptr ? file : "-",
                     s.line.load(std::memory_order_relaxed),
                     static_cast<unsigned long long>(s.count.load(std::memory_order_relaxed)));
    }
    std::fflush(out);
}

// A failed invariant: say which run it was, then abort (ctest and the
// sanitizers both see the abort).
[[noreturn]] inline void fail(const char* what, const char* file, int line) noexcept {
    std::fprintf(stderr, "\nzap_stress: CHECK FAILED: %s (%s:%d)\n", what, file, line);
    dump(stderr);
    std::abort();
}

}  // namespace stress

#define STRESS_CHECK(condition) \
    ((condition) ? static_cast<void>(0) : ::stress::fail(#condition, __FILE__, __LINE__))
