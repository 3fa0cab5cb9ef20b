# SPDX-License-Identifier: MIT
# Model test registrations (included from model/CMakeLists.txt).
#
# Label `model`: each claim under a bounded search (context bound = number of
# preemptions Relacy may insert) where that finishes in seconds, plus a
# random-scheduler run; label `model-deep`: the same claims with larger
# bounds and more random executions (configure with -DZAP_MODEL_DEEP=ON).
# Label `model-teeth`: the `seed.*` and `bite.*` tests run a model on a
# seeded bug (a seed behaviour from model/seed/*.patch, or an ordering
# weakened through ZAP_MUTATE) and pass only when Relacy reports the expected
# failure: they prove that each check can fail. tools/test runs them;
# tools/verify runs `model` only (no seed binary to build).

set(Z zap_model)
set(src ${PROJECT_SOURCE_DIR}/src/zap)

# Label `model-core`: of these, the runs a newcomer sees first (tools/verify,
# which builds only zap_model_core): one of each core protocol, each done in
# seconds on an idle core - the queue, the ring (steal, consume), the event,
# the WaitGroup, the Sync word and the pool (tasks from outside and from a
# task, a failing spawn, shutdown and join), the helping wait, the Parker,
# the Lock, the Mailbox and the ObjectPool. Each is registered twice, as
# model.NAME (label model, zap_model: what tools/test and model/mutate run)
# and as model-core.NAME (zap_model_core), from the same line below.
set(ZAP_MODEL_CORE
  queue.bound buffer_steal.bound buffer_consume.bound event_notify.bound event_late_notify.bound
  wait_group.bound join_before_shutdown.bound
  sync_2w_2t.random pool_2w_3t.random pool_spawn_maybe_fails.random help_new_work.random
  parker_unpark.bound lock.bound mailbox_fifo.bound mailbox_close.bound object_pool_close.bound)
# zap_main_model_test(NAME ARGS...): model.NAME on zap_model, and
# model-core.NAME on zap_model_core when NAME is one of ZAP_MODEL_CORE.
function(zap_main_model_test name)
  zap_model_test(NAME model.${name} BINARY ${Z} ARGS ${ARGN})
  if(name IN_LIST ZAP_MODEL_CORE)
    zap_model_test(NAME model-core.${name} BINARY zap_model_core ARGS ${ARGN} LABEL model-core)
  endif()
endfunction()

# name bound random-iterations deep-bound deep-random-iterations
set(ZAP_MODEL_BOUNDED
  "queue 2 200000 3 2000000"
  "buffer_steal 2 200000 3 2000000"
  "buffer_consume 1 100000 2 1000000"
  "buffer_stale_head 2 100000 3 1000000"
  # isolation_models.cpp: the ring's region steps (buffer.hpp steps 7, 8)
  "isolation_claim_past 2 100000 3 1000000"
  "isolation_pop_back_past 2 100000 3 1000000"
  "event_notify 2 100000 4 1000000"
  "event_two_sleepers 2 100000 3 1000000"
  "event_late_notify 1 100000 2 1000000"
  "event_three_waiters 1 100000 2 1000000"
  "wait_group 1 100000 2 1000000"
  "join_before_shutdown 1 100000 2 1000000"
  # shutdown(), join() and the destructor on different threads (lifecycle_models.cpp);
  # its other models are random only, below.
  "apart_no_worker 2 100000 3 1000000"
  # model/parker_models.cpp
  "parker_unpark 2 100000 3 1000000"
  "parker_timed 2 100000 3 1000000"
  "parker_ping_pong 2 100000 3 1000000"
  "lock 2 100000 3 1000000"
  "mailbox_fifo 2 100000 3 1000000"
  "mailbox_close 1 100000 1 3000000"
  "mailbox_seal 2 100000 3 1000000"
  "object_pool_close 1 100000 2 1000000"
  "object_pool_gate 2 100000 3 1000000"
  # model/task_group_models.cpp: the two that start no worker
  "cancel_token 2 100000 3 1000000"
  "cancel_publishes 2 100000 3 1000000"
  # model/wait_for_models.cpp: the one without a pool
  "wait_for_outside 2 100000 3 1000000"
  # model/timed_waits_models.cpp: Protocol T (portable_platform.hpp)
  "timed_waits_wake 2 100000 3 1000000")
