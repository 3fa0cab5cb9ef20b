// SPDX-License-Identifier: MIT
// What a consumer of zap compiles: the one include, the drop-in layer and
// the low level, Parker, Mailbox and ObjectPool, nothing but the zap::zap
// target (or pkg-config's flags). check.sh compiles it with strict warnings
// as errors, so each template used here is checked as a user instantiates it.
// Prints its result and exits non-zero when it is wrong.
#include <zap/zap.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

// find_package(zap <version> CONFIG) (CMakeLists.txt passes the version it
// found): the package's version is the header's.
#if defined(ZAP_PACKAGE_VERSION_MAJOR)
static_assert(ZAP_VERSION_MAJOR == ZAP_PACKAGE_VERSION_MAJOR && ZAP_VERSION_MINOR == ZAP_PACKAGE_VERSION_MINOR &&
                  ZAP_VERSION_PATCH == ZAP_PACKAGE_VERSION_PATCH,
              "zap's CMake package and <zap/version.hpp> disagree on the version");
#endif

namespace {

struct Hello : zap::Task {
    std::atomic<int>* ran;
    explicit Hello(std::atomic<int>* counter) : zap::Task(&run), ran(counter) {}
    static void run(zap::Task* task) { static_cast<Hello*>(task)->ran->fetch_add(1); }
};

// The drop-in layer and the low level on one pool.
bool pool_works() {
    std::atomic<int> low_level{0};
    Hello hello(&low_level);
    std::atomic<long> sum{0};
    long answer = 0;
    std::vector<int> items(100, 1);
    {
        zap::ThreadPool pool;
        pool.schedule(hello);
        pool.parallel_for(0, 1000, [&](int i) { sum += i; });
        pool.for_each(items, [&](int& item, std::size_t) { sum += item; });
        pool.parallel_invoke([&] { sum += 1; }, [&] { sum += 2; });
        zap::TaskGroup group(pool);
        group.run([&] { sum += 500; });
        group.wait();
        zap::WaitGroup wg;
        wg.add();
        pool.spawn([&] { wg.done(); });
        wg.wait();
        answer = pool.submit([] { return 42L; }).get();
    }
    return low_level.load() == 1 && sum.load() == 499500 + 100 + 3 + 500 && answer == 42;
}

// Exceptions read out of submit()'s futures, many times: under
// ThreadSanitizer this is the pattern the installed suppression file is for.
bool exceptions_arrive() {
    zap::ThreadPool pool;
    int caught = 0;
    for (int i = 0; i < 1000; ++i) {
        try {
            pool.submit([i]() -> int { throw std::runtime_error("task " + std::to_string(i)); }).get();
        } catch (const std::runtime_error& error) {
            caught += std::string(error.what()) == "task " + std::to_string(i) ? 1 : 0;
        }
    }
    return caught == 1000;
}

// The third round's conventions, as a user with -Wconversion writes them:
// bounds of two types, 8-bit indices, f(element), a sum of shorts, an n-way
// fork, a child taking the group's token, a sealed mailbox drained.
bool conventions_work() {
    zap::ThreadPool pool(2);
    std::vector<int> items(100, 1);
    std::atomic<long> sum{0};
    pool.parallel_for(0, items.size(), [&](std::size_t i) { sum += items[i]; });
    pool.for_each(items, [&](int& item) { sum += item; });
    const long long bytes = pool.parallel_reduce(std::uint8_t{0}, std::uint8_t{255}, 0LL,
                                                 [](std::uint8_t i) { return static_cast<long long>(i); },
                                                 std::plus<>{});
    const short shorts = pool.parallel_reduce(0, 100, short{0}, [](int) { return short{1}; }, std::plus<>{});
    pool.parallel_invoke([&] { sum += 1; }, [&] { sum += 2; }, [&] { sum += 3; });
    zap::TaskGroup group(pool);
    group.run([&](std::stop_token stop) { sum += stop.stop_requested() ? 0 : 10; });
    group.wait();
    zap::Mailbox<int> mailbox;
    const bool sent = mailbox.send(7);
    mailbox.seal();
    const bool drained = mailbox.receive() == 7 && !mailbox.receive().has_value();
    return sum.load() == 100 + 100 + 6 + 10 && bytes == 254LL * 255 / 2 && shorts == 100 && sent && drained;
}

// Seeds 003 and 004: the timed waits included.
bool parking_works() {
    zap::Parker parker;
    parker.unpark();
    const bool token_kept = parker.park_for(std::chrono::milliseconds{1});
    const bool timed_out = !parker.park_for(std::chrono::milliseconds{1});
    zap::Mailbox<int> mailbox;
    const bool sent = mailbox.send(7);
    const bool received = sent && mailbox.receive_for(std::chrono::milliseconds{1}) == 7;
    const bool closed_empty = mailbox.close().empty() && mailbox.closed();
    zap::ObjectPool<int> objects;
    objects.put(3);
    const bool got = objects.get_for(std::chrono::milliseconds{1}) == 3 && objects.size() == 0;
    return token_kept && timed_out && received && closed_empty && got && objects.close().empty();
}

}  // namespace

int main() {
    const bool ok = pool_works() && exceptions_arrive() && conventions_work() && parking_works();
    std::printf("zap consumer: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
