// SPDX-License-Identifier: MIT
// Must NOT compile with -Werror=unused-result: every result whose loss loses
// data or an error is [[nodiscard]], with a message saying what is lost.
// zap-flags: -Werror=unused-result
// zap-expect: the values nobody received
// zap-expect: every object the pool still held
// zap-expect: the value stayed with the caller
// zap-expect: a received value is lost
// zap-expect: an object taken from the pool is lost
// zap-expect: the future holds the result or the exception
// zap-expect: the count is not zero yet
// zap-expect: the children are still running
// zap-expect: the timeout expired without a token
#include <zap/zap.hpp>

#include <chrono>

int main() {
    using namespace std::chrono_literals;
    zap::ThreadPool pool;
    zap::Mailbox<int> box;
    zap::ObjectPool<int> objects;
    zap::WaitGroup wait_group;
    zap::TaskGroup task_group(pool);
    zap::Parker parker;
    const int one = 1;
    box.send(1);  // zap-error-here
    box.send(one);  // zap-error-here
    box.receive_for(1ms);  // zap-error-here
    objects.try_get();  // zap-error-here
    objects.get_for(1ms);  // zap-error-here
    pool.submit([] { return 1; });  // zap-error-here
    wait_group.wait_for(1ms);  // zap-error-here
    task_group.wait_for(1ms);  // zap-error-here
    parker.park_for(1ms);  // zap-error-here
    box.close();  // zap-error-here
    objects.close();  // zap-error-here
    box.receive();  // zap-error-here
    objects.get();  // zap-error-here
}
