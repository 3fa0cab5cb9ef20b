# SPDX-License-Identifier: MIT
# The work-conservation models (model/work_conserving_models.cpp; included
# from model/CMakeLists.txt): pool_core.hpp A4 and P6, in their own binary
# with a ring of four slots, so that three members fit in one ring and a
# thief takes half of two (with two slots the third overflows to a queue,
# which a consume takes whole).

function(zap_work_conserving_binary target include_dir)
  zap_model_executable(${target} ${include_dir} 4 ${CMAKE_CURRENT_SOURCE_DIR}/work_conserving_models.cpp ${ARGN})
endfunction()

set(WC zap_model_work_conserving)
zap_work_conserving_binary(${WC} ${PROJECT_SOURCE_DIR}/src)
add_dependencies(zap_models ${WC})

# Random only: the members' futex waits and the pool's retry loops keep a
# context bound from finishing.
set(ZAP_WORK_CONSERVING_MODELS rendezvous_3w_task rendezvous_3w_batch rendezvous_3w_outside rendezvous_2w_held
  rendezvous_2w_lone rendezvous_2w_after_idle)
foreach(name ${ZAP_WORK_CONSERVING_MODELS})
  zap_model_test(NAME model.${name}.random BINARY ${WC} ARGS ${name} --sched random --iterations 100000)
  if(ZAP_MODEL_DEEP)
    zap_model_test(NAME model-deep.${name}.random BINARY ${WC} ARGS ${name} --sched random --iterations 3000000
                   LABEL model-deep)
  endif()
endforeach()

# ---- seeded bugs: each model fails on one --------------------------------
# no-work-look: the rule before the work-conservation look (only the waker announced work
# left, and only when its search moved extra tasks): a member waits in a
# ring or queue behind members that block, while a worker sleeps or is
# never spawned: deadlock. held-queue-unreported: the look stays, but a
# consumer does not report what it left in a queue it held
# (release_consumer's answer): the member pushed meanwhile is stranded.
# All three run on the schemata twin (mutation/schemata.cmake).
foreach(name rendezvous_3w_task rendezvous_3w_batch rendezvous_3w_outside)
  zap_model_test(NAME model.seed.no_work_look_${name} BINARY ${WC}_schemata SEED no-work-look
                 ARGS ${name} --sched random --iterations 100000 --expect deadlock LABEL model-teeth)
endforeach()
# (Its first deadlock: within 300,000 random executions before helpers had a word each; at
# execution 385,658 since the ring writes each slot's region, one more atomic
# step per slot that shifts the random schedules.)
zap_model_test(NAME model.seed.held_queue_unreported BINARY ${WC}_schemata SEED held-queue-unreported
               ARGS rendezvous_2w_held --sched random --iterations 1000000 --expect deadlock LABEL model-teeth)
# steal-refuses-lone: a thief that finds a ring holding one task gives up at
# once instead of leaving it alone for a while and then claiming it (buffer.hpp
# step 3a, DL1): the member forked into the running driver's ring is never
# stolen, the other worker sleeps, the driver waits for it: deadlock.
zap_model_test(NAME model.seed.steal_refuses_lone BINARY ${WC}_schemata SEED steal-refuses-lone
               ARGS rendezvous_2w_lone --sched random --iterations 100000 --expect deadlock LABEL model-teeth)