foreach(spec ${ZAP_MODEL_BOUNDED})
  separate_arguments(spec)
  list(GET spec 0 name)
  list(GET spec 1 bound)
  list(GET spec 2 iterations)
  list(GET spec 3 deep_bound)
  list(GET spec 4 deep_iterations)
  zap_main_model_test(${name}.bound ${name} --bound ${bound})
  zap_main_model_test(${name}.random ${name} --sched random --iterations ${iterations})
  if(ZAP_MODEL_DEEP)
    zap_model_test(NAME model-deep.${name}.bound BINARY ${Z} ARGS ${name} --bound ${deep_bound} LABEL model-deep)
    zap_model_test(NAME model-deep.${name}.random BINARY ${Z} ARGS ${name} --sched random --iterations ${deep_iterations}
                   LABEL model-deep)
  endif()
endforeach()

# The pool's protocol and end-to-end models: no context bound finishes
# (spin and retry loops are free for the bounded scheduler), so random only.
set(ZAP_MODEL_RANDOM sync_1w_2t sync_2w_1t_child sync_2w_2t sync_2w_2t_child sync_1w_2t_serial sync_spawn_fails_first
    pool_1w_1t pool_1w_2t_child
    pool_2w_1t_child pool_1w_1t_late_join pool_2w_1t_child_late_join pool_2w_3t pool_spawn_maybe_fails
    pool_spawn_always_fails pool_reschedule pool_warm_race pool_warm_first pool_warm_fails_beside_a_push
    help_done_outside help_new_work
    help_two_waiters help_spawn_fails help_shutdown
    # isolation_models.cpp (isolate(), Protocol I)
    isolation_one_worker isolation_two_workers
    # lifecycle_models.cpp: their bounded searches run for minutes (apart_idle_worker
    # over ten at bound 2; the seed tests show bound 2 reaching each race)
    apart_idle_worker apart_spawn_fails two_joiners
    # task_group_models.cpp: TaskGroup cancellation on a running pool
    cancel_skips cancel_wakes_waiter cancel_loop cancel_loop_two
    # wait_for_models.cpp: timed waits of a worker
    wait_for_helping wait_for_pool_gone
    # execution_models.cpp: a schedule sender's operation state (Protocol X)
    schedule_stop_race schedule_stop_first schedule_from_worker
    # lazy_models.cpp: Lazy's when_all join and sync_wait (lazy.hpp CO5-CO10)
    lazy_when_all lazy_when_all_inline lazy_sync_wait_worker)
foreach(name ${ZAP_MODEL_RANDOM})
  zap_main_model_test(${name}.random ${name} --sched random --iterations 100000)
  if(ZAP_MODEL_DEEP)
    zap_model_test(NAME model-deep.${name}.random BINARY ${Z} ARGS ${name} --sched random --iterations 3000000
                   LABEL model-deep)
  endif()
endforeach()
# A joiner that no longer waits for a failed spawn's closer frees the pool
# under it about once in 20,000 executions of this model (first at 24,906;
# the seed no-closers at 13,871): a million, 6 s, leave chance no room.
zap_main_model_test(apart_spawn_fails_late_join.random apart_spawn_fails_late_join --sched random --iterations 1000000)

# ---- seed behaviours (model/seed/*.patch): the models find each defect ----
macro(zap_seed name seed test expect)
  zap_model_test(NAME model.seed.${name} BINARY zap_model_schemata SEED ${seed} ARGS ${test} ${ARGN} --expect ${expect}
                 LABEL model-teeth)
