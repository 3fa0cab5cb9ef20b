// SPDX-License-Identifier: MIT
// The production platforms on their own: the futex calls, threads, names,
// stack sizes and the thread-local, for each platform this system can run
// (its native one and the portable one; docs/platforms.md). The rest of the
// suite runs the pool on zap::StdPlatform; this file holds each platform to
// the contract of platform.hpp directly, including the portable platform's
// timed waits (Protocol T of portable_platform.hpp) in every build.
#define ZAP_TEST_COUNT_ALIGNED_NEW  // Platform::deallocate gives its block back (counting_new.hpp)
#include "counting_new.hpp"

#include <zap/portable_platform.hpp>
#if defined(__linux__)
#include <zap/linux_platform.hpp>
#elif defined(_WIN32)
#include <zap/windows_platform.hpp>
#endif

#include <gtest/gtest.h>

#include "hang_watchdog.hpp"
#include "os_probe.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

// The condition variables' broadcasts (std::condition_variable::notify_all
// on Linux), counted by a definition of the executable that forwards to the
// C library's. Not under a sanitizer, whose runtime intercepts the function
// itself, nor in the arm64 build, which links statically (for qemu-user):
// there dlsym(RTLD_NEXT) finds no C library to forward to.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ZAP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ZAP_TEST_SANITIZED 1
#endif
#endif
#if defined(__linux__) && !defined(ZAP_TEST_SANITIZED) && !defined(__aarch64__)
#define ZAP_TEST_COUNTS_BROADCASTS 1
std::atomic<long> broadcasts{0};
extern "C" int pthread_cond_broadcast(pthread_cond_t* cond) noexcept {
    using Broadcast = int (*)(pthread_cond_t*);
    static const auto real = reinterpret_cast<Broadcast>(dlsym(RTLD_NEXT, "pthread_cond_broadcast"));
    broadcasts.fetch_add(1, std::memory_order_relaxed);  // a counter only
    return real(cond);
}
#else
#define ZAP_TEST_COUNTS_BROADCASTS 0
std::atomic<long> broadcasts{0};
#endif

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Named, not through zap::StdPlatform: in the portable build (ZAP_PORTABLE_PLATFORM)
// the native platform is still tested here.
#if defined(__linux__)
using Platforms = ::testing::Types<zap::LinuxPlatform, zap::PortablePlatform>;
#elif defined(_WIN32)
using Platforms = ::testing::Types<zap::WindowsPlatform, zap::PortablePlatform>;
#else
using Platforms = ::testing::Types<zap::PortablePlatform>;
#endif

