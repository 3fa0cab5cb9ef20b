// SPDX-License-Identifier: MIT
// model/genmc/lin_queue.cpp - the intrusive Queue (src/zap/queue.hpp)
// against sequential specifications, with GenMC's linearizability checker
// (Relinche, GenMC v0.11: --collect-lin-spec on a specification, then
// --check-lin-spec on the implementation; docs/model.md, section 7).
//
// One client for all: main creates the object ("init"), then threads that
// each make one call (GenMC's "most parallel client"): two producers push
// tasks 1 and 2, two consumers pop once each (try_acquire_consumer, pop,
// release_consumer; 0 when the queue was empty or another consumer held it).
// -DZAP_LIN_SPEC=fifo: a FIFO queue under GenMC's specification lock.
// -DZAP_LIN_SPEC=bag:  a set under that lock whose pop may fail whatever it
//                      holds (the Queue's "busy": another consumer holds
//                      the try-lock) and returns any element it holds.
// Without ZAP_LIN_SPEC: zap's Queue on the GenMC Platform.
#include "harness.hpp"

#include <genmc.h>

#include <new>

using namespace zap_genmc;

namespace {

constexpr int values = 2;

#define ZAP_LIN_fifo 1
#define ZAP_LIN_bag 2
#define ZAP_LIN_CAT(x) ZAP_LIN_##x
#define ZAP_LIN(x) ZAP_LIN_CAT(x)

#if defined(ZAP_LIN_SPEC)
__VERIFIER_plock_t lock;  // GenMC's specification lock (a global, as its own examples have it)
#endif

#if defined(ZAP_LIN_SPEC) && ZAP_LIN(ZAP_LIN_SPEC) == ZAP_LIN_fifo
struct Object {
    int items[values] = {};
    int head = 0, tail = 0;
    void push(int v) {
        __VERIFIER_plock_lock(&lock);
        items[tail++] = v;
        __VERIFIER_plock_unlock(&lock);
    }
    int pop() {
        __VERIFIER_plock_lock(&lock);
        const int v = head == tail ? 0 : items[head++];
        __VERIFIER_plock_unlock(&lock);
        return v;
    }
};
#elif defined(ZAP_LIN_SPEC) && ZAP_LIN(ZAP_LIN_SPEC) == ZAP_LIN_bag
// A choice GenMC explores: a relaxed read that may see the coin thread's
// store or not (genmc_platform.hpp, "choices").
std::atomic<int> busy_coin{0}, which_coin{0};
void* flip(void*) {
    busy_coin.store(1, std::memory_order_relaxed);
    which_coin.store(1, std::memory_order_relaxed);
    return nullptr;
}
struct Object {
    bool held[values + 1] = {};
    void push(int v) {
        __VERIFIER_plock_lock(&lock);
        held[v] = true;
        __VERIFIER_plock_unlock(&lock);
    }
    int pop() {
        if (busy_coin.load(std::memory_order_relaxed) != 0) return 0;
        __VERIFIER_plock_lock(&lock);
        const int first = which_coin.load(std::memory_order_relaxed) != 0 ? 2 : 1;
        int v = held[first] ? first : held[3 - first] ? 3 - first : 0;
        if (v != 0) held[v] = false;
        __VERIFIER_plock_unlock(&lock);
        return v;
    }
};
#else
struct Item : Task {
    Item() noexcept : Task([](Task*) {}) {}
    int id = 0;
};
struct Object {
    Queue queue;
    Item items[values + 1];
    void push(int v) {
        items[v].id = v;
        queue.push(one(items[v]));
    }
    int pop() {
        Task* cursor = nullptr;
        if (!queue.try_acquire_consumer(cursor)) return 0;
        Task* t = queue.pop(cursor);
        queue.release_consumer(cursor);
        return t == nullptr ? 0 : static_cast<Item*>(t)->id;
    }
};
#endif

Object* object;

void* producer(void* arg) {
    const int v = static_cast<int>(reinterpret_cast<std::intptr_t>(arg));
    __VERIFIER_method_begin("push", v);
    object->push(v);
    __VERIFIER_method_end("push", 0);
    return nullptr;
}

void* consumer(void*) {
    __VERIFIER_method_begin("pop", 0);
    const int v = object->pop();
    __VERIFIER_method_end("pop", v);
    return nullptr;
}

}  // namespace

int main() {
#if defined(ZAP_LIN_SPEC) && ZAP_LIN(ZAP_LIN_SPEC) == ZAP_LIN_bag
    pthread_t coins;
    pthread_create(&coins, nullptr, &flip, nullptr);
#endif
    __VERIFIER_method_begin("init", 0);
    object = new (std::malloc(sizeof(Object))) Object;
    __VERIFIER_method_end("init", 0);
    pthread_t t[4];
    pthread_create(&t[0], nullptr, &producer, reinterpret_cast<void*>(std::intptr_t{1}));
    pthread_create(&t[1], nullptr, &producer, reinterpret_cast<void*>(std::intptr_t{2}));
    pthread_create(&t[2], nullptr, &consumer, nullptr);
    pthread_create(&t[3], nullptr, &consumer, nullptr);
    return 0;
}
