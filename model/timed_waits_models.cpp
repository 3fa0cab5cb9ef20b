// SPDX-License-Identifier: MIT
// model/timed_waits_models.cpp - Relacy models of Protocol T, the portable
// platform's futex wait out of a mutex and a condition variable
// (portable_platform.hpp PF1-PF2), on the same template production uses:
// TimedWaits<Sync> with Relacy's mutex, condition variable, atomics and
// fences in place of the standard library's.
//
// PF1 (count in, fence, compare the word) against PF2 (change the word,
// fence, read the count) is store buffering: with either fence gone, C++
// lets the waiter read the old word while the waker reads a count of zero,
// and the waiter sleeps through the change. x86-64 cannot show it (the
// waiter's count-in and every caller's change of the word are locked
// instructions), so only a model on the C++ memory model can; here the lost
// wake-up is a thread asleep for good: a Relacy DEADLOCK.
#include "model_registry.hpp"

#include <zap/portable_platform.hpp>

#include <condition_variable>

namespace {

using namespace zap_model;

// Relacy's primitives under TimedWaits' names. The fence is the Relacy
// platform's, which takes the call site's line: ZAP_MUTATE's
// portable_platform.hpp:LINE=ORDER weakens PF1's or PF2's fence here.
struct RelacyTimedSync : P {
    using Word = P::Atomic<std::uint32_t>;
    using Counter = P::Atomic<std::uint32_t>;
    using Mutex = rl::mutex;

    class Lock {
    public:
        explicit Lock(Mutex& mutex) : mutex_(mutex) { mutex_.lock($); }
        ~Lock() { mutex_.unlock($); }
        Lock(const Lock&) = delete;
        Lock& operator=(const Lock&) = delete;
        Mutex& mutex() noexcept { return mutex_; }

    private:
        Mutex& mutex_;
    };

    class CondVar {
    public:
        void wait(Lock& lock) { changed_.wait(lock.mutex(), $); }
        template <class TimePoint>
        std::cv_status wait_until(Lock& lock, const TimePoint& deadline) {
            return changed_.wait_until(lock.mutex(), deadline, $) ? std::cv_status::no_timeout : std::cv_status::timeout;
        }
        void notify_all() { changed_.notify_all($); }

    private:
        rl::condition_variable changed_;
    };
};

using TimedWaits = zap::detail::TimedWaits<RelacyTimedSync>;

// ---- timed_waits_wake: one waiter, one change of the word, one wake ----------
// The waiter sleeps (untimed) while the word is 0; the waker changes it
// with a relaxed read-modify-write, as Event::notify's fetch_add does, and
// calls wake(). The waiter must return: PF1's fence and PF2's fence are
// ordered one way or the other in S, so either the waker sees the waiter
// counted in (and takes the bucket's mutex, which the waiter holds until it
// sleeps, then notifies it) or the waiter's compare sees the new word.
struct TimedWaitsWake : Model<TimedWaitsWake, 2> {
    TimedWaits waits;
    RelacyTimedSync::Word word{0};

    void thread(unsigned index) {
        if (index == 0) {
            while (word.load(std::memory_order_relaxed) == 0) waits.wait(word, 0, nullptr);
        } else {
            word.fetch_add(1, std::memory_order_relaxed);
            waits.wake(&word);
        }
    }
};
ZAP_MODEL_TEST(timed_waits_wake, TimedWaitsWake, false, P::SpawnFailure::never,
               "Protocol T: a waiter asleep on the word is woken by the waker's change and wake (PF1 against PF2)");

}  // namespace