endmacro()
zap_seed(event_shutdown_wake event-shutdown-wake event_two_sleepers deadlock --bound 2)
zap_seed(event_shutdown_wake_3 event-shutdown-wake event_three_waiters deadlock --bound 1)
zap_seed(event_late_notify event-late-notify event_late_notify deadlock --bound 1)
zap_seed(spawn_failed spawn-failed sync_spawn_fails_first deadlock --sched random --iterations 100000)
zap_seed(shutdown_join_notify shutdown-join-notify join_before_shutdown deadlock --bound 1)
# The *_late_join models: with the joiner asleep on the join event, the late
# touch needs a rare spurious wake-up (pool_1w_1t: not found in 100 K runs).
zap_seed(join_no_thread_join join-no-thread-join pool_1w_1t_late_join freed --sched random --iterations 100000)
zap_seed(join_no_thread_join_2w join-no-thread-join pool_2w_1t_child_late_join freed --sched random --iterations 100000)
zap_seed(batch_stale_next batch-stale-next pool_reschedule assert --sched random --iterations 100000)
zap_seed(no_drain no-drain pool_spawn_always_fails assert --bound 1)
zap_seed(no_drain_2w no-drain pool_2w_3t assert --sched random --iterations 100000)
zap_seed(no_drain_spawn_maybe_fails no-drain pool_spawn_maybe_fails assert --sched random --iterations 100000)
zap_seed(no_drain_1w_2t_child no-drain pool_1w_2t_child assert --sched random --iterations 100000)
# Zap before the closers (P5) and the join claim (B4). Since the
# call count the destructor also waits for calls under way (B7), which covers
# shutdown()'s own closer: no-closers drops that wait too, or the first two
# models would pass on it (they did: 100,000 random runs without a freed
# access; the spawner's closer in apart_spawn_fails is B7's blind spot).
zap_seed(no_closers_no_worker no-closers apart_no_worker freed --sched random --iterations 100000)
zap_seed(no_closers_idle_worker no-closers apart_idle_worker freed --bound 2)
zap_seed(no_closers_spawn_fails no-closers apart_spawn_fails freed --bound 2)
zap_seed(one_joiner one-joiner two_joiners deadlock --bound 1)
# The seed's warm() (D15): a successful reservation CAS leaves the loop
# without spawning (a phantom worker: join() waits for ever), a failed one
# spawns a thread without a reservation (two workers for max_threads 1).
zap_seed(warm_phantom warm-break pool_warm_first deadlock --sched random --iterations 100000)
zap_seed(warm_unreserved warm-break pool_warm_race assert --sched random --iterations 100000)

# The seed's notify fast path (a relaxed load, no fence) and wait() (no fence
# after taking the notification): both fences of A2/A5 removed.
zap_line(a2 ${src}/pool_core.hpp "Platform::fence(std::memory_order_seq_cst);" 1)  # notify()
zap_line(a5 ${src}/pool_core.hpp "Platform::fence(std::memory_order_seq_cst);" 2)  # wait()
set(seed_fences "src/zap/pool_core.hpp:${a2}=relaxed,src/zap/pool_core.hpp:${a5}=relaxed")
foreach(name sync_1w_2t sync_2w_2t)  # sync_2w_1t_child: not found in 200 K random runs
  zap_model_test(NAME model.seed.notify_fences.${name} BINARY ${Z} MUTATE ${seed_fences}
                 ARGS ${name} --sched random --iterations 200000 --expect deadlock LABEL model-teeth)
endforeach()
zap_model_test(NAME model.seed.notify_fences_schemata.sync_1w_2t BINARY zap_model_schemata MUTATE ${seed_fences}
               ARGS sync_1w_2t --sched random --iterations 200000 --expect deadlock LABEL model-teeth)

# ---- bites: one weakened ordering per part model --------------------------
# zap_bite_in(BINARY ...): the same, on another model binary (take_back.cmake).
macro(zap_bite_in binary name test file regex order expect)
  zap_line(line ${src}/${file} "${regex}")
  zap_model_test(NAME model.bite.${name} BINARY ${binary} MUTATE "src/zap/${file}:${line}=${order}"
                 ARGS ${test} ${ARGN} --expect ${expect} LABEL model-teeth)
endmacro()
macro(zap_bite name test file regex order expect)
  zap_bite_in(${Z} ${name} ${test} ${file} "${regex}" ${order} ${expect} ${ARGN})
endmacro()

