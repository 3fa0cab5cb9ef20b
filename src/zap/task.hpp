// SPDX-License-Identifier: MIT
// zap/task.hpp - the unit of work: a callback, an intrusive link and the
// isolation region it was scheduled in.
//
// A task is owned by whoever scheduled it. The pool never allocates: it only
// threads tasks together through their `next` link while they wait to run.
// The link is private; the pool's lists reach it through detail::Link.
//
// The region (isolation.hpp) is stamped by schedule() with the scheduling
// thread's region, and read by whoever takes the task: a helping wait inside
// ThreadPool::isolate() runs only tasks of its own region, and a thread that
// runs a task is in that task's region while it does. It makes a task 24
// bytes rather than 16: a region must travel with the task through rings,
// steals and overflow queues, and the queues link tasks through the task
// itself, so no container could carry it instead.
//
// Lifetime rule: the caller keeps a task alive from schedule() until its
// callback starts. The pool reads the callback pointer, then calls it, and
// never touches the task again, so the callback may free or reuse the task.
#pragma once

#include <cstdint>

namespace zap {

namespace detail {
struct Link;
struct Region;
}

template <class Platform>
struct BasicTask {
    using Callback = void (*)(BasicTask*);

    explicit BasicTask(Callback callback) noexcept : callback_(callback) {}

    // Runs the callback. The task must not be in any list.
    void run() noexcept { callback_(this); }

private:
    friend struct detail::Link;
    friend struct detail::Region;

    // Written by whoever holds the task in a list; read by the thread that
    // takes the list over (ordered by the release/acquire of the queue or ring
    // that handed the list over).
    typename Platform::template Cell<BasicTask*> next_{nullptr};
    Callback callback_;
    // Written by schedule() before the task is published, read after it is
    // taken (ordered like next_).
    typename Platform::template Cell<std::uint64_t> region_{0};
};

namespace detail {

// The one door to a task's link, for Batch, Queue and Buffer.
struct Link {
    template <class Task>
    static Task* next(const Task& task) noexcept {
        return task.next_.read();
    }
    template <class Task>
    static void set_next(Task& task, Task* next) noexcept {
        task.next_.write(next);
    }
};

// The one door to a task's isolation region (isolation.hpp): 0 outside any.
struct Region {
    template <class Task>
    static std::uint64_t of(const Task& task) noexcept {
        return task.region_.read();
    }
    template <class Task>
    static void set(Task& task, std::uint64_t region) noexcept {
        task.region_.write(region);
    }
    // Every task of a null-terminated chain (BT1 of batch.hpp).
    template <class List>
    static void set_all(List list, std::uint64_t region) noexcept {
        for (auto* task = list.head; task != nullptr; task = Link::next(*task)) set(*task, region);
    }
};

// A non-empty chain of tasks from head to tail, linked through next. The
// tail's link is null whenever the list is handed to a queue or ring (BT1 of
// batch.hpp).
template <class Task>
struct List {
    Task* head;
    Task* tail;
};

}  // namespace detail
}  // namespace zap
