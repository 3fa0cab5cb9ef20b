// SPDX-License-Identifier: MIT
// Mailbox: FIFO per sender, many senders and receivers, close() wakes every
// receiver and returns what was never received, a refused send leaves the
// value with the caller, receive_for times out. A receiver that is never
// woken fails its test (hang_watchdog.hpp).
#include "hang_watchdog.hpp"
#include "test_platforms.hpp"

#include <zap/lock.hpp>
#include <zap/zap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

TEST(Mailbox, ValuesComeOutInSendOrder) {
    zap::Mailbox<int> box;
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(box.send(i));
    for (int i = 0; i < 5; ++i) EXPECT_EQ(box.receive(), i);
    EXPECT_FALSE(box.closed());
}

TEST(Mailbox, CloseReturnsWhatWasNeverReceivedInOrder) {
    zap::Mailbox<int> box;
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(box.send(i));
    EXPECT_EQ(box.receive(), 0);
    EXPECT_EQ(box.close(), (std::vector<int>{1, 2, 3}));
    EXPECT_TRUE(box.closed());
    EXPECT_EQ(box.receive(), std::nullopt);  // closed and drained
    EXPECT_EQ(box.receive_for(1s), std::nullopt);
    EXPECT_TRUE(box.close().empty());  // idempotent
}

TEST(Mailbox, SendAfterCloseLeavesTheValueWithTheCaller) {
    zap::Mailbox<std::unique_ptr<int>> box;
    EXPECT_TRUE(box.close().empty());
    auto value = std::make_unique<int>(7);
    EXPECT_FALSE(box.send(std::move(value)));
    ASSERT_NE(value, nullptr);  // not moved from
    EXPECT_EQ(*value, 7);

    zap::Mailbox<std::string> strings;
    EXPECT_TRUE(strings.close().empty());
    std::string text = "kept";
    EXPECT_FALSE(strings.send(text));
    EXPECT_FALSE(strings.send(std::move(text)));
    EXPECT_EQ(text, "kept");
}

TEST(Mailbox, AcceptedRvalueIsMovedAndLvalueCopied) {
    zap::Mailbox<std::string> box;
    std::string a = "a", b = "b";
    EXPECT_TRUE(box.send(a));
    EXPECT_EQ(a, "a");
    EXPECT_TRUE(box.send(std::move(b)));
    EXPECT_EQ(box.receive(), "a");
    EXPECT_EQ(box.receive(), "b");
}

TEST(Mailbox, ReceiveForTimesOutOnAnEmptyMailbox) {
    zap::Mailbox<int> box;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(box.receive_for(5ms), std::nullopt);
    EXPECT_GE(std::chrono::steady_clock::now() - start, 5ms);
    EXPECT_TRUE(box.send(1));  // the timed-out receiver left no trace: the value stays queued
    EXPECT_EQ(box.close(), std::vector<int>{1});
}

TEST(Mailbox, ReceiveForGetsAValueSentWhileItWaits) {
    zap::Mailbox<int> box;
    std::thread sender([&] {
        std::this_thread::sleep_for(5ms);
        EXPECT_TRUE(box.send(3));
    });
    EXPECT_EQ(box.receive_for(10s), 3);
    sender.join();
}

TEST(Mailbox, BlockedReceiverGetsTheValueHandedToIt) {
    zap::Mailbox<int> box;
    std::optional<int> got;
    std::thread receiver([&] { got = box.receive(); });
    std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(box.send(9));
    receiver.join();
    EXPECT_EQ(got, 9);
    EXPECT_TRUE(box.close().empty());
}

TEST(Mailbox, ACopyThatThrowsLeavesTheBlockedReceiverWaitingForTheNextValue) {
    // send(const T&) copies the value into the blocked receiver's slot under
    // the lock; a copy that throws leaves that receiver queued (handoff_queue.hpp
    // step 3), so the next send still reaches it. A send that unlinked the
    // receiver before the copy left it asleep for good.
    struct Flaky {
        int value;
        bool throws_when_copied;
        Flaky(int v, bool throws) : value(v), throws_when_copied(throws) {}
        Flaky(const Flaky& other) : value(other.value), throws_when_copied(false) {
            if (other.throws_when_copied) throw std::runtime_error("copy");
        }
        Flaky(Flaky&&) noexcept = default;
        Flaky& operator=(Flaky&&) noexcept = default;
    };
    zap::Mailbox<Flaky> box;
    std::optional<Flaky> got;
    std::thread receiver([&] { got = box.receive(); });
    std::this_thread::sleep_for(10ms);  // the receiver is blocked by now (any timing passes)
    const Flaky bad{1, true};
    EXPECT_THROW((void)box.send(bad), std::runtime_error);
    EXPECT_TRUE(box.send(Flaky{2, false}));
    receiver.join();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->value, 2);
    EXPECT_TRUE(box.close().empty());
}

