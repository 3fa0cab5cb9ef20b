// SPDX-License-Identifier: MIT
// Must NOT compile: for_each calls f(element) or f(element, std::size_t index).
// zap-expect: takes_element_or_element_and_index
#include <zap/zap.hpp>

#include <string>
#include <vector>

int main() {
    zap::ThreadPool pool;
    std::vector<int> v(10);
    pool.for_each(v, [](std::string&) {});  // zap-error-here
}
