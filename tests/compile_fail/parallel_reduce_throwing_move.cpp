// SPDX-License-Identifier: MIT
// Must NOT compile: a reduction's T must move without throwing (its values
// move up the tree inside noexcept frames).
// zap-expect: moves_without_throwing
#include <zap/zap.hpp>

struct Sum {
    long value = 0;
    Sum() = default;
    Sum(long v) : value(v) {}
    Sum(const Sum&) = default;
    Sum(Sum&& other) noexcept(false) : value(other.value) {}
    Sum& operator=(const Sum&) = default;
    Sum& operator=(Sum&& other) noexcept(false) { value = other.value; return *this; }
};

int main() {
    zap::ThreadPool pool;
    const auto add = [](Sum a, Sum b) { return Sum(a.value + b.value); };
    return static_cast<int>(pool.parallel_reduce(0, 10, Sum{}, [](int i) { return Sum(i); }, add).value);  // zap-error-here
}
