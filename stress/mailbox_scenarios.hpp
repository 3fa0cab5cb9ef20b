// SPDX-License-Identifier: MIT
// stress/mailbox_scenarios.hpp - Mailbox and ObjectPool under real threads,
// on the production and the chaos platform (spurious futex returns, wake-alls,
// preemption at every atomic operation).
//
// Each checks its counts itself: every value sent is received exactly once,
// handed back by close(), or refused to its sender; every object put in a
// pool is held by one user at a time and comes back from close(). No pool
// task runs here (the "tasks" of the progress line stay 0); each round is a
// stage, which is the watchdog's sign of progress.
#pragma once

#include "scenarios.hpp"

#include <zap/mailbox.hpp>
#include <zap/object_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

namespace stress {

template <class P>
struct MailboxKit {
    // Senders, receivers (blocking and timed) and close() racing them: each
    // value in exactly one place; each receiver sees each sender's values
    // in increasing order (FIFO per sender).
    static void mailbox(Run& run) {
        const int rounds = static_cast<int>(run.size(40));
        std::atomic<std::uint64_t> received{0};
        std::uint64_t handed_back = 0, values = 0;
        for (int round = 0; round < rounds; ++round) {
            stage("mailbox round");
            const int senders = static_cast<int>(run.between(1, 3));
            const int receivers = static_cast<int>(run.between(1, 3));
            const int per_sender = static_cast<int>(run.between(1, 2000));
            const std::uint64_t close_after = run.below(senders * per_sender + 1);  // values sent before close()
            const int total = senders * per_sender;
            zap::BasicMailbox<P, int> box;
            std::vector<std::atomic<int>> places(total);
            std::atomic<std::uint64_t> sent{0};
            std::vector<std::thread> threads;
            for (int r = 0; r < receivers; ++r) {
                const bool timed = run.below(2) == 0;
                const auto timeout = std::chrono::microseconds(run.between(1, 300));
                threads.emplace_back([&, timed, timeout] {
                    set_role("receiver");
                    std::vector<int> last(senders, -1);
                    for (;;) {
                        const std::optional<int> v = timed ? box.receive_for(timeout) : box.receive();
                        if (!v) {
                            if (box.closed()) return;
                            continue;  // timed out
                        }
                        const int sender = *v / per_sender, seq = *v % per_sender;
                        STRESS_CHECK(seq > last[sender]);  // FIFO per sender
                        last[sender] = seq;
                        places[*v].fetch_add(1, std::memory_order_relaxed);
                        received.fetch_add(1, std::memory_order_relaxed);
                    }
                });
            }
            for (int s = 0; s < senders; ++s) {
                threads.emplace_back([&, s] {
                    set_role("sender");
                    for (int i = 0; i < per_sender; ++i) {
                        const int v = s * per_sender + i;
                        if (!box.send(v)) places[v].fetch_add(1, std::memory_order_relaxed);  // refused: ours
                        sent.fetch_add(1, std::memory_order_relaxed);
                    }
                });
            }
            while (sent.load(std::memory_order_relaxed) < close_after) std::this_thread::yield();
            const std::vector<int> left = box.close();
            for (int v : left) places[v].fetch_add(1, std::memory_order_relaxed);
            handed_back += left.size();
            STRESS_CHECK(box.closed());
            for (auto& t : threads) t.join();
            for (int v = 0; v < total; ++v) STRESS_CHECK(places[v].load() == 1);
            values += static_cast<std::uint64_t>(total);
        }
        if (run.verbose)
            std::printf("  mailbox: %llu values received, %llu handed back by close(), %llu refused\n",
                        static_cast<unsigned long long>(received.load()), static_cast<unsigned long long>(handed_back),
                        static_cast<unsigned long long>(values - received.load() - handed_back));
    }

    // Users get (blocking, timed or trying) an object, hold it alone, put it
    // back; then getters block on the emptied pool and close() wakes them.
    static void object_pool(Run& run) {
        const int rounds = static_cast<int>(run.size(40));
        for (int round = 0; round < rounds; ++round) {
            stage("object_pool round");
            const int objects = static_cast<int>(run.between(1, 4));
            const int users = static_cast<int>(run.between(1, 5));
            const int uses = static_cast<int>(run.between(1, 1000));
            zap::BasicObjectPool<P, int> pool;
            std::vector<std::atomic<int>> holders(objects);
            for (int i = 0; i < objects; ++i) pool.put(i);
            std::vector<std::thread> threads;
            for (int u = 0; u < users; ++u) {
                const int how = static_cast<int>(run.below(3));
                threads.emplace_back([&, how] {
                    set_role("user");
                    for (int i = 0; i < uses; ++i) {
                        const std::optional<int> got = how == 0   ? pool.get()
                                                       : how == 1 ? pool.get_for(std::chrono::microseconds(50))
                                                                  : pool.try_get();
                        if (!got) continue;  // timed out or found none: try again
                        STRESS_CHECK(holders[*got].fetch_add(1) == 0);  // held by one user at a time
                        holders[*got].fetch_sub(1);
                        pool.put(*got);
                    }
                });
            }
            for (auto& t : threads) t.join();
            std::vector<int> mine;  // empty the pool, so that late getters block
            while (const std::optional<int> got = pool.try_get()) mine.push_back(*got);
            STRESS_CHECK(static_cast<int>(mine.size()) == objects);
            std::atomic<int> woke_empty{0};
            std::vector<std::thread> late;
            const int late_getters = static_cast<int>(run.between(0, 3));
            for (int g = 0; g < late_getters; ++g)
                late.emplace_back([&] {
                    if (!pool.get()) woke_empty.fetch_add(1);
                });
            for (int v : mine) pool.put(v);  // each may go straight to a late getter
            std::vector<int> back = pool.close();
            for (auto& t : late) t.join();
            // A late getter got an object or was woken empty by close(); the rest came back.
            STRESS_CHECK(static_cast<int>(back.size()) + late_getters - woke_empty.load() == objects);
            STRESS_CHECK(static_cast<int>(back.size()) <= objects);
        }
    }
};

}  // namespace stress
