// SPDX-License-Identifier: MIT
// bench/continuation.hpp - every workload written once, continuation-passing,
// over an executor that can only post a task (no waiting inside a task).
//
// This is the shape zap's low-level API asks for, and the only one a plain
// post()-style pool (Boost.Asio's thread_pool, a mutex + condition-variable
// pool) can run without deadlocking 2 threads. The zap, asio and cv-pool rows
// all run this same code; only the executor differs.
//
// An executor provides:
//   Node                 the task type: Node(void (*)(Node*)), node.run()
//   spawn(Node&)         post one task (from a task or from the external thread)
//   spawn(Node**, k)     optional: post k tasks at once (zap: one batch, one
//                        wake-up); without it, k posts
//
// Fork/join without waiting: a Frame counts its pending children; the child
// that brings the count to zero completes the parent (finish()), up to the
// root, which sets the signal the external thread sleeps on. One child of
// each fork runs inline, the others are posted. Frames come from a
// per-thread free list fed by a shared depot; the heap allocations they still
// need are counted as the benchmark's own (user_allocations), not the
// executor's, so a row's allocation column is what its executor allocates.
#pragma once

#include "harness.hpp"

#include <bit>
#include <memory>
#include <mutex>
#include <new>

namespace bench {

// The task type of the executors that have none of their own (asio, cv-pool).
class PlainNode {
public:
    using Fn = void (*)(PlainNode*);
    explicit PlainNode(Fn fn) noexcept : fn_(fn) {}
    void run() { fn_(this); }

private:
    Fn fn_;
};

template <class Exec>
class Continuation {
public:
    using Node = typename Exec::Node;

    explicit Continuation(Exec& exec) : exec_(exec) {
        self_ = this;
        depot.reserve(1 << 16);  // so the depot itself does not allocate while timed
    }

    // Runs `workload` once untimed (warm-up), then once under the meter.
    bool run(const std::string& workload, std::uint64_t size, Meter& meter, Outcome& out) {
        auto pick = [&]() -> Outcome (Continuation::*)(std::uint64_t, Meter*) {
            if (workload == "fib") return &Continuation::fib;
            if (workload == "qsort") return &Continuation::qsort;
            if (workload == "skynet") return &Continuation::skynet;
            if (workload == "nqueens") return &Continuation::nqueens;
            if (workload == "spawn") return &Continuation::spawn;
            if (workload == "psum") return &Continuation::psum;
            if (workload == "yield") return &Continuation::yield;
            if (workload == "pingpong") return &Continuation::pingpong;
            return nullptr;
        };
        const auto method = pick();
        if (method == nullptr) return false;
        (this->*method)(warmup_size(workload, size), nullptr);
        out = (this->*method)(size, &meter);
        meter.idle_second();
        return true;
    }

private:
    // --- fork/join frames -------------------------------------------------
    struct Frame : Node {
        Frame(void (*fn)(Node*), Frame* parent) : Node(fn), parent(parent) {}
        Frame* parent;
        std::atomic<std::uint32_t> pending{0};
        std::atomic<std::uint64_t> sum{0};
        std::uint64_t a = 0, b = 0;  // fib: n; skynet: first leaf, leaves; qsort: length
        std::int32_t* data = nullptr;
        Board board{};
    };

    // Frame memory: a per-thread free list, and a depot of full magazines
    // (lists of `magazine` frames) through which frames freed on one thread
    // flow back to threads that make more than they free. After the warm-up
    // has filled the depot, making a frame costs no heap allocation.
    struct FreeSlot {
        FreeSlot* next;
    };
    struct Cache {
        FreeSlot* head = nullptr;
        unsigned count = 0;
    };
    static constexpr unsigned magazine = 64;
    static inline thread_local Cache cache;
    static inline std::mutex depot_lock;
    static inline std::vector<FreeSlot*> depot;  // guarded by depot_lock

    static Frame* make(void (*fn)(Node*), Frame* parent) {
        if (cache.head == nullptr) refill();
        void* memory = cache.head;
        if (memory != nullptr) {
            cache.head = cache.head->next;
            cache.count -= 1;
        } else {
            memory = ::operator new(sizeof(Frame));
            user_allocations.fetch_add(1, std::memory_order_relaxed);  // a counter only
        }
        return new (memory) Frame(fn, parent);
    }
    static void recycle(Frame* frame) {
        frame->~Frame();
        cache.head = new (static_cast<void*>(frame)) FreeSlot{cache.head};
        if (++cache.count == 2 * magazine) spill();
    }
    static void refill() {
        std::lock_guard<std::mutex> lock(depot_lock);
        if (depot.empty()) return;
        cache.head = depot.back();
        cache.count = magazine;
        depot.pop_back();
    }
    // Moves the first `magazine` frames of the cache to the depot.
    static void spill() {
        FreeSlot* first = cache.head;
        FreeSlot* last = first;
        for (unsigned i = 1; i < magazine; ++i) last = last->next;
        cache.head = last->next;
        cache.count -= magazine;
        last->next = nullptr;
        std::lock_guard<std::mutex> lock(depot_lock);
        depot.push_back(first);
    }