#if defined(__linux__)
// The state /proc gives a thread of this process ('S': asleep in a system
// call), or 0 when /proc cannot say.
char thread_state(long tid) {
    std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return 0;
    const auto paren = line.rfind(')');  // the name in parentheses may hold spaces
    return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

// Protocol T: a timed portable wait that sleeps is reached by the wake that
// follows a change of its word, in each of the 64 buckets. The waker changes
// the word only once the waiter's thread sleeps (/proc: the condition
// variable's wait, the only place it can sleep here), so the waiter has
// compared the word before and relies on the wake alone (PF1/PF2: its count
// tells the waker to notify). With a timeout of 10 s, a wake that did not
// reach it shows as `false`. First in the file: a lost wake fails here in
// 10 s, where the tests below would wait for their minute.
TEST(PortableTimedWaits, AWakeReachesATimedWaiterAsleepInEveryBucket) {
    using Platform = zap::PortablePlatform;
    if (thread_state(static_cast<long>(syscall(SYS_gettid))) == 0)
        GTEST_SKIP() << "/proc does not report thread states";
    static Platform::Atomic<std::uint32_t> words[64];  // adjacent: one in each bucket
    for (auto& word : words) {
        std::atomic<long> tid{0};
        std::atomic<bool> returned{false};
        bool woke = false;
        std::thread sleeper([&] {
            const std::chrono::nanoseconds ten_seconds = 10s;
            tid = static_cast<long>(syscall(SYS_gettid));
            woke = Platform::futex_wait(word, 0, &ten_seconds);
            returned = true;
        });
        while (tid.load() == 0) std::this_thread::yield();
        // Asleep within microseconds; the 10 s only end the wait on a system
        // whose /proc never says so.
        const auto until = Clock::now() + 10s;
        bool asleep = false;
        while (!returned.load() && !(asleep = thread_state(tid.load()) == 'S') && Clock::now() < until)
            std::this_thread::yield();
        const bool unseen = !asleep && !returned.load();
        word.store(1, std::memory_order_release);
        Platform::futex_wake(word, 1);
        sleeper.join();
        ASSERT_TRUE(woke) << "bucket " << &word - words << ": a timed waiter asleep missed the wake of its word";
        if (unseen) GTEST_SKIP() << "the waiter's thread was never seen asleep";
    }
}

// An untimed portable wait sleeps (std::atomic::wait) until the wake: seen
// asleep in /proc, not returning over and over as a spurious wake-up may.
TEST(PortableTimedWaits, AnUntimedWaitSleeps) {
    using Platform = zap::PortablePlatform;
    if (thread_state(static_cast<long>(syscall(SYS_gettid))) == 0)
        GTEST_SKIP() << "/proc does not report thread states";
    Platform::Atomic<std::uint32_t> word{0};
    std::atomic<long> tid{0};
    std::thread sleeper([&] {
        tid = static_cast<long>(syscall(SYS_gettid));
        while (word.load(std::memory_order_acquire) == 0) Platform::futex_wait(word, 0, nullptr);
    });
    while (tid.load() == 0) std::this_thread::yield();
    // Within microseconds; the 10 s only end the test if it never sleeps.
    const auto until = Clock::now() + 10s;
    bool asleep = false;
    while (!(asleep = thread_state(tid.load()) == 'S') && Clock::now() < until) std::this_thread::sleep_for(1ms);
    word.store(1, std::memory_order_release);
    Platform::futex_wake(word, 1);
    sleeper.join();
    EXPECT_TRUE(asleep) << "an untimed futex_wait never slept: it returned at once, again and again";
}

#endif

// PF2 notifies only when PF1 has counted a timed waiter in: a wake of a word
// that no timed wait is inside takes no lock and broadcasts nothing, also
// after a timed wait of that word has come and gone (it counted itself out).
TEST(PortableTimedWaits, AWakeWithNoTimedWaiterInsideNotifiesNobody) {
    if (!ZAP_TEST_COUNTS_BROADCASTS) GTEST_SKIP() << "the broadcasts are not counted in this build";
    using Platform = zap::PortablePlatform;
    static Platform::Atomic<std::uint32_t> word{1};
    const std::chrono::nanoseconds ten_seconds = 10s;
    EXPECT_TRUE(Platform::futex_wait(word, 0, &ten_seconds));  // the word differs: in, out at once
    const long before = broadcasts.load();
    Platform::futex_wake(word, 1);
    EXPECT_EQ(broadcasts.load() - before, 0) << "a wake notified the timed waiters of a bucket that none is inside";
}

template <class Platform>
class StdPlatform : public ::testing::Test {
protected:
    using Word = typename Platform::template Atomic<std::uint32_t>;
    static constexpr bool names_and_stacks = !std::is_same_v<Platform, zap::PortablePlatform>;

    // Runs f on a thread started by Platform::spawn; returns its handle (from
    // the thread's own this_thread()) once the thread has run f.
    template <class F>
    static typename Platform::Thread run_on_platform_thread(F& f, std::size_t stack = 1u << 20) {
        struct Start {
            F* f;
            std::atomic<typename Platform::Thread> self{};
            std::atomic<bool> ran{false};
        } start{&f};
        auto entry = +[](void* arg) -> void* {
            auto* s = static_cast<Start*>(arg);
            (*s->f)();
            s->self.store(Platform::this_thread());
            s->ran.store(true);
            return nullptr;
        };
        EXPECT_TRUE(Platform::spawn(zap::ThreadOptions{stack}, entry, &start));
        while (!start.ran.load()) std::this_thread::yield();
        return start.self.load();
    }
};
TYPED_TEST_SUITE(StdPlatform, Platforms);

TYPED_TEST(StdPlatform, WaitReturnsAtOnceWhenTheWordDiffers) {
    typename TestFixture::Word word{1};
    const std::chrono::nanoseconds long_timeout = 10s;
    EXPECT_TRUE(TypeParam::futex_wait(word, 0, &long_timeout));  // a timeout would take 10 s (and return false)
    TypeParam::futex_wait(word, 0, nullptr);                     // would never return if it slept
}

// (The last timeout is longer than a second: a timespec's seconds and
// nanoseconds both count.)
TYPED_TEST(StdPlatform, TimedWaitReturnsFalseOnlyAfterItsTimeout) {
    typename TestFixture::Word word{0};
    for (const std::chrono::nanoseconds timeout :
         {std::chrono::nanoseconds{1us}, std::chrono::nanoseconds{30ms}, std::chrono::nanoseconds{1s + 30ms}}) {
        const auto start = Clock::now();
        bool woke = true;
        while (woke) woke = TypeParam::futex_wait(word, 0, &timeout);  // true: a spurious return, allowed
        EXPECT_GE(Clock::now() - start, timeout);
    }
    const std::chrono::nanoseconds none{0};
    bool woke = true;
    while (woke) woke = TypeParam::futex_wait(word, 0, &none);  // a zero timeout expires too
}

// An untimed wait sleeps: with the word unchanged and no wake for 200 ms it
// returns a few times at most (a spurious return is allowed), where a wait
// that did not sleep returns over and over. Counted, not timed: a sleeper
// that the machine never ran in that time returns no times, and passes.
TYPED_TEST(StdPlatform, AnUntimedWaitWithNoWakeReturnsRarely) {
    typename TestFixture::Word word{0};
    std::atomic<long> returns{0};
    std::thread sleeper([&] {
        while (word.load(std::memory_order_acquire) == 0) {
            TypeParam::futex_wait(word, 0, nullptr);
            returns.fetch_add(1, std::memory_order_relaxed);  // a counter only
        }
    });
    std::this_thread::sleep_for(200ms);
    const long seen = returns.load();
    word.store(1, std::memory_order_release);
    TypeParam::futex_wake(word, 1);
    sleeper.join();
    EXPECT_LT(seen, 100) << "an untimed futex_wait returned " << seen << " times with no wake: it does not sleep";
}

// A sleeper woken by futex_wake: with a timeout of a minute, a wake that did
// not reach it would show as `false` a minute later (or as ctest's timeout).
TYPED_TEST(StdPlatform, WakeReachesUntimedAndTimedSleepers) {
    for (const bool timed : {false, true}) {
        typename TestFixture::Word word{0};
        std::atomic<bool> returned_woken{false}, waiting{false};
        std::thread sleeper([&] {
            const std::chrono::nanoseconds minute = 60s;
            waiting = true;
            bool woke = true;
            while (word.load(std::memory_order_acquire) == 0) {
                woke = TypeParam::futex_wait(word, 0, timed ? &minute : nullptr);
            }
            returned_woken = woke;
        });
        while (!waiting) std::this_thread::yield();
        std::this_thread::sleep_for(20ms);  // most likely asleep by now; if not, its wait returns at once
        word.store(1, std::memory_order_release);
        TypeParam::futex_wake(word, 1);
        sleeper.join();
        EXPECT_TRUE(returned_woken) << (timed ? "timed" : "untimed");
    }
}

// Two threads hand a turn back and forth through one word, each sleeping
// untimed until the turn is its own: one lost wake-up and both sleep for
// good (the hang watchdog reports it). A library whose atomic wait checks
// the word and then sleeps without a lock the notifier also takes (the
// libstdc++ 12 fallback where the system has no futex: MinGW) loses one
// within a few thousand turns under Wine.
TYPED_TEST(StdPlatform, NoWakeIsLostInAnUntimedPingPong) {
    typename TestFixture::Word turn{0};
    constexpr std::uint32_t turns = 5000;
    auto play = [&](std::uint32_t me) {
        for (std::uint32_t t = me; t < turns; t += 2) {
            for (std::uint32_t seen = turn.load(std::memory_order_acquire); seen != t;
                 seen = turn.load(std::memory_order_acquire)) {
                TypeParam::futex_wait(turn, seen, nullptr);
            }
            // Hand over after a varying pause: long enough, now and then,
            // for the other thread to be past any spin and going to sleep.
            // A busy pause, not yields: on a loaded machine each yield can
            // cost a whole time slice.
            for (std::uint32_t pause = (t * 2654435761u) >> 16; pause != 0; --pause) {
                std::atomic_signal_fence(std::memory_order_seq_cst);  // keeps the loop: no thread reads this
            }
            turn.store(t + 1, std::memory_order_release);
            TypeParam::futex_wake(turn, 1);
        }
    };
    std::thread other(play, 1u);
    play(0);
    other.join();
    EXPECT_EQ(turn.load(std::memory_order_relaxed), turns);
}

TYPED_TEST(StdPlatform, WakeAllReachesEverySleeper) {
    typename TestFixture::Word word{0};
    std::atomic<int> waiting{0}, woken{0};
    std::vector<std::thread> sleepers;
    for (int i = 0; i < 6; ++i) {
        sleepers.emplace_back([&, i] {
            const std::chrono::nanoseconds minute = 60s;
            waiting++;
            bool woke = true;
            while (word.load(std::memory_order_acquire) == 0) {
                woke = TypeParam::futex_wait(word, 0, i % 2 == 0 ? &minute : nullptr);
            }
            if (woke) woken++;  // not after a minute's timeout
        });
    }
    while (waiting < 6) std::this_thread::yield();
    std::this_thread::sleep_for(20ms);
    word.store(1, std::memory_order_release);
    TypeParam::futex_wake(word, std::numeric_limits<std::uint32_t>::max());
    for (std::thread& t : sleepers) t.join();
    EXPECT_EQ(woken.load(), 6);
}

TYPED_TEST(StdPlatform, SpawnedThreadIsJoinedThroughItsOwnHandle) {
    int written = 0;  // plain: join() must order the thread's write before our read (TSan checks it)
    auto body = [&] { written = 42; };
    const auto handle = TestFixture::run_on_platform_thread(body);
    TypeParam::join(handle);
    EXPECT_EQ(written, 42);
}

// join() returns only once the thread has run to its end: the thread still
// has work to do (a sleep, then a write) when join() is called.
TYPED_TEST(StdPlatform, JoinWaitsForTheThreadToEnd) {
    struct Start {
        std::atomic<typename TypeParam::Thread> self{};
        std::atomic<bool> known{false};
        std::atomic<bool> finished{false};
    } start;
    auto entry = +[](void* arg) -> void* {
        auto* s = static_cast<Start*>(arg);
        s->self.store(TypeParam::this_thread());
        s->known.store(true);
        std::this_thread::sleep_for(100ms);  // still running when join() is called
        s->finished.store(true);
        return nullptr;
    };
    ASSERT_TRUE(TypeParam::spawn(zap::ThreadOptions{1u << 20}, entry, &start));
    while (!start.known.load()) std::this_thread::yield();
    TypeParam::join(start.self.load());
    EXPECT_TRUE(start.finished.load()) << "join() returned while the thread was still running";
}

TYPED_TEST(StdPlatform, ContextIsPerThread) {
    int mine = 0;
    TypeParam::set_current_context(&mine);
    void* seen_there = &mine;
    auto body = [&] { seen_there = TypeParam::current_context(); };
    TypeParam::join(TestFixture::run_on_platform_thread(body));
    EXPECT_EQ(seen_there, nullptr);
    EXPECT_EQ(TypeParam::current_context(), &mine);
    TypeParam::set_current_context(nullptr);
}

TYPED_TEST(StdPlatform, NamesThreadAndSizesItsStack) {
    if (!TestFixture::names_and_stacks) GTEST_SKIP() << "std::thread cannot name a thread or size its stack";
    std::optional<std::string> name;
    std::optional<std::size_t> stack;
    auto body = [&] {
        TypeParam::name_this_thread("zap platform test");
        name = zap_test::thread_name();
        stack = zap_test::stack_size();
    };
    TypeParam::join(TestFixture::run_on_platform_thread(body, std::size_t{24} << 20));
    if (!name || !stack) GTEST_SKIP() << "this system reports no thread name or stack size";
#if defined(__linux__)
    EXPECT_EQ(*name, "zap platform te");  // Linux keeps 15 bytes
    // A whole number of pages is what the thread gets, not a page more
    // (glibc reports the size pthread_attr_setstacksize was given).
    EXPECT_EQ(*stack, std::size_t{24} << 20);
#else
    EXPECT_EQ(*name, "zap platform test");
    EXPECT_GE(*stack, std::size_t{24} << 20);
    EXPECT_LT(*stack, std::size_t{25} << 20);
#endif
}

// A stack size is rounded up to what the system takes (whole pages on
// Linux, 64 KiB on Windows), never down: a byte past a boundary costs a
// whole unit more.
TYPED_TEST(StdPlatform, AStackSizeIsRoundedUpNeverDown) {
    if (!TestFixture::names_and_stacks) GTEST_SKIP() << "std::thread cannot size its stack";
    const std::size_t asked = (std::size_t{24} << 20) + 1;
    std::optional<std::size_t> stack;
    auto body = [&] { stack = zap_test::stack_size(); };
    TypeParam::join(TestFixture::run_on_platform_thread(body, asked));
    if (!stack) GTEST_SKIP() << "this system reports no stack size";
    EXPECT_GE(*stack, asked);
}

#if defined(_WIN32)
// A name longer than the platform's buffer (255 characters and its end) is
// cut to what fits, not written past it.
TEST(WindowsPlatform, ALongThreadNameIsCutToTheBuffer) {
    std::optional<std::string> name;
    std::thread thread([&] {
        zap::WindowsPlatform::name_this_thread(std::string(300, 'z').c_str());
        name = zap_test::thread_name();
    });
    thread.join();
    if (!name) GTEST_SKIP() << "this system reports no thread name";
    EXPECT_EQ(*name, std::string(255, 'z'));
}

// Fills the stack below the caller with something other than zeros, so that
// whatever the next call at the same depth leaves unwritten is not a zero.
[[gnu::noinline]] void scribble_on_the_stack() {
    volatile wchar_t junk[2048];
    for (auto& c : junk) c = L'x';
}
[[gnu::noinline]] void name_this_thread(const char* name) { zap::WindowsPlatform::name_this_thread(name); }

// The name handed to Windows ends where the given name ends, whatever the
// stack held where the platform converts it.
TEST(WindowsPlatform, AThreadsNameEndsWithTheGivenName) {
    std::optional<std::string> name;
    std::thread thread([&] {
        scribble_on_the_stack();
        name_this_thread("short");
        name = zap_test::thread_name();
    });
    thread.join();
    if (!name) GTEST_SKIP() << "this system reports no thread name";
    EXPECT_EQ(*name, "short");
}

void count_exit_call(void* count) { static_cast<std::atomic<int>*>(count)->fetch_add(1); }

// Each call a thread registers runs when it exits, not only the latest:
// the chain a late destructor extends while the thread exits
// (windows_platform.hpp) is run whole.
TEST(WindowsPlatform, EveryExitCallAThreadRegisteredRuns) {
    std::atomic<int> first{0}, second{0};
    std::thread thread([&] {
        EXPECT_TRUE(zap::WindowsPlatform::at_thread_exit<&count_exit_call>(&first));
        EXPECT_TRUE(zap::WindowsPlatform::at_thread_exit<&count_exit_call>(&second));
    });
    thread.join();
    EXPECT_EQ(first.load(), 1);
    EXPECT_EQ(second.load(), 1);
}

bool handle_is_open(HANDLE handle) {
    DWORD flags = 0;
    return GetHandleInformation(handle, &flags) != FALSE;
}

TEST(WindowsPlatform, JoinClosesTheThreadsHandle) {
    using Platform = zap::WindowsPlatform;
    struct Seen {
        Platform::Thread thread = nullptr;
        std::atomic<bool> known{false};
    } seen;
    auto entry = +[](void* arg) -> void* {
        auto* s = static_cast<Seen*>(arg);
        s->thread = Platform::this_thread();
        s->known.store(true);
        return nullptr;
    };
    ASSERT_TRUE(Platform::spawn(zap::ThreadOptions{1u << 20}, entry, &seen));
    while (!seen.known.load()) std::this_thread::yield();
    const HANDLE handle = seen.thread->handle;
    ASSERT_TRUE(handle_is_open(handle));
    Platform::join(seen.thread);
    EXPECT_FALSE(handle_is_open(handle));
}

// The platform over Win32 calls that fail where the real ones do not here.
// ResumeThread refusing the thread spawn() has just created suspended; the
// test keeps a handle of its own to the thread to look at it afterwards.
struct ResumeFails : zap::detail::Win32Calls {
    static inline HANDLE spawned = nullptr;  // spawn()'s handle
    static inline HANDLE kept = nullptr;     // the test's
    static DWORD resume_thread(HANDLE thread) noexcept {
        spawned = thread;
        DuplicateHandle(GetCurrentProcess(), thread, GetCurrentProcess(), &kept, 0, FALSE, DUPLICATE_SAME_ACCESS);
        return static_cast<DWORD>(-1);
    }
};

// A Windows without SetThreadDescription (before Windows 10 1607).
struct NoThreadDescription : zap::detail::Win32Calls {
    static FARPROC find_set_thread_description() noexcept { return nullptr; }
};

// The thread that cannot be resumed never runs a line of its entry; spawn()
// ends it (exit code 0, as every zap thread), joins it, closes its handle and
// reports the failure. A spawn() that took the failure for a start, or left
// the suspended thread, would hang the pool's join() or leak the thread.
TEST(WindowsPlatform, AThreadThatCannotBeResumedIsEndedAndReported) {
    using Platform = zap::detail::WindowsPlatform<ResumeFails>;
    std::atomic<bool> ran{false};
    auto entry = +[](void* arg) -> void* {
        static_cast<std::atomic<bool>*>(arg)->store(true);
        return nullptr;
    };
    EXPECT_FALSE(Platform::spawn(zap::ThreadOptions{1u << 20}, entry, &ran));
    ASSERT_NE(ResumeFails::kept, nullptr);
    EXPECT_EQ(WaitForSingleObject(ResumeFails::kept, 0), WAIT_OBJECT_0);  // it has ended
    DWORD code = 1234;
    EXPECT_TRUE(GetExitCodeThread(ResumeFails::kept, &code));
    EXPECT_EQ(code, 0u);
    EXPECT_FALSE(handle_is_open(ResumeFails::spawned));
    EXPECT_FALSE(ran.load());
    CloseHandle(ResumeFails::kept);
}

TEST(WindowsPlatform, WithoutSetThreadDescriptionThreadsRunUnnamed) {
    using Platform = zap::detail::WindowsPlatform<NoThreadDescription>;
    std::optional<std::string> name;
    std::thread thread([&] {
        Platform::name_this_thread("never named");
        name = zap_test::thread_name();
    });
    thread.join();
    if (!name) GTEST_SKIP() << "this system reports no thread name";
    EXPECT_EQ(*name, "");
}
#endif

#if defined(__linux__)
// A short name is read up to its end and no further: here it ends right
// before a page the process may not read, which a read past it would hit.
TEST(LinuxPlatform, AShortNameIsNotReadPastItsEnd) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(pages, MAP_FAILED);
    ASSERT_EQ(mprotect(static_cast<char*>(pages) + page, page, PROT_NONE), 0);
    char* name = static_cast<char*>(pages) + page - 4;
    std::memcpy(name, "abc", 4);
    std::optional<std::string> seen;
    std::thread thread([&] {
        zap::LinuxPlatform::name_this_thread(name);
        seen = zap_test::thread_name();
    });
    thread.join();
    munmap(pages, 2 * page);
    EXPECT_EQ(seen, "abc");
}
#endif

