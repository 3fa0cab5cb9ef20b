// SPDX-License-Identifier: MIT
// Must NOT compile: a Mailbox (or ObjectPool) of a type whose move
// constructor may throw. close() and the hand-off to a waiting receiver move
// values; a move that throws there would lose one (handoff_queue.hpp, HQ3).
// zap-expect: move_constructs_without_throwing
#include <zap/zap.hpp>

struct ThrowingMove {
    ThrowingMove() = default;
    ThrowingMove(const ThrowingMove&) = default;
    ThrowingMove(ThrowingMove&&) noexcept(false) {}
    ThrowingMove& operator=(const ThrowingMove&) = default;
    ThrowingMove& operator=(ThrowingMove&&) noexcept(false) { return *this; }
};

int main() {
    zap::Mailbox<ThrowingMove> box;  // zap-error-here
    zap::ObjectPool<ThrowingMove> pool;  // zap-error-here
}