# Protocol T (portable_platform.hpp; model/timed_waits_models.cpp): PF1's and
# PF2's fences, each weakened to acq_rel, leave store buffering between the
# waiter's count-in and compare and the waker's change and count read: the
# waiter sleeps through the wake (found at execution 2 at context bound 3).
zap_bite(timed_waits_pf1_fence timed_waits_wake portable_platform.hpp "// PF1: pairs with PF2's fence" acq_rel deadlock --bound 3)
zap_bite(timed_waits_pf2_fence timed_waits_wake portable_platform.hpp "// PF2: pairs with PF1's fence" acq_rel deadlock --bound 3)

zap_bite(queue_push queue queue.hpp "stack_.compare_exchange_weak(stack, top," relaxed race --bound 1)
# The same weakening on the schemata twin (mutation/schemata.cmake): its
# lines are src/'s, so ZAP_MUTATE's PATH:LINE names the same call there and
# an ordering mutant needs no build of its own either. After and inside a
# seed's switch (thread_pool.hpp has several) only the generated #line keeps
# them: model.seed.notify_fences_schemata checks that with A2/A5's fences
# (wait()'s lies inside spin-zero-means-default's switch).
zap_bite_in(zap_model_schemata queue_push_schemata queue queue.hpp "stack_.compare_exchange_weak(stack, top," relaxed race
            --bound 1)
zap_bite(buffer_push_tail buffer_steal buffer.hpp "tail_.store(tail, std::memory_order_release)" relaxed assert --bound 1)
# sync_2w_2t_child: the ring's unpublished slot. It was sync_2w_1t_child
# until the give-back: there the waker now gives its role back, so the thief is
# spawned only after the child's push and 100 K random runs found no race
# (the fence seed is not found there in 200 K either). Since the work-conservation look the
# first failing execution (1,136) had the thief claim a slot it reads as
# null, which buffer.hpp's RB2 assertion reports (before, a race on a stale
# task's fields came first, and a null slot crashed the model). Since
# isolation the ring also writes each slot's region, one more atomic step per slot,
# and the random scheduler's first failing execution (2,773) is again a race:
# the thief runs a task whose fields the owner's unpublished writes made
# (Counted's run count). Same bug, other symptom. Since the spin the idle
# worker spins (two looks at Sync in the models) and the first failing
# execution (3,734) is RB2's assertion again. Since the lone-task delay
# (buffer.hpp step 3a: a thief's look at a ring of one task, then a wait)
# and consume() no longer writing the task it runs into the ring, the first
# failing execution (2,592) is a race again: on a task's region field
# (task.hpp Region::of), which the owner's push wrote unpublished. Since the
# worker's and the pool's fields moved off each other's cache lines (the
# models' memory laid out anew), it is RB2's assertion again (execution
# 477). Either symptom is this bug: the bite expects either.
zap_bite(buffer_push_tail_child sync_2w_2t_child buffer.hpp "tail_.store(tail, std::memory_order_release)" relaxed race,assert
         --sched random --iterations 100000)
zap_bite(buffer_consume_tail buffer_consume buffer.hpp "if (pushed > 0) tail_.store(tail + pushed, std::memory_order_release);" relaxed assert --bound 1)
zap_bite(event_post event_notify event.hpp "state_.compare_exchange_weak(previous, value" relaxed race --bound 1)
zap_bite(wait_group_done wait_group wait_group.hpp "state_.compare_exchange_weak(state, next" relaxed race --bound 1)
# Not a bite: WAKING's clear (wait_group.hpp, fetch_and) weakened to relaxed
# survives, since the RMW continues the release sequence of the last done()'s
# CAS and the use-after-free check is on real order, not happens-before.

