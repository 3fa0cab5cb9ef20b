// zap/task.hpp - the unit of work: a callback and an intrusive link.
//
// A task is owned by whoever scheduled it. The pool never allocates: it only
// threads tasks together through their `next` link while they wait to run.
// The link is private; the pool's lists reach it through detail::Link.
//
// Lifetime rule: the caller keeps a task alive from schedule() until its
// callback starts. The pool reads the callback pointer, then calls it, and
// never touches the task again, so the callback may free or reuse the task.
#pragma once

namespace zap {

namespace detail {
struct Link;
}

template <class Platform>
struct BasicTask {
    using Callback = void (*)(BasicTask*);

    explicit BasicTask(Callback callback) noexcept : callback_(callback) {}

    // Runs the callback. The task must not be in any list.
    void run() noexcept { callback_(this); }

private:
    friend struct detail::Link;

    // Written by whoever holds the task in a list; read by the thread that
    // takes the list over (ordered by the release/acquire of the queue or ring
    // that handed the list over).
    typename Platform::template Cell<BasicTask*> next_{nullptr};
    Callback callback_;
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

// A non-empty chain of tasks from head to tail, linked through next. The
// tail's link is null whenever the list is handed to a queue or ring (I1 of
// batch.hpp).
template <class Task>
struct List {
    Task* head;
    Task* tail;
};

}  // namespace detail
}  // namespace zap
