// SPDX-License-Identifier: MIT
// bench/lines.cpp - how many cache lines a round trip moves between threads,
// counted, by call site.
//
// This machine's guest has no hardware memory events (`perf c2c record`:
// "memory events not supported"), so the count comes from a model of the
// accesses instead: zap's templates run on a Platform whose every atomic
// operation and Cell access (the shared memory the algorithm touches)
// first updates a small coherence model of its cache line. Per line it
// keeps which threads hold a copy; a read by a thread without a copy, or a
// write (or read-modify-write) while another thread holds one, is a
// transfer between cores, charged to the call site (file:line) that made
// it. A first touch of a line nobody holds is not a transfer. What the
// model leaves out: the bytes zap does not order - a task's own payload,
// the closure's captures - and the hardware's prefetching and false
// sharing with lines outside zap's objects; what it keeps is what the
// protocols themselves move.
//
//   bench_lines [rounds]   the three pingpong shapes of bench/run, counted
//
// Each shape runs `rounds` round trips (default 20,000) after as many
// uncounted ones, twice: once with every waiter spinning long enough to see
// its wake-up without sleeping (the quiet machine's path: Config::spin_rounds
// and Platform::wait_spin_rounds 2^20), once with no spin at all (every wait
// sleeps in the futex: a machine with no CPU to spare). The counting itself
// is slow (one mutex), so the default spins would run out at times and mix
// the two paths. It prints the transfers per round trip, then the sites that
// made at least 0.05 per round trip.
#include <zap/zap.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

// The coherence model: one entry per 64-byte line, guarded by one mutex
// (the counting serializes the accesses; it counts, it does not time).
class Lines {
public:
    static Lines& get() {
        static Lines lines;
        return lines;
    }

    void touch(const void* address, bool write, const zap::SourceLocation& loc) {
        const std::uintptr_t line = reinterpret_cast<std::uintptr_t>(address) / 64;
        const std::uint32_t me = thread_bit();
        const std::lock_guard<std::mutex> hold(mutex_);
        if (!counting_) return;
        std::uint32_t& holders = holders_[line];
        const bool others = (holders & ~me) != 0;
        const bool moved = write ? others : (holders & me) == 0 && others;
        holders = write ? me : holders | me;
        if (moved) ++sites_[site_of(loc)];
    }

    void start() {
        const std::lock_guard<std::mutex> hold(mutex_);
        holders_.clear();
        sites_.clear();
        counting_ = true;
    }

    std::map<std::string, std::uint64_t> stop() {
        const std::lock_guard<std::mutex> hold(mutex_);
        counting_ = false;
        return std::exchange(sites_, {});
    }

private:
    static std::uint32_t thread_bit() {
        static std::atomic<std::uint32_t> next{0};
        thread_local const std::uint32_t bit = 1u << (next.fetch_add(1) % 32);
        return bit;
    }
    static std::string site_of(const zap::SourceLocation& loc) {
        std::string file = loc.file_name();
        const auto slash = file.rfind("/zap/");
        if (slash != std::string::npos) file = file.substr(slash + 5);
        return file + ":" + std::to_string(loc.line());
    }

    std::mutex mutex_;
    bool counting_ = false;
    std::unordered_map<std::uintptr_t, std::uint32_t> holders_;
    std::map<std::string, std::uint64_t> sites_;
};

// The production platform, each shared access counted first; every wait
// spins `Spin` rounds before it sleeps.
template <std::uint32_t Spin>
struct Counted : zap::StdPlatform {
    using Loc = zap::SourceLocation;
    using Base = zap::StdPlatform;