// A wait that a wake ended reports a wake-up, whatever errno held: a
// successful system call leaves errno alone, and a wait of this thread that
// timed out before left ETIMEDOUT there (a Backoff sleep does every few
// microseconds). Read as a timeout, it would end a timed wait (deadline.hpp)
// before its time. The word stays 0, so only a wake ends the wait; a wake
// that comes before the sleeper sleeps is lost, so the test wakes until it
// has returned.
TYPED_TEST(StdPlatform, AWokenWaitReportsAWakeWhateverErrnoHeld) {
    typename TestFixture::Word word{0};
    std::atomic<bool> returned{false};
    bool woke = false;
    std::thread sleeper([&] {
        const std::chrono::nanoseconds minute = 60s;
        errno = ETIMEDOUT;  // what an earlier wait that timed out left
        woke = TypeParam::futex_wait(word, 0, &minute);
        returned = true;
    });
    while (!returned.load()) {
        TypeParam::futex_wake(word, 1);
        std::this_thread::yield();
    }
    sleeper.join();
    EXPECT_TRUE(woke) << "futex_wait reported a timeout for a wait that a wake ended";
}

// Platform::deallocate gives the block back to the heap: an allocation per
// pool, per worker and per heap task would otherwise leak.
TYPED_TEST(StdPlatform, DeallocateGivesTheBlockBack) {
    if (!ZAP_TEST_COUNTS_ALIGNED_NEW) GTEST_SKIP() << "aligned operator new is not counted in this build";
    const long allocated = aligned_allocations.load(), freed = aligned_frees.load();
    void* block = TypeParam::allocate(256, 64);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(block) % 64, 0u);
    TypeParam::deallocate(block, 256, 64);
    EXPECT_EQ(aligned_allocations.load() - allocated, 1);
    EXPECT_EQ(aligned_frees.load() - freed, 1) << "Platform::deallocate did not give the block back";
}