    // Completes `frame` with `value`, then every ancestor whose last child it was.
    static void finish(Frame* frame, std::uint64_t value) {
        for (;;) {
            Frame* parent = frame->parent;
            recycle(frame);
            if (parent == nullptr) {
                self_->result_ = value;
                self_->root_done_.set();
                return;
            }
            parent->sum.fetch_add(value, std::memory_order_relaxed);  // ordered by the fetch_sub below
            // acq_rel: the last child sees every sibling's sum.
            if (parent->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
            value = parent->sum.load(std::memory_order_relaxed);  // ordered by the acq_rel fetch_sub above
            frame = parent;
        }
    }

    // Posts every child but the last, then runs the last inline.
    static void fork(Frame* parent, Frame** children, unsigned count) {
        parent->pending.store(count, std::memory_order_relaxed);  // published by the spawn below
        if (count > 1) {
            Node* posted[32];
            for (unsigned i = 0; i + 1 < count; ++i) posted[i] = children[i];
            self_->spawn_all(posted, count - 1);
        }
        children[count - 1]->run();
    }

    void spawn_all(Node** nodes, unsigned count) {
        if (count == 1) return exec_.spawn(*nodes[0]);
        if constexpr (requires { exec_.spawn(nodes, count); }) {
            exec_.spawn(nodes, count);
        } else {
            for (unsigned i = 0; i < count; ++i) exec_.spawn(*nodes[i]);
        }
    }

    // The part of a workload to time: under the meter, or plainly in the warm-up.
    template <class F>
    static Outcome timed(Meter* meter, F&& part) {
        return meter != nullptr ? meter->measure(part) : part();
    }

    Outcome root(Meter* meter, Frame* frame, std::uint64_t tasks) {
        return timed(meter, [&] {
            exec_.spawn(*frame);
            root_done_.wait();
            return Outcome{result_, tasks};
        });
    }

    // --- fib ----------------------------------------------------------------
    static void fib_step(Node* node) {
        auto* f = static_cast<Frame*>(node);
        if (f->a < 2) return finish(f, f->a);
        Frame* kids[2] = {make(&fib_step, f), make(&fib_step, f)};
        kids[0]->a = f->a - 1;
        kids[1]->a = f->a - 2;
        fork(f, kids, 2);
    }
    Outcome fib(std::uint64_t n, Meter* meter) {
        Frame* f = make(&fib_step, nullptr);
        f->a = n;
        return root(meter, f, expected_checksum("fib", n + 1) - 1);  // forks: fib(n+1) - 1
    }

    // --- qsort --------------------------------------------------------------
    static void sort_step(Node* node) {
        auto* f = static_cast<Frame*>(node);
        if (f->a <= sort_cutoff) {
            insertion_sort(f->data, f->a);
            return finish(f, 1);
        }
        const std::size_t left = partition(f->data, f->a);
        Frame* kids[2] = {make(&sort_step, f), make(&sort_step, f)};
        kids[0]->data = f->data;
        kids[0]->a = left;
        kids[1]->data = f->data + left;
        kids[1]->a = f->a - left;
        fork(f, kids, 2);
    }
    Outcome qsort(std::uint64_t n, Meter* meter) {
        std::vector<std::int32_t> v(n);
        const auto words = random_words(n);
        std::memcpy(v.data(), words.data(), n * sizeof(std::int32_t));
        Frame* f = make(&sort_step, nullptr);
        f->data = v.data();
        f->a = n;
        Outcome out = root(meter, f, 0);
        out.tasks = out.checksum - 1;  // leaves - 1 forks
        out.checksum = sorted_checksum(v);
        return out;
    }

    // --- skynet -------------------------------------------------------------
    static void skynet_step(Node* node) {
        auto* f = static_cast<Frame*>(node);
        if (f->b == 1) return finish(f, f->a);
        Frame* kids[10];
        for (unsigned i = 0; i < 10; ++i) {
            kids[i] = make(&skynet_step, f);
            kids[i]->b = f->b / 10;
            kids[i]->a = f->a + i * kids[i]->b;
        }
        fork(f, kids, 10);
    }
    Outcome skynet(std::uint64_t leaves, Meter* meter) {
        Frame* f = make(&skynet_step, nullptr);
        f->b = leaves;
        return root(meter, f, leaves + (leaves - 1) / 9);  // every node of the tree
    }

    // --- nqueens ------------------------------------------------------------
    static inline int queens = 0;
    static void queens_step(Node* node) {
        auto* f = static_cast<Frame*>(node);
        if (f->board.row == queens) return finish(f, 1);
        const std::uint32_t free = f->board.free(queens);
        if (free == 0) return finish(f, 0);
        Frame* kids[32];
        unsigned count = 0;
        for (std::uint32_t bits = free; bits != 0; bits &= bits - 1) {
            kids[count] = make(&queens_step, f);
            kids[count]->board = f->board.place(bits & -bits);
            ++count;
        }
        fork(f, kids, count);
    }
    Outcome nqueens(std::uint64_t n, Meter* meter) {
        queens = static_cast<int>(n);
        Frame* f = make(&queens_step, nullptr);
        return root(meter, f, nqueens_nodes(Board{}, queens) - 1);
    }

    // --- flat workloads: nodes owned by the external thread ----------------
    // spawn and yield: a node that runs `budget` times, posting itself again
    // until then (spawn: budget 1), then counts itself done.
    struct Repeat : Node {
        Repeat() : Node(&step) {}
        static void step(Node* node) {
            auto* self = static_cast<Repeat*>(node);
            if (++self->runs < self->budget) return self_->exec_.spawn(*self);
            self_->countdown_.done();
        }
        std::uint64_t runs = 0, budget = 1;
    };

    static std::uint64_t total_runs(const Repeat* nodes, std::uint64_t count) {
        std::uint64_t runs = 0;
        for (std::uint64_t i = 0; i < count; ++i) runs += nodes[i].runs;
        return runs;
    }

    Outcome spawn(std::uint64_t n, Meter* meter) {
        auto nodes = std::make_unique<Repeat[]>(n);
        countdown_.reset(n);
        const Outcome out = timed(meter, [&] {
            for (std::uint64_t i = 0; i < n; ++i) exec_.spawn(nodes[i]);
            countdown_.wait();
            return Outcome{0, n};
        });
        return Outcome{total_runs(nodes.get(), n), out.tasks};
    }

    Outcome yield(std::uint64_t n, Meter* meter) {
        Repeat nodes[yield_chains];
        for (unsigned i = 0; i < yield_chains; ++i) nodes[i].budget = n * (i + 1) / yield_chains - n * i / yield_chains;
        countdown_.reset(yield_chains);
        const Outcome out = timed(meter, [&] {
            for (auto& node : nodes) exec_.spawn(node);
            countdown_.wait();
            return Outcome{0, n};
        });
        return Outcome{total_runs(nodes, yield_chains), out.tasks};
    }

    // psum: one node per chunk of the input.
    struct Chunk : Node {
        Chunk() : Node(&step) {}
        static void step(Node* node) {
            auto* self = static_cast<Chunk*>(node);
            std::uint64_t sum = 0;
            for (const std::uint32_t* w = self->begin; w != self->end; ++w) sum += *w;
            self->sum = sum;
            self_->countdown_.done();
        }
        const std::uint32_t* begin = nullptr;
        const std::uint32_t* end = nullptr;
        std::uint64_t sum = 0;
    };

    Outcome psum(std::uint64_t n, Meter* meter) {
        const auto words = random_words(n);
        Chunk chunks[psum_chunks];
        Node* nodes[psum_chunks];
        for (unsigned i = 0; i < psum_chunks; ++i) {
            chunks[i].begin = words.data() + n * i / psum_chunks;
            chunks[i].end = words.data() + n * (i + 1) / psum_chunks;
            nodes[i] = &chunks[i];
        }
        countdown_.reset(psum_chunks);
        return timed(meter, [&] {
            spawn_all(nodes, psum_chunks);
            countdown_.wait();
            std::uint64_t sum = 0;
            for (const auto& chunk : chunks) sum += chunk.sum;
            return Outcome{sum, psum_chunks};
        });
    }

    // pingpong: the external thread posts one node and sleeps until it ran.
    struct Ping : Node {
        Ping() : Node(&step) {}
        static void step(Node*) { self_->pong_.set(); }
    };

    Outcome pingpong(std::uint64_t n, Meter* meter) {
        Ping ping;
        return timed(meter, [&] {
            for (std::uint64_t i = 0; i < n; ++i) {
                exec_.spawn(ping);
                pong_.wait();
            }
            return Outcome{n, n};
        });
    }

    Exec& exec_;
    Signal root_done_, pong_;
    Countdown countdown_;
    std::uint64_t result_ = 0;
    static inline Continuation* self_ = nullptr;
};

}  // namespace bench
