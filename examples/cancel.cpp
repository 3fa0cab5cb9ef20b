// SPDX-License-Identifier: MIT
// Cancelling a TaskGroup: a search over many chunks stops scheduling work once
// one child has found what it looks for. Children that have not started when
// cancel() is called never run; running ones see the request through
// is_canceled() or the group's stop_token() and may stop early. wait() then
// returns, and the group is ready (and uncanceled) for the next round.
#include <zap/zap.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <stop_token>
#include <vector>

int main() {
    std::vector<std::uint32_t> haystack(4'000'000);
    std::uint32_t state = 7;
    for (auto& x : haystack) x = (state = state * 1103515245u + 12345u) % 1'000'000'000u;
    const std::size_t needle_at = 2'500'000;
    haystack[needle_at] = 1'000'000'007u;  // the one value the generator cannot make

    zap::ThreadPool pool;
    zap::TaskGroup group(pool);
    const std::stop_token stop = group.stop_token();
    constexpr std::size_t chunk = 10'000;
    std::atomic<std::size_t> found{haystack.size()};
    std::atomic<int> chunks_run{0};
    for (std::size_t begin = 0; begin < haystack.size(); begin += chunk) {
        group.run([&, begin] {
            chunks_run++;
            for (std::size_t i = begin; i < begin + chunk; ++i) {
                if (stop.stop_requested()) return;  // another chunk found it: give up early
                if (haystack[i] == 1'000'000'007u) {
                    found = i;
                    group.cancel();  // chunks not started yet never run
                    return;
                }
            }
        });
    }
    group.wait();
    const int chunks = static_cast<int>(haystack.size() / chunk);
    std::printf("found at %zu; %d of %d chunks ran, the rest were skipped\n", found.load(), chunks_run.load(), chunks);
    std::printf("canceled after wait(): %s\n", group.is_canceled() ? "yes" : "no");

    // The next round runs every child again.
    std::atomic<int> second{0};
    for (int i = 0; i < 10; ++i) group.run([&] { second++; });
    group.wait();
    std::printf("second round: %d of 10 children ran\n", second.load());
    return found.load() == needle_at && !group.is_canceled() && second.load() == 10 ? 0 : 1;
}