TEST(Mailbox, CloseWakesEveryBlockedReceiver) {
    zap::Mailbox<int> box;
    constexpr int receivers = 4;
    std::atomic<int> woke_empty{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < receivers; ++i) threads.emplace_back([&] {
        if (!box.receive()) woke_empty++;
    });
    std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(box.close().empty());
    for (auto& t : threads) t.join();
    EXPECT_EQ(woke_empty.load(), receivers);
}

// Several senders, several receivers: every value arrives exactly once, and
// each receiver sees each sender's values in increasing order.
TEST(Mailbox, ManySendersManyReceiversFifoPerSender) {
    constexpr int senders = 3, receivers = 3, per_sender = 5000;
    struct Message {
        int sender;
        int seq;
    };
    zap::Mailbox<Message> box;
    std::vector<std::vector<int>> seen(senders, std::vector<int>(per_sender, 0));
    std::vector<std::thread> threads;
    std::atomic<bool> out_of_order{false};
    std::vector<std::vector<Message>> got(receivers);
    for (int r = 0; r < receivers; ++r) threads.emplace_back([&, r] {
        std::vector<int> last(senders, -1);
        while (auto m = box.receive()) {
            if (m->seq <= last[m->sender]) out_of_order = true;
            last[m->sender] = m->seq;
            got[r].push_back(*m);
        }
    });
    std::vector<std::thread> sending;
    for (int s = 0; s < senders; ++s) sending.emplace_back([&, s] {
        for (int i = 0; i < per_sender; ++i) EXPECT_TRUE(box.send(Message{s, i}));
    });
    for (auto& t : sending) t.join();
    const std::vector<Message> left = box.close();
    for (auto& t : threads) t.join();
    for (const auto& m : left) seen[m.sender][m.seq]++;
    for (const auto& list : got)
        for (const auto& m : list) seen[m.sender][m.seq]++;
    for (int s = 0; s < senders; ++s)
        for (int i = 0; i < per_sender; ++i) ASSERT_EQ(seen[s][i], 1) << "sender " << s << " value " << i;
    EXPECT_FALSE(out_of_order.load());
}

// close() racing senders and receivers (some with timeouts): each value is
// received exactly once, or returned by close(), or refused to its sender.
TEST(Mailbox, CloseRacingSendersAndReceiversLosesNothing) {
    for (int round = 0; round < 50; ++round) {
        constexpr int senders = 2, receivers = 3, per_sender = 300;
        zap::Mailbox<int> box;
        std::vector<std::atomic<int>> count(senders * per_sender);
        std::vector<std::thread> threads;
        for (int r = 0; r < receivers; ++r) threads.emplace_back([&, r] {
            for (;;) {
                auto v = r == 0 ? box.receive_for(100us) : box.receive();
                if (v) {
                    count[*v]++;
                } else if (box.closed()) {
                    return;
                }
            }
        });
        for (int s = 0; s < senders; ++s) threads.emplace_back([&, s] {
            for (int i = 0; i < per_sender; ++i) {
                const int v = s * per_sender + i;
                if (!box.send(v)) count[v]++;  // refused: still ours
            }
        });
        std::this_thread::sleep_for(std::chrono::microseconds(round * 20));
        for (int v : box.close()) count[v]++;
        for (auto& t : threads) t.join();
        for (int v = 0; v < senders * per_sender; ++v) ASSERT_EQ(count[v].load(), 1) << "round " << round << " value " << v;
    }
}

// The same under a futex that returns at once: every Lock and Parker wait
// is a spin through spurious returns.
TEST(Mailbox, SpuriousFutexReturnsLoseNothing) {
    zap::BasicMailbox<zap_test::SpuriousPlatform, int> box;
    constexpr int values = 2000;
    std::atomic<long> sum{0};
    std::vector<std::thread> receivers;
    for (int r = 0; r < 2; ++r) receivers.emplace_back([&] {
        while (auto v = box.receive()) sum += *v;
    });
    for (int i = 1; i <= values; ++i) EXPECT_TRUE(box.send(i));
    for (int v : box.close()) sum += v;
    for (auto& t : receivers) t.join();
    EXPECT_EQ(sum.load(), static_cast<long>(values) * (values + 1) / 2);
}

// ---- seal(): Go's close(ch), the receivers drain what is queued ----

