// SPDX-License-Identifier: MIT
// stress/cancel_scenarios.hpp - TaskGroup::cancel() under load (Protocol C of
// src/zap/cancellation.hpp): groups of children, some running more children,
// canceled at a random moment by a child, by the owner or by an outside
// thread, while other children ask for stop tokens; then the same group runs
// a second round uncanceled.
//
// Checks: every child is accounted for exactly once - it ran, or its callable
// was destroyed uncalled (skipped) - and wait() returns (a hang is the
// watchdog's); every token handed out in a canceled round is stopped; after
// wait() the group is not canceled and its next round runs every child.
#pragma once

#include "scenarios.hpp"

#include <stop_token>
#include <thread>
#include <vector>

namespace stress {

template <class P>
struct CancelKit {
    using Pool = zap::BasicThreadPool<P>;
    using TaskGroup = zap::BasicTaskGroup<P>;

    struct Tally {
        std::atomic<std::uint64_t> ran{0}, skipped{0};
    };

    // A child's callable: counts itself ran when called, skipped when
    // destroyed uncalled. Moved-from copies count nothing.
    struct Probe {
        Tally* tally;
        bool armed = true;
        explicit Probe(Tally& t) : tally(&t) {}
        Probe(Probe&& other) noexcept : tally(other.tally), armed(std::exchange(other.armed, false)) {}
        Probe(const Probe&) = delete;
        ~Probe() {
            if (armed) {
                executed();
                tally->skipped.fetch_add(1, std::memory_order_relaxed);
            }
        }
        void operator()() {
            armed = false;
            executed();
            tally->ran.fetch_add(1, std::memory_order_relaxed);
        }
    };

    enum class Canceler { child, owner, outside };

    static void cancel_round(Run& run, TaskGroup& group) {
        const std::size_t children = run.between(1, run.size(300));
        const std::size_t grandchildren = run.below(4);  // run by each child, also after a cancel
        const std::size_t cancel_at = run.below(children);
        const auto who = static_cast<Canceler>(run.below(3));
        Tally tally;
        std::vector<std::stop_token> tokens(children);
        std::atomic<std::uint64_t> added{children};  // children, and grandchildren actually run()
        scheduled(children);
        std::thread outside;
        for (std::size_t c = 0; c < children; ++c) {
            if (c == cancel_at && who == Canceler::owner) group.cancel();
            if (c == cancel_at && who == Canceler::outside) outside = std::thread([&] {
                set_role("canceler");
                group.cancel();  // returns before the owner's wait() (joined first)
            });
            group.run([&, c, probe = Probe(tally)]() mutable {
                probe();
                if (c % 3 == 0) tokens[c] = group.stop_token();
                if (c == cancel_at && who == Canceler::child) group.cancel();
                for (std::size_t g = 0; g < grandchildren; ++g) {
                    added.fetch_add(1, std::memory_order_relaxed);
                    scheduled(1);
                    group.run(Probe(tally));
                }
            });
        }
        if (outside.joinable()) outside.join();
        const bool canceled = group.is_canceled();
        STRESS_CHECK(canceled || who == Canceler::child);  // a child's cancel may come after this look
        group.wait();
        STRESS_CHECK(tally.ran.load() + tally.skipped.load() == added.load());
        STRESS_CHECK(!group.is_canceled());
        for (const auto& token : tokens)
            if (token.stop_possible()) STRESS_CHECK(token.stop_requested());
    }

    static void cancel(Run& run) {
        for (std::uint32_t threads : {1u, 2u, 4u}) {
            stage("cancel: pool");
            Pool pool(pool_config(threads));
            for (int r = 0; r < 6; ++r) {
                stage("cancel: round");
                TaskGroup group(pool);
                const bool inside = run.below(2) == 0;
                if (inside) {
                    scheduled(1);
                    pool.submit([&] {
                            executed();
                            cancel_round(run, group);
                        }).get();
                } else {
                    cancel_round(run, group);
                }
                // The next round is not canceled: every child runs.
                stage("cancel: next round");
                Tally tally;
                const std::size_t children = run.between(1, 50);
                scheduled(children);
                for (std::size_t c = 0; c < children; ++c) group.run(Probe(tally));
                group.wait();
                STRESS_CHECK(tally.ran.load() == children && tally.skipped.load() == 0);
            }
        }
    }
};

}  // namespace stress
