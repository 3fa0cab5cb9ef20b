// SPDX-License-Identifier: MIT
// Must NOT compile: a Mailbox of a type whose move constructor may throw.
// close() and the hand-off to a waiting receiver move values; a move that
// throws there would lose one (handoff_queue.hpp, H3). The ctest
// unit.compile_fail.throwing_move passes only when the compiler rejects
// this file with handoff_queue.hpp's static_assert message.
#include <zap/zap.hpp>

struct ThrowingMove {
    ThrowingMove() = default;
    ThrowingMove(const ThrowingMove&) = default;
    ThrowingMove(ThrowingMove&&) noexcept(false) {}
    ThrowingMove& operator=(const ThrowingMove&) = default;
    ThrowingMove& operator=(ThrowingMove&&) noexcept(false) { return *this; }
};

int main() {
    zap::Mailbox<ThrowingMove> box;
    box.send(ThrowingMove{});
    return box.receive().has_value() ? 0 : 1;
}