TEST(MailboxSeal, ReceiversDrainWhatWasQueuedThenGetNothing) {
    zap::Mailbox<int> box;
    for (int i = 1; i <= 4; ++i) EXPECT_TRUE(box.send(i));
    box.seal();
    EXPECT_TRUE(box.closed());
    int late = 5;
    EXPECT_FALSE(box.send(late));  // refused, and left with the caller
    EXPECT_EQ(late, 5);
    for (int i = 1; i <= 4; ++i) EXPECT_EQ(box.receive(), i);  // in order
    EXPECT_EQ(box.receive(), std::nullopt);
    EXPECT_EQ(box.receive_for(1s), std::nullopt);  // at once: sealed and drained
    box.seal();  // idempotent
    EXPECT_TRUE(box.close().empty());
}

TEST(MailboxSeal, CloseAfterSealTakesBackWhatIsLeft) {
    zap::Mailbox<int> box;
    for (int i = 1; i <= 4; ++i) EXPECT_TRUE(box.send(i));
    box.seal();
    EXPECT_EQ(box.receive(), 1);
    EXPECT_EQ(box.close(), (std::vector<int>{2, 3, 4}));
    EXPECT_EQ(box.receive(), std::nullopt);
}

TEST(MailboxSeal, WakesEveryBlockedReceiverWithNothing) {
    zap::Mailbox<int> box;
    std::atomic<int> woken{0};
    std::vector<std::thread> receivers;
    for (int i = 0; i < 4; ++i) receivers.emplace_back([&] {
        EXPECT_EQ(box.receive(), std::nullopt);
        woken++;
    });
    std::this_thread::sleep_for(20ms);  // most of them asleep by now; the rest find it sealed
    box.seal();
    for (auto& t : receivers) t.join();
    EXPECT_EQ(woken.load(), 4);
}

TEST(MailboxSeal, APipelineWhoseLastProducerSealsLosesNothing) {
    // The shape that lost 4-6 results per run with close(): producers on a
    // pool send, the last one to finish seals the output, consumers receive
    // until nothing is left.
    constexpr int producers = 8, per_producer = 2000;
    for (int round = 0; round < 20; ++round) {
        zap::Mailbox<int> output;
        std::atomic<int> producing{producers};
        std::atomic<long> received_sum{0};
        std::atomic<int> received{0};
        std::vector<std::thread> consumers;
        for (int c = 0; c < 3; ++c) consumers.emplace_back([&] {
            while (std::optional<int> v = output.receive()) {
                received_sum += *v;
                received++;
            }
        });
        {
            zap::ThreadPool pool(3);
            for (int p = 0; p < producers; ++p) pool.spawn([&, p] {
                for (int i = 0; i < per_producer; ++i) EXPECT_TRUE(output.send(p * per_producer + i));
                if (--producing == 0) output.seal();  // the last producer
            });
        }
        for (auto& t : consumers) t.join();
        constexpr int total = producers * per_producer;
        ASSERT_EQ(received.load(), total) << "round " << round;
        EXPECT_EQ(received_sum.load(), static_cast<long>(total) * (total - 1) / 2);
    }
}

// ---- the lock under the mailbox's and the object pool's queue (lock.hpp) ----

// Step 1: the uncontended lock() takes the word with one CAS and leaves it
// LOCKED, so its unlock() has nobody to wake: no futex call on either side.
TEST(Lock, AnUncontendedLockMakesNoFutexCall) {
    using Platform = zap_test::CountingPlatform;
    zap::detail::Lock<Platform> lock;
    Platform::waits = 0;
    Platform::wakes = 0;
    for (int i = 0; i < 3; ++i) {
        lock.lock();
        lock.unlock();
    }
    EXPECT_EQ(Platform::wakes.load(), 0) << "an unlock() after an uncontended lock() woke the futex (lock.hpp step 1)";
    EXPECT_EQ(Platform::waits.load(), 0);
}

// Step 2: a lock() that finds the lock held sleeps on the futex until the
// holder's unlock() wakes it; it does not spin for as long as the lock is
// held (a holder preempted for a time slice would cost the spinner as much,
// and a spinner of higher priority would keep the holder from running).
TEST(Lock, AContendedLockSleepsOnTheFutex) {
    using Platform = zap_test::CountingPlatform;
    zap::detail::Lock<Platform> lock;
    Platform::waits = 0;
    lock.lock();
    std::atomic<bool> took{false};
    std::thread other([&] {
        lock.lock();
        took = true;
        lock.unlock();
    });
    // Within microseconds; the 10 s only end the test if it never sleeps.
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (Platform::waits.load() == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    const int slept = Platform::waits.load();
    EXPECT_FALSE(took.load()) << "lock() returned while the lock was held (L1)";
    lock.unlock();
    other.join();
    EXPECT_TRUE(took.load());
    EXPECT_GT(slept, 0) << "a lock() that found the lock held never slept on the futex (lock.hpp step 2)";
}