# ---- Parker, Lock, Mailbox, ObjectPool (model/parker_models.cpp) ----------
# Their bounded and random runs are in ZAP_MODEL_BOUNDED above.
# Seeded bugs (model/seed/): the naive "unpark is a no-op unless the owner
# is parked" loses an unpark that comes first; a park_for that resets the word
# on timeout drops a late token; a taker that checks and registers in two
# critical sections misses a value (the HQ1 assertion names it); a close()
# that wakes nobody strands its waiters; a timed taker that trusts the
# Parker's timeout drops a value handed to it meanwhile. Since the spin
# park() looks at its word twice before it parks (spin.hpp), so the timed
# seeds need context bound 2 (at bound 1: 10, 7,164 and 972 executions
# without the failure; at bound 2 found at 13, 78,641 and 24,765).
zap_seed(parker_unpark_only_parked parker-unpark-only-parked parker_unpark deadlock --bound 1)
zap_seed(parker_unpark_only_parked_ping_pong parker-unpark-only-parked parker_ping_pong deadlock --bound 1)
zap_seed(parker_timeout_drops_token parker-timeout-drops-token parker_timed assert --bound 2)
zap_seed(handoff_check_then_wait handoff-check-then-wait mailbox_fifo assert --bound 1)
# (mailbox_close: until the spin the stranded receiver was still linked
# when the deadlocked execution ended, and the destructor's ZAP_ASSERT
# reported it first; with park()'s spin Relacy reports the deadlock itself,
# at execution 1.)
zap_seed(handoff_close_no_wake handoff-close-no-wake mailbox_close deadlock --bound 1)
zap_seed(handoff_close_no_wake_pool handoff-close-no-wake object_pool_close deadlock --bound 1)
zap_seed(handoff_timeout_drops_value handoff-timeout-drops-value mailbox_close assert --bound 2)
zap_seed(handoff_timeout_drops_value_pool handoff-timeout-drops-value object_pool_close assert --bound 2)
# seal() (Go's close): a taker that looks at `closed` before the stored
# values loses what the receivers were to drain (expect_each_once).
zap_seed(seal_closed_first seal-closed-first mailbox_seal assert --bound 1)
# Bites: each ordering of parker.hpp and lock.hpp weakened to relaxed is a
# data race in its model (model/mutate reports them all; these stay in CI).
# The take and timeout ones need context bound 2 since the spin: park()
# first looks at the word twice (spin.hpp): at bound 1 the 8 executions
# explored have no race; at bound 2 it is found at execution 13, as in the
# ordering table's parker_*.bound runs.
zap_bite(parker_unpark_release parker_unpark parker.hpp "state_.exchange(notified, std::memory_order_release)" relaxed race --bound 1)
zap_bite(parker_take_acquire parker_unpark parker.hpp "compare_exchange_strong(expected, empty, std::memory_order_acquire" relaxed race --bound 2)
zap_bite(parker_timeout_acquire parker_timed parker.hpp "state_.exchange(empty, std::memory_order_acquire)" relaxed race --bound 2)
zap_bite(lock_unlock_release lock lock.hpp "state_.exchange(unlocked, std::memory_order_release)" relaxed race --bound 1)
zap_bite(lock_unlock_release_mailbox mailbox_close lock.hpp "state_.exchange(unlocked, std::memory_order_release)" relaxed race --bound 1)

# ---- helping waits (helping_wait_models.cpp, Protocol H of helping_wait.hpp) ----
# The models run random only, in ZAP_MODEL_RANDOM above (the waiting task's
# announcement is a spin: no context bound finishes).
# Each model first shown failing: the helper word's release wake (K2)
# weakened to relaxed lets a helper read a count older than the wake it
# already slept past: deadlock, in the models whose group a done() completes.
# Since helpers have a word each, K1 meets a sleeping helper through two seq_cst fences (the
# notifier's after its Sync CAS, the helper's after entering its word): each
# weakened alone deadlocks help_new_work (at execution 6 of the random
# scheduler). The helper's acquire enter no longer dies in any model: on the
# helping path the fence right after it acquires the wake it read; it stays
# for the isolated sleep, which has no fence and whose timeout would hide a
# missed wake from a model (analysis in model/mutation/analysis.json).
# (help_new_work's first deadlock with the wake weakened was at execution
# 112,005 before helpers had a word each; the wake's release is K2's, and help_new_work
# has no K2.)
foreach(name help_done_outside help_two_waiters)
  zap_bite(help_wake_${name} ${name} helper_word.hpp "word_.fetch_add(one_epoch, std::memory_order_release)" relaxed
           deadlock --sched random --iterations 300000)
