// SPDX-License-Identifier: MIT
// model/mutation/line_probe.cpp - which line std::source_location::current()
// reports, as a default argument, for a call written over several lines.
// model/mutation/sites.py assumes: the line of the called name. `model/mutate
// --ci` compiles and runs this with the build's compiler, so a compiler that
// reports another line stops the check instead of silently mutating nothing.
#include <cstdio>
#include <source_location>

struct Probe {
    unsigned call(int, int, std::source_location loc = std::source_location::current()) { return loc.line(); }
};

#define EXPECT(got, want) ok &= check(got, want, #want)
static bool check(unsigned got, unsigned want, const char* what) {
    if (got != want) std::printf("line probe: %s: reported %u, sites.py assumes %u\n", what, got, want);
    return got == want;
}

int main() {
    Probe probe, *p = &probe;
    bool ok = true;
    EXPECT(probe.call(1, 2), __LINE__);
    unsigned a = probe.call(1,  // the name's line
                            2);
    EXPECT(a, __LINE__ - 2);
    unsigned b = p->
                 call(1,  // the name's line, not the object's
                      2);
    EXPECT(b, __LINE__ - 2);
    unsigned c = probe
                     .call(  // the name's line
                         1, 2);
    EXPECT(c, __LINE__ - 2);
    std::printf("line probe: %s\n", ok ? "the called name's line, as sites.py assumes" : "MISMATCH");
    return ok ? 0 : 1;
}
