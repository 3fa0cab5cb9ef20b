// What a consumer of zap compiles: the one include, the drop-in layer and
// the low level, nothing but the zap::zap target. Prints its result and
// exits non-zero when it is wrong.
#include <zap/zap.hpp>

#include <atomic>
#include <cstdio>

namespace {

struct Hello : zap::Task {
    std::atomic<int>* ran;
    explicit Hello(std::atomic<int>* ran) : zap::Task(&run), ran(ran) {}
    static void run(zap::Task* task) { static_cast<Hello*>(task)->ran->fetch_add(1); }
};

}  // namespace

int main() {
    std::atomic<int> low_level{0};
    Hello hello(&low_level);
    std::atomic<long> sum{0};
    long answer = 0;
    {
        zap::ThreadPool pool;
        pool.schedule(hello);
        pool.parallel_for(0, 1000, [&](int i) { sum += i; });
        zap::TaskGroup group(pool);
        group.run([&] { sum += 500; });
        group.wait();
        answer = pool.submit([] { return 42L; }).get();
    }
    const bool ok = low_level.load() == 1 && sum.load() == 499500 + 500 && answer == 42;
    std::printf("zap consumer: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