endforeach()
zap_bite(help_k1_notifier_fence help_new_work helping_wait.hpp "seq_cst);  // K1, the notifier's side" acq_rel deadlock
         --sched random --iterations 300000)
zap_bite(help_k1_helper_fence help_new_work helping_wait.hpp "seq_cst);  // K1 and K3, the helper's side" acq_rel deadlock
         --sched random --iterations 300000)
# The seed's notify, which never wakes a helper (help-notify-no-wake.patch):
# the only worker sleeps in its wait while the task that completes it is queued.
# (help_two_waiters: not found in 100 K random runs, both helpers must be
# asleep before the outside thread schedules; its bites above fail it.)
zap_seed(help_notify_no_wake help-notify-no-wake help_new_work deadlock --sched random --iterations 300000)
# A7's re-run that leaves the failed spawn's notification to nobody
# (a7-rerun-no-k1.patch): the one worker left sleeps in its helping wait while
# the task that completes it is queued. Found by stress (helping_wait, chaos
# platform, 3 of 3 runs of seed 20240611 hung in the first round) before the
# model existed; the model deadlocks at execution 1.
zap_seed(a7_rerun_no_k1 a7-rerun-no-k1 help_spawn_fails deadlock --sched random --iterations 100000)
# K3 (helping_wait.hpp H7): shutdown() wakes every sleeping helper. Without
# it (shutdown-no-k3.patch, the pool before K3) help_shutdown's second helper
# sleeps through the shutdown beside the task only it can still run, and the
# first waiter's task spins for that task: a livelock (execution 31 of the
# random scheduler). Its fence weakened to acq_rel: the same (execution 6).
zap_seed(shutdown_no_k3 shutdown-no-k3 help_shutdown livelock --sched random --iterations 100000)
zap_bite(help_k3_fence help_shutdown helping_wait.hpp "seq_cst);  // K3, shutdown()'s side" acq_rel livelock
         --sched random --iterations 300000)

# ---- TaskGroup cancellation (task_group_models.cpp, Protocol C of cancellation.hpp) ----
# cancel_token and cancel_publishes start no worker: bounded and random runs, in
# ZAP_MODEL_BOUNDED; cancel_skips and cancel_wakes_waiter run the pool: random
# only, in ZAP_MODEL_RANDOM (as the pool models).
# Seeded bugs, each found: a maker of the stop_source that does not look for
# a cancel() made before its publication leaves a token unstopped (CS1); a
# queued child that does not look at the flag runs after the cancel (CS3); a
# wait() that resets the group before the round is over leaves it canceled
# (C5); a run() that counts a child before skipping it never lets the count
# reach zero. A count that never reaches zero is a deadlock where a worker
# waits (it sleeps for good) and a livelock where the model's main thread
# does: a wait from outside the pool naps and looks again for ever
# (outside_wait.hpp), which Relacy reports as a livelock.
zap_seed(cancel_maker_no_recheck cancel-maker-no-recheck cancel_token assert --bound 1)
zap_seed(cancel_no_skip cancel-no-skip cancel_skips assert --sched random --iterations 100000)
zap_seed(cancel_reset_first cancel-reset-first cancel_skips assert --sched random --iterations 100000)
zap_seed(cancel_run_counts_skipped cancel-run-counts-skipped cancel_skips deadlock,livelock --sched random --iterations 100000)
# The loops of a canceled group (C6-C7, CS5): a parallel_for that ignores its
# group runs its pieces after the cancel (cancel_loop's one-worker assertion).
zap_seed(cancel_loop_no_skip cancel-loop-no-skip cancel_loop assert --sched random --iterations 100000)
# ... and an upper half that a canceled loop drops without counting itself
# done leaves its splitter's frame waiting for ever (two workers: the half
# may be stolen, or helped by the frame that waits for it).
zap_seed(cancel_half_not_done cancel-half-not-done cancel_loop_two deadlock,livelock --sched random --iterations 100000)
# Bites: each ordering of cancellation.hpp weakened one step, where a model
# can show it (model/mutate reports them all). The maker's acquire half
# survives every model: it is there for CS4's holders of a token, and
# std::stop_source's own synchronization is invisible to Relacy
# (model/mutation/analysis.json).
zap_bite(cancel_acquire cancel_token cancellation.hpp "word_.fetch_or(canceled, std::memory_order_acq_rel)" release race --bound 2)
zap_bite(cancel_release cancel_publishes cancellation.hpp "word_.fetch_or(canceled, std::memory_order_acq_rel)" acquire race --bound 2)
zap_bite(is_canceled_acquire cancel_publishes cancellation.hpp "word_.load(std::memory_order_acquire) & canceled" relaxed race --bound 2)
zap_bite(token_load_acquire cancel_token cancellation.hpp "std::uint32_t seen = word_.load(std::memory_order_acquire)" relaxed race --bound 2)
zap_bite(make_source_release cancel_token cancellation.hpp "word_.fetch_or(source, std::memory_order_acq_rel)" acquire race --bound 2)