// The seq_cst fence of the production platforms forbids store buffering:
// each of two threads stores to its own word, fences, then loads the other's;
// both loads cannot miss both stores. The algorithm's fences rely on exactly
// this (pool_core.hpp A2/A5, helping_wait.hpp K1, Protocol T's PF1/PF2).
// Without the fence, x86's store buffer lets both loads miss, tens to
// hundreds of times in 100,000 rounds on this project's 2-vCPU machine; with
// it, never. The store and the load are the instructions a relaxed atomic
// store and load compile to on x86-64 (a plain mov), written out so that a
// debug build, where std::atomic's members are calls, puts nothing but the
// fence between them (its calls alone hide the reordering). The rounds start
// together (both threads spin on `go`), and the first thread, which sees
// `go` first, waits up to a few hundred nanoseconds more, a different time
// in each round, so that the two sides overlap in some rounds whatever the
// threads' relative speed.
#if defined(__x86_64__) && defined(__GNUC__)
std::uint32_t store_fence_load(std::atomic<std::uint32_t>& mine, std::atomic<std::uint32_t>& other) {
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    asm volatile("movl $1, %0" : "=m"(mine) : : "memory");  // mine.store(1, relaxed)
    zap::StdPlatform::fence(std::memory_order_seq_cst);
    std::uint32_t seen;
    asm volatile("movl %1, %0" : "=r"(seen) : "m"(other) : "memory");  // other.load(relaxed)
    return seen;
}

