// SPDX-License-Identifier: MIT
// model/work_conserving_models.cpp - Relacy models of work conservation
// (pool_core.hpp A4, property P6): no worker sleeps, and none stays
// unspawned, while a scheduled task waits in a queue that nobody is bound to
// look at.
//
// K tasks meet: each arrives, then blocks on a futex until all K have
// arrived. The block is outside the pool (a bare futex, not a WaitGroup,
// whose wait would help and so run the missing task itself), as a latch or
// a pipeline stage would block. K equals max_threads: every worker must end
// up running one of them. With spurious wake-ups off, a member stranded in
// a queue while a worker sleeps or is never spawned leaves every thread
// blocked: a Relacy deadlock. The main thread waits for the K members on a
// WaitGroup (outside the pool), then deletes the pool.
//
//   rendezvous_3w_task   a task schedules the three members, one
//                        schedule() each, into its own ring, and returns:
//                        the woken worker steals one of two
//   rendezvous_3w_batch  the same with one Batch
//   rendezvous_3w_outside the main thread schedules the three members, one
//                        schedule() each, into the global queue
//   rendezvous_2w_held   max_threads 2: a first task, then the two members
//                        from outside, one schedule() each: a worker that
//                        holds the global queue's consumer lock while a
//                        member is pushed must report what it left (Stole::more)
//   rendezvous_2w_lone   max_threads 2: a task forks one member into its
//                        own ring, then meets it: the other worker must steal
//                        that lone task from a ring whose owner is running
//                        and will never take it (buffer.hpp step 3a: the
//                        thief's delay ends in a claim, DL1)
//   rendezvous_2w_after_idle max_threads 2: a first task runs, and its
//                        worker goes idle, before the two members come from
//                        outside, one schedule() each: the worker the first
//                        member wakes must leave the idle count as it takes
//                        the notification (A5), or the second member's
//                        notify_slow() wakes an idle worker that does not
//                        exist instead of spawning the second one
#include "model_registry.hpp"

namespace {

using namespace zap_model;

template <std::uint32_t Workers, std::uint32_t K>
struct Meeting {
    P::Atomic<std::uint32_t> arrived{0};
    WaitGroup finished;

    // A member's body: arrive, then sleep until all K have arrived.
    void meet() {
        const std::uint32_t now = arrived.fetch_add(1, std::memory_order_acq_rel) + 1;
        if (now == K) {
            P::futex_wake(arrived, K);
        } else {
            for (std::uint32_t seen = now; seen < K; seen = arrived.load(std::memory_order_acquire))
                P::futex_wait(arrived, seen, nullptr);
        }
        finished.done();
    }
};

enum class Shape { task_one_by_one, task_batch, outside, held, lone, after_idle };

template <std::uint32_t Workers, Shape S>
struct RendezvousModel : Model<RendezvousModel<Workers, S>, 1, Workers> {
    static constexpr std::uint32_t k = Workers;
    using Shared = Meeting<Workers, k>;

    struct Member : Task {
        Shared* shared = nullptr;
        Member() : Task(&run) {}
        static void run(Task* t) { static_cast<Member*>(t)->shared->meet(); }
    };

    // Schedules the members from inside the pool, then returns (lone: it
    // schedules one and is the other).
    struct Driver : Task {
        RendezvousModel* model = nullptr;
        Driver() : Task(&run) {}
        static void run(Task* t) { static_cast<Driver*>(t)->model->schedule_members(); }
    };

    Pool* pool = nullptr;
    Shared shared;
    Member members[k];
    Driver driver;
    Counted first;  // rendezvous_2w_held: runs before the members

    Flagged marker;  // rendezvous_2w_after_idle: runs before the members, and the main thread waits for it

    void schedule_members() {
        if (S == Shape::lone) {
            pool->schedule(members[0]);  // into the driver's worker's ring: its only task
            shared.meet();
            return;
        }
        if (S == Shape::task_batch) {
            Batch batch;
            for (auto& m : members) batch.push(m);
            pool->schedule(std::move(batch));
            return;
        }
        for (auto& m : members) pool->schedule(m);
    }

    void thread(unsigned) {
        pool = new Pool(model_config(Workers));
        for (auto& m : members) m.shared = &shared;
        driver.model = this;
        shared.finished.add(k);
        if (S == Shape::held) pool->schedule(first);
        if (S == Shape::after_idle) {
            pool->schedule(marker);
            while (!marker.done()) P::spin_hint();
        }
        if (S == Shape::task_one_by_one || S == Shape::task_batch || S == Shape::lone) {
            pool->schedule(driver);
        } else {
            schedule_members();
        }
        shared.finished.wait();
        delete pool;  // runs `first` if nobody has yet
        pool = nullptr;
        RL_ASSERT(first.runs($).load() == (S == Shape::held ? 1 : 0));
    }
};

using Rendezvous3wTask = RendezvousModel<3, Shape::task_one_by_one>;
using Rendezvous3wBatch = RendezvousModel<3, Shape::task_batch>;
using Rendezvous3wOutside = RendezvousModel<3, Shape::outside>;
using Rendezvous2wHeld = RendezvousModel<2, Shape::held>;
using Rendezvous2wLone = RendezvousModel<2, Shape::lone>;
using Rendezvous2wAfterIdle = RendezvousModel<2, Shape::after_idle>;

ZAP_MODEL_TEST(rendezvous_3w_task, Rendezvous3wTask, false, P::SpawnFailure::never,
               "3 workers, a task schedules 3 members one by one: all meet (none stranded behind a blocked one)");
ZAP_MODEL_TEST(rendezvous_3w_batch, Rendezvous3wBatch, false, P::SpawnFailure::never,
               "3 workers, a task schedules 3 members as one batch: all meet");
ZAP_MODEL_TEST(rendezvous_3w_outside, Rendezvous3wOutside, false, P::SpawnFailure::never,
               "3 workers, 3 members scheduled from outside one by one: all meet");
ZAP_MODEL_TEST(rendezvous_2w_held, Rendezvous2wHeld, false, P::SpawnFailure::never,
               "2 workers, a task then 2 members from outside: a held queue's leftovers are announced");
ZAP_MODEL_TEST(rendezvous_2w_lone, Rendezvous2wLone, false, P::SpawnFailure::never,
               "2 workers, a task forks 1 member into its ring and meets it: the lone task is stolen");
ZAP_MODEL_TEST(rendezvous_2w_after_idle, Rendezvous2wAfterIdle, false, P::SpawnFailure::never,
               "2 workers, a task runs and its worker idles, then 2 members from outside: the second is spawned");

}  // namespace