# ---- isolation (isolation_models.cpp, Protocol I of isolation.hpp) --------
# pop-back-any-region: the isolated wait's own-ring take (buffer.hpp step 7)
# ignores the slots' regions and takes the newest task, so it runs a foreign
# task inside the wait (IS1: find_in's assertion, or the model's).
# set-aside-dropped: the foreign tasks taken out of an overflow queue are not
# pushed back (IS2): one never runs and the main thread waits for ever.
# claim-passed-dropped: step 8 does not hand the tasks of other regions it
# claimed on the way to the caller (IS2): lost. pop-back-above-dropped: step 7
# takes back the tasks above the region's one and does not hand them over:
# lost. Both bite the ring-level models (each task exactly once).
zap_seed(isolation_pop_back_any_region pop-back-any-region isolation_one_worker assert
         --sched random --iterations 100000)
zap_seed(isolation_set_aside_dropped set-aside-dropped isolation_one_worker deadlock
         --sched random --iterations 100000)
zap_seed(isolation_pop_back_any_region_ring pop-back-any-region isolation_pop_back_past assert --bound 2)
zap_seed(isolation_claim_passed_dropped claim-passed-dropped isolation_claim_past assert --bound 2)
zap_seed(isolation_pop_back_above_dropped pop-back-above-dropped isolation_pop_back_past assert --bound 2)

# ---- timed waits (wait_for_models.cpp, step 5 of wait_group.hpp) ----------
# wait_for_outside runs bounded and random (ZAP_MODEL_BOUNDED), the two pool
# models random only (ZAP_MODEL_RANDOM). In wait_for_helping 54,653 of the
# 100,000 random executions timed out before the last done() (counted once,
# by hand), the rest were woken by it. Seeded bugs, each found:
# waitfor-no-waking-wait: T3b returns true once the count is zero, without
# waiting for WAKING: the task frees the group under the done() still
# waking it (W1). waitfor-no-disarm: a timeout leaves HELPERS and the slot
# set: the last done(), after the pool is gone, wakes the freed worker's
# helper word (W2). waitfor-false-on-zero: the deadline decides, whatever the
# count: HELPERS cleared blindly and false returned after the last done()
# swapped HELPERS, which then finds the slot empty (HW3's assertion).
zap_seed(waitfor_no_waking_wait waitfor-no-waking-wait wait_for_helping freed --sched random --iterations 100000)
zap_seed(waitfor_no_disarm waitfor-no-disarm wait_for_pool_gone freed --sched random --iterations 100000)
zap_seed(waitfor_false_on_zero waitfor-false-on-zero wait_for_helping assert --sched random --iterations 100000)
# Bites: the timed-wait models also fail on the orderings they lean on: the
# outside wait's acquire of the count (the work read after a true return is a
# race), the release half of done()'s CAS (the same), and K2's release wake
# (after a timeout the worker's untimed wait() sleeps past the wake: deadlock).
zap_bite(wait_for_outside_acquire wait_for_outside wait_group.hpp
         "const std::uint32_t state = state_.load(std::memory_order_acquire);" relaxed race --bound 2)
