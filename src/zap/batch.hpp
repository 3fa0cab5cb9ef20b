// SPDX-License-Identifier: MIT
// zap/batch.hpp - an unordered group of tasks, scheduled with one notify.
//
// Invariants, referenced where they are maintained:
//   BT1 (terminated): when the batch is not empty, tail's link is null, so a
//      consumer can walk head -> ... -> tail by following links until null.
//      push() clears the link of every task it adds; a task that ran before
//      and is scheduled again may carry a stale link from its previous list.
//   BT2 (counted): size() is the number of tasks reachable from head.
#pragma once

#include <zap/assert.hpp>
#include <zap/task.hpp>

#include <cstddef>
#include <utility>

namespace zap {

template <class Platform>
class BasicBatch {
public:
    using Task = BasicTask<Platform>;

    BasicBatch() noexcept = default;
    explicit BasicBatch(Task& task) noexcept { push(task); }

    BasicBatch(BasicBatch&& other) noexcept
        : head_(std::exchange(other.head_, nullptr)),
          tail_(std::exchange(other.tail_, nullptr)),
          size_(std::exchange(other.size_, 0)) {}
    BasicBatch& operator=(BasicBatch&& other) noexcept {
        head_ = std::exchange(other.head_, nullptr);
        tail_ = std::exchange(other.tail_, nullptr);
        size_ = std::exchange(other.size_, 0);
        return *this;
    }
    BasicBatch(const BasicBatch&) = delete;
    BasicBatch& operator=(const BasicBatch&) = delete;

    void push(Task& task) noexcept {
        detail::Link::set_next(task, static_cast<Task*>(nullptr));  // BT1: the new tail ends the chain
        append(&task, &task, 1);
    }

    // Takes every task of `other`, leaving it empty.
    void push(BasicBatch&& other) noexcept {
        if (other.empty()) return;
        append(other.head_, other.tail_, other.size_);  // BT1 holds for other, so for the join
        other = BasicBatch{};
    }

    Task* pop() noexcept {
        Task* task = head_;
        if (task == nullptr) return nullptr;
        head_ = detail::Link::next(*task);
        if (head_ == nullptr) tail_ = nullptr;
        --size_;  // BT2
        return task;
    }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }

    // For the pool: the chain of tasks, then the batch is empty.
    detail::List<Task> take_list() noexcept {
        ZAP_ASSERT(!empty(), "internal: take_list on an empty batch");
        detail::List<Task> list{head_, tail_};
        head_ = tail_ = nullptr;
        size_ = 0;
        return list;
    }

private:
    void append(Task* head, Task* tail, std::size_t count) noexcept {
        if (tail_ == nullptr) {
            head_ = head;
        } else {
            detail::Link::set_next(*tail_, head);
        }
        tail_ = tail;
        size_ += count;  // BT2
    }

    Task* head_ = nullptr;
    Task* tail_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace zap
