// SPDX-License-Identifier: MIT
// bench/blocking.hpp - the fork/join and flat workloads written once in the
// blocking style: fork = group.run(f), join = group.wait(), where the waiting
// thread runs other tasks meanwhile. oneTBB's task_group and zap's TaskGroup
// rows run this same code; OpenMP's pragmas say the same in omp_bench.cpp.
//
// A context provides:
//   group()                    a fresh task group (returned by value)
//   psum(words, n, meter)      the peer's own parallel loop (or nullopt: not expressed)
//   pingpong(n, meter)         the peer's own post-and-wait (or nullopt)
//   hop(n, meter)              optional: n hops of one coroutine onto the pool
#pragma once

#include "harness.hpp"

#include <memory>
#include <optional>

namespace bench {

template <class Context>
class Blocking {
public:
    explicit Blocking(Context& context) : c_(context) {}

    // Runs `workload` once untimed (warm-up), then once under the meter.
    bool run(const std::string& workload, std::uint64_t size, Meter& meter, Outcome& out) {
        if (!once(workload, warmup_size(workload, size), nullptr)) return false;
        out = *once(workload, size, &meter);
        meter.idle_second();
        return true;
    }

private:
    template <class F>
    static Outcome timed(Meter* meter, F&& part) {
        return meter != nullptr ? meter->measure(part) : part();
    }

    std::optional<Outcome> once(const std::string& w, std::uint64_t size, Meter* meter) {
        if (w == "fib") return timed(meter, [&] { return Outcome{fib(size), expected_checksum("fib", size + 1) - 1}; });
        if (w == "skynet") return timed(meter, [&] { return Outcome{skynet(0, size), size + (size - 1) / 9}; });
        if (w == "nqueens") {
            const int n = static_cast<int>(size);
            const std::uint64_t forks = nqueens_nodes(Board{}, n) - 1;
            return timed(meter, [&] { return Outcome{queens(Board{}, n), forks}; });
        }
        if (w == "qsort") return qsort(size, meter);
        if (w == "spawn") return spawn(size, meter);
        if (w == "yield") return yield(size, meter);
        if (w == "psum") {
            const auto words = random_words(size);
            return c_.psum(words.data(), size, meter);
        }
        if (w == "pingpong") return c_.pingpong(size, meter);
        if constexpr (requires { c_.hop(size, meter); }) {
            if (w == "hop") return c_.hop(size, meter);
        }
        return std::nullopt;
    }

    std::uint64_t fib(std::uint64_t n) {
        if (n < 2) return n;
        std::uint64_t a = 0;
        auto group = c_.group();
        group.run([&] { a = fib(n - 1); });
        const std::uint64_t b = fib(n - 2);
        group.wait();
        return a + b;
    }

    void sort(std::int32_t* data, std::size_t n) {
        if (n <= sort_cutoff) return insertion_sort(data, n);
        const std::size_t left = partition(data, n);
        auto group = c_.group();
        group.run([=, this] { sort(data, left); });
        sort(data + left, n - left);
        group.wait();
    }

    std::uint64_t skynet(std::uint64_t first, std::uint64_t leaves) {
        if (leaves == 1) return first;
        std::uint64_t sums[10];
        const std::uint64_t step = leaves / 10;
        auto group = c_.group();
        for (unsigned i = 0; i < 9; ++i) group.run([&sums, i, first, step, this] { sums[i] = skynet(first + i * step, step); });
        sums[9] = skynet(first + 9 * step, step);
        group.wait();
        std::uint64_t total = 0;
        for (auto s : sums) total += s;
        return total;
    }

    // One fork per placed queen; the last placement runs inline.
    std::uint64_t queens(const Board& b, int n) {
        if (b.row == n) return 1;
        std::uint64_t counts[32] = {};
        unsigned k = 0;
        auto group = c_.group();
        std::uint32_t bits = b.free(n);
        for (; bits != 0 && (bits & (bits - 1)) != 0; bits &= bits - 1, ++k) {
            group.run([&counts, k, next = b.place(bits & -bits), n, this] { counts[k] = queens(next, n); });
        }
        if (bits != 0) counts[k++] = queens(b.place(bits), n);
        group.wait();
        std::uint64_t total = 0;
        for (unsigned i = 0; i < k; ++i) total += counts[i];
        return total;
    }

    Outcome qsort(std::uint64_t size, Meter* meter) {
        std::vector<std::int32_t> v(size);
        const auto words = random_words(size);
        std::memcpy(v.data(), words.data(), size * sizeof(std::int32_t));
        timed(meter, [&] {
            sort(v.data(), v.size());
            return Outcome{};
        });
        return Outcome{sorted_checksum(v), 0};  // bench/run takes the fork count from the rows that know it
    }

    // `size` empty tasks from the external thread, then one wait.
    Outcome spawn(std::uint64_t size, Meter* meter) {
        auto ran = std::make_unique<std::uint8_t[]>(size);
        timed(meter, [&] {
            auto group = c_.group();
            for (std::uint64_t i = 0; i < size; ++i) group.run([slot = &ran[i]] { *slot = 1; });
            group.wait();
            return Outcome{};
        });
        std::uint64_t runs = 0;
        for (std::uint64_t i = 0; i < size; ++i) runs += ran[i];
        return Outcome{runs, size};
    }

    // yield_chains tasks, each running again (a fresh run() of itself) until its share is done.
    template <class Group>
    struct Chain {
        Group* group;
        std::uint64_t* runs;
        std::uint64_t budget;
        void operator()() const {
            if (++*runs < budget) group->run(*this);
        }
    };

    Outcome yield(std::uint64_t size, Meter* meter) {
        std::uint64_t runs[yield_chains] = {};
        timed(meter, [&] {
            auto group = c_.group();
            using Group = decltype(group);
            for (unsigned i = 0; i < yield_chains; ++i)
                group.run(Chain<Group>{&group, &runs[i], size * (i + 1) / yield_chains - size * i / yield_chains});
            group.wait();
            return Outcome{};
        });
        std::uint64_t total = 0;
        for (auto r : runs) total += r;
        return Outcome{total, size};
    }

    Context& c_;
};

}  // namespace bench
