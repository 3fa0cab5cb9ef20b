// SPDX-License-Identifier: MIT
// Per-worker scratch with worker_index(): each worker keeps its own partial
// histogram and adds to it without atomics or locks; the calling thread,
// which runs a piece of the loop too, has its own. And
// Config::on_unhandled_exception: an exception escaping a spawn() task is
// handed to the handler (on the worker, after the task is gone) instead of
// ending the process.
#include <zap/zap.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

int main() {
    std::atomic<int> handled{0};
    zap::Config config;
    config.on_unhandled_exception = [&](std::exception_ptr error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            if (handled++ == 0) std::printf("handled on a worker: %s\n", e.what());
        }
    };
    zap::ThreadPool pool(config);

    using Histogram = std::array<std::uint64_t, 16>;
    struct alignas(64) Slot {
        Histogram counts{};
    };
    std::vector<Slot> per_worker(pool.max_threads());
    Histogram caller{};  // the calling thread is not a worker: it has its own
    constexpr int n = 1'000'000;
    pool.parallel_for(0, n, [&](int i) {
        const auto bucket = static_cast<std::size_t>((static_cast<std::uint32_t>(i) * 2654435761u) >> 28);
        const auto index = pool.worker_index();
        (index ? per_worker[*index].counts : caller)[bucket]++;
    });
    Histogram total = caller;
    for (const Slot& s : per_worker)
        for (std::size_t b = 0; b < total.size(); ++b) total[b] += s.counts[b];
    std::uint64_t sum = 0;
    for (auto c : total) sum += c;
    std::printf("%llu values in 16 buckets, counted in %u per-worker histograms and the caller's\n",
                static_cast<unsigned long long>(sum), pool.max_threads());

    for (int i = 0; i < 5; ++i) pool.spawn([i] {
        if (i % 2 == 0) throw std::runtime_error("task " + std::to_string(i) + " failed");
    });
    pool.shutdown();
    pool.join();  // every spawned task has run
    std::printf("%d exceptions reached the handler; the pool carried on\n", handled.load());
    return sum == n && handled.load() == 3 ? 0 : 1;
}