// Keeps the calling thread on one CPU of those it may use (the first, the
// second...), so that the two sides run on two; -1 gives them all back.
// Nothing where the system cannot.
void on_cpu(int which) {
#if defined(__linux__)
    static cpu_set_t allowed;
    static const bool known = sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) >= 2;
    if (!known) return;
    if (which < 0) {
        sched_setaffinity(0, sizeof allowed, &allowed);
        return;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &allowed) && seen++ == which) CPU_SET(cpu, &one);
    }
    sched_setaffinity(0, sizeof one, &one);
#else
    (void)which;
#endif
}
#endif

TEST(StdPlatformFence, ForbidsStoreBuffering) {
#if !(defined(__x86_64__) && defined(__GNUC__))
    GTEST_SKIP() << "the store buffer is observed with x86-64 instructions";
#else
    struct alignas(64) Word {
        std::atomic<std::uint32_t> value{0};
    };
    Word x, y, go, ready, done;
    constexpr std::uint32_t rounds = 200'000;
    std::uint32_t seen_by_second = 1;
    std::atomic<bool> stop{false};  // the first thread has seen enough
    // Until `w` holds `value`; false if told to stop first.
    auto await = [&stop](Word& w, std::uint32_t value) {
        for (std::uint32_t spins = 1; w.value.load(std::memory_order_acquire) != value; ++spins) {
            if (stop.load(std::memory_order_relaxed)) return false;
            if (spins % 1024 == 0) std::this_thread::yield();  // a machine with one free CPU
        }
        return true;
    };
    std::thread second([&] {
        on_cpu(1);
        for (std::uint32_t round = 1; round <= rounds; ++round) {
            ready.value.store(round, std::memory_order_release);
            if (!await(go, round)) return;
            seen_by_second = store_fence_load(y.value, x.value);
            done.value.store(round, std::memory_order_release);
        }
    });
    on_cpu(0);
    std::uint32_t both_missed = 0;
    for (std::uint32_t round = 1; round <= rounds; ++round) {
        x.value.store(0, std::memory_order_relaxed);
        y.value.store(0, std::memory_order_relaxed);
        await(ready, round);
        go.value.store(round, std::memory_order_release);
        for (std::uint32_t spin = 0; spin < round % 64 * 4; ++spin) asm volatile("");  // a few ns each
        const std::uint32_t seen_by_first = store_fence_load(x.value, y.value);
        await(done, round);
        if (seen_by_first == 0 && seen_by_second == 0) {
            both_missed = round;  // one is enough
            break;
        }
    }
    stop.store(true, std::memory_order_relaxed);
    second.join();
    on_cpu(-1);
    EXPECT_EQ(both_missed, 0u) << "in this round both loads missed the other thread's store: the fence did not "
                                  "order its thread's store before its load";
#endif
}

}  // namespace