zap_bite(wait_for_done_release wait_for_outside wait_group.hpp "state_.compare_exchange_weak(state, next" acquire race
         --bound 2)
zap_bite(help_wake_wait_for_helping wait_for_helping helper_word.hpp
         "word_.fetch_add(one_epoch, std::memory_order_release)" relaxed deadlock --sched random --iterations 100000)

# ---- A8's spin (pool_core.hpp): a worker out of work watches
# Sync holding the waking role before it sleeps (model_config: 2 rounds).
# spin-keeps-role: when the rounds run out the worker drops the role without
# giving it back (S2 broken): the state stays waking with no waker, every
# later notify only sets `notified`, and a task waits while every worker
# sleeps: deadlock. Found in sync_1w_2t_serial, where the second task comes
# after the first round trip; not in 100,000 random runs of sync_1w_2t or
# sync_2w_2t, whose tasks both come before the worker can run out of work
# (the spin would have to run out between the two schedule() calls).
zap_seed(spin_keeps_role spin-keeps-role sync_1w_2t_serial deadlock --sched random --iterations 100000)

# ---- seeds a unit test finds: tests/test_spin.cpp's schemata twin with the
# seed switched on (label model-teeth), passing only when the test fails
# with the message that names the broken rule. A8 has two such rules that
# no model states (a Relacy thread's spin hint is a yield, so "two spin at
# once" is no state of the model):
# spin-without-role: a worker that finds another waking spins anyway (S1
# broken): the four workers warm() starts spin at once.
# spin-zero-means-default: Config::spin_rounds = 0 is read as the default
# bound, so a worker spins where the user turned the spin off.
function(zap_unit_seed seed test message)
  string(REPLACE "-" "_" name ${seed})
  add_test(NAME model.seed.${name} COMMAND test_spin_schemata --gtest_filter=Spin.${test})
  set_tests_properties(model.seed.${name} PROPERTIES LABELS model-teeth TIMEOUT 300
                       ENVIRONMENT "ZAP_MUTANT=seed:${seed}" PASS_REGULAR_EXPRESSION "${message}")
endfunction()
zap_unit_seed(spin-without-role OnlyTheWakingWorkerSpins "two workers spun at once")
zap_unit_seed(spin-zero-means-default ZeroRoundsTurnsTheWorkersSpinOff "a worker spun with Config::spin_rounds = 0")

# ---- a schedule sender's operation state (execution_models.cpp, Protocol X
# of schedule_operation.hpp) ----
# The models run the pool: random only, in ZAP_MODEL_RANDOM above. Seeded
# bugs, each found: stop-after-push completes with set_stopped() inside
# start() when it sees a stop request after its push - "earlier" than the
# worker - while the task is still queued: the pool then touches the freed
# operation state (found at execution 3 of both race models);
# start-ignores-stop pushes even when stop was requested before start(), so
# the completion comes from the worker, not at once (X1).
zap_seed(stop_after_push stop-after-push schedule_stop_race freed --sched random --iterations 100000)
zap_seed(stop_after_push_from_worker stop-after-push schedule_from_worker freed --sched random --iterations 100000)
zap_seed(start_ignores_stop start-ignores-stop schedule_stop_first assert --sched random --iterations 100000)

# ---- Lazy's join and sync_wait (lazy_models.cpp, CO5-CO10 of lazy.hpp) ----
# The models run the pool: random only, in ZAP_MODEL_RANDOM above. Bites: the
# join's acq_rel weakened to either half is a data race on a child's result
# (the parent reads it after the last arrival): lazy_when_all_inline finds
# each at its first execution (the inline child's write, published by the
# parent's own arrival, read by the parent resumed on the worker), and
# lazy_when_all at execution 2,098 (measured with ZAP_MUTATE by hand).
zap_bite(lazy_join_release lazy_when_all_inline lazy.hpp "left_.fetch_sub(1, std::memory_order_acq_rel)" release race
         --sched random --iterations 100000)
zap_bite(lazy_join_acquire lazy_when_all_inline lazy.hpp "left_.fetch_sub(1, std::memory_order_acq_rel)" acquire race
         --sched random --iterations 100000)