    template <class T>
    class Atomic : public Base::Atomic<T> {
    public:
        using Base::Atomic<T>::Atomic;
        T load(std::memory_order order, Loc loc = Loc::current()) const noexcept {
            Lines::get().touch(this, false, loc);
            return Base::Atomic<T>::load(order);
        }
        void store(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            Base::Atomic<T>::store(value, order);
        }
        T exchange(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            return Base::Atomic<T>::exchange(value, order);
        }
        bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                   Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            return Base::Atomic<T>::compare_exchange_weak(expected, desired, success, failure);
        }
        bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                     Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            return Base::Atomic<T>::compare_exchange_strong(expected, desired, success, failure);
        }
        T fetch_add(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            return Base::Atomic<T>::fetch_add(value, order);
        }
        T fetch_sub(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            return Base::Atomic<T>::fetch_sub(value, order);
        }
        T fetch_or(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            return Base::Atomic<T>::fetch_or(value, order);
        }
        T fetch_and(T value, std::memory_order order, Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            return Base::Atomic<T>::fetch_and(value, order);
        }
    };

    template <class T>
    class Cell : public Base::Cell<T> {
    public:
        using Base::Cell<T>::Cell;
        T read(Loc loc = Loc::current()) const noexcept {
            Lines::get().touch(this, false, loc);
            return Base::Cell<T>::read();
        }
        void write(T value, Loc loc = Loc::current()) noexcept {
            Lines::get().touch(this, true, loc);
            Base::Cell<T>::write(value);
        }
    };

    static bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                           const std::chrono::nanoseconds* timeout, Loc loc = Loc::current()) noexcept {
        Lines::get().touch(&word, false, loc);  // the kernel reads the word
        return Base::futex_wait(word, expected, timeout);
    }
    static void futex_wake(Atomic<std::uint32_t>& word, std::uint32_t count, Loc = Loc::current()) noexcept {
        Base::futex_wake(word, count);  // the kernel's own lines are not counted
    }

    static constexpr std::uint32_t wait_spin_rounds = Spin;
};

// The low-level shape: the external thread schedules a task and sleeps on
// a futex word the task sets (bench/harness.hpp's Signal, on this platform).
template <class P>
struct Signal {
    typename P::template Atomic<std::uint32_t> word{0};
    void set() {
        word.store(1, std::memory_order_release);
        P::futex_wake(word, 1);
    }
    void wait_and_reset() {
        while (word.load(std::memory_order_acquire) == 0) P::futex_wait(word, 0, nullptr);
        word.store(0, std::memory_order_relaxed);
    }
};

template <class P>
struct Pong : zap::BasicTask<P> {
    Signal<P>* done;
    explicit Pong(Signal<P>* s) : zap::BasicTask<P>(&run), done(s) {}
    static void run(zap::BasicTask<P>* task) { static_cast<Pong*>(task)->done->set(); }
};

template <class Rounds>
void count(const char* shape, std::uint64_t rounds, Rounds&& run) {
    run(rounds);  // warm-up, not counted
    Lines::get().start();
    run(rounds);
    const auto sites = Lines::get().stop();
    std::uint64_t total = 0;
    for (const auto& [site, n] : sites) total += n;
    std::printf("%-12s %8.2f lines per round trip\n", shape, static_cast<double>(total) / static_cast<double>(rounds));
    std::vector<std::pair<std::uint64_t, std::string>> top;
    for (const auto& [site, n] : sites) top.emplace_back(n, site);
    std::sort(top.rbegin(), top.rend());
    for (const auto& [n, site] : top) {
        const double per = static_cast<double>(n) / static_cast<double>(rounds);
        if (per >= (std::getenv("LINES_ALL") ? 0.0 : 0.05)) std::printf("    %6.2f  %s\n", per, site.c_str());
    }
}

// The three shapes on a pool of two workers of platform P.
template <class P>
void shapes(const char* path, std::uint64_t rounds) {
    using Pool = zap::BasicThreadPool<P>;
    using TaskGroup = zap::BasicTaskGroup<P>;
    zap::Config config;
    config.max_threads = 2;
    config.spin_rounds = P::wait_spin_rounds;
    std::printf("-- %s\n", path);
    {
        Pool pool(config);
        pool.warm(2);
        Signal<P> signal;
        count("low-level", rounds, [&](std::uint64_t n) {
            Pong<P> pong(&signal);
            for (std::uint64_t i = 0; i < n; ++i) {
                pool.schedule(pong);
                signal.wait_and_reset();
            }
        });
    }
    {
        Pool pool(config);
        pool.warm(2);
        count("drop-in", rounds, [&](std::uint64_t n) {
            TaskGroup pong(pool);
            for (std::uint64_t i = 0; i < n; ++i) {
                pong.run([] {});
                pong.wait();
            }
        });
    }
    {
        Pool pool(config);
        pool.warm(2);
        count("in-pool", rounds, [&](std::uint64_t n) {
            std::atomic<bool> ended{false};
            pool.spawn([&pool, &ended, n] {
                TaskGroup pong(pool);
                for (std::uint64_t i = 0; i < n; ++i) {
                    pong.run([] {});
                    pong.wait();
                }
                ended.store(true);
            });
            while (!ended.load()) std::this_thread::yield();
        });
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::uint64_t rounds = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20000;
    shapes<Counted<1u << 20>>("every wait spins until its wake-up comes", rounds);
    shapes<Counted<0>>("every wait sleeps at once", rounds);
    return 0;
}
