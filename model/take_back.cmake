# SPDX-License-Identifier: MIT
# The take-back models (model/take_back_models.cpp; included from
# model/CMakeLists.txt): the ring's steps 5-6 and parallel_invoke's J1-J7, in
# their own binary with a ring of four slots so a steal can take two tasks.

function(zap_take_back_binary target include_dir)
  zap_model_executable(${target} ${include_dir} 4 ${CMAKE_CURRENT_SOURCE_DIR}/take_back_models.cpp ${ARGN})
endfunction()

set(TB zap_model_take_back)
zap_take_back_binary(${TB} ${PROJECT_SOURCE_DIR}/src)
add_dependencies(zap_models ${TB})

# name bound random-iterations
set(ZAP_TAKE_BACK_BOUNDED
  "take_back_nested 3 200000"
  "take_back_last 3 200000"
  "take_back_after_steal 3 200000"
  "pop_back_drain 3 200000"
  "fork_join 3 200000")
foreach(spec ${ZAP_TAKE_BACK_BOUNDED})
  separate_arguments(spec)
  list(GET spec 0 name)
  list(GET spec 1 bound)
  list(GET spec 2 iterations)
  zap_model_test(NAME model.${name}.bound BINARY ${TB} ARGS ${name} --bound ${bound})
  zap_model_test(NAME model.${name}.random BINARY ${TB} ARGS ${name} --sched random --iterations ${iterations})
endforeach()
zap_model_test(NAME model.pool_parallel_invoke.random BINARY ${TB}
               ARGS pool_parallel_invoke --sched random --iterations 100000)
# The fork made from outside the pool, the caller searching for it (outside_wait.hpp).
zap_model_test(NAME model.outside_parallel_invoke.random BINARY ${TB}
               ARGS outside_parallel_invoke --sched random --iterations 100000)
# A task of another thread that the caller's search put back (OC4b, OI2).
zap_model_test(NAME model.outside_put_back.random BINARY ${TB}
               ARGS outside_put_back --sched random --iterations 100000)

# ---- seeded bugs: each model fails on one --------------------------------
# steal-half-one-cas: a thief claims half of what it saw with one CAS (the
# seed's steal), breaking RB4; take-back-no-cas: the owner takes the last
# task with a plain store instead of 5f's CAS. Both run on the schemata twin
# (mutation/schemata.cmake).
zap_model_test(NAME model.seed.take_back_steal_half_one_cas BINARY ${TB}_schemata SEED steal-half-one-cas
               ARGS take_back_nested --bound 3 --expect race LABEL model-teeth)
zap_model_test(NAME model.seed.take_back_no_cas BINARY ${TB}_schemata SEED take-back-no-cas
               ARGS take_back_last --bound 2 --expect race LABEL model-teeth)
zap_model_test(NAME model.seed.take_back_no_cas_fork_join BINARY ${TB}_schemata SEED take-back-no-cas
               ARGS fork_join --bound 2 --expect race LABEL model-teeth)
zap_model_test(NAME model.seed.take_back_no_cas_pop_back BINARY ${TB}_schemata SEED take-back-no-cas
               ARGS pop_back_drain --bound 2 --expect race LABEL model-teeth)

# ---- bites: one weakened ordering per claim --------------------------------
# The four seq_cst operations of step 5's cycle that Relacy can show (the
# fifth, the thief's head load, is argued in model/mutation/analysis.json).
zap_bite_in(${TB} steal_cas_seq_cst take_back_nested buffer.hpp
                   "victim.head_.compare_exchange_strong(expected, victim_head + 1" acq_rel race --bound 3)
zap_bite_in(${TB} steal_tail_seq_cst take_back_after_steal buffer.hpp
                   "victim.tail_.load(std::memory_order_seq_cst)" acquire race --bound 3)
zap_bite_in(${TB} take_back_store_seq_cst take_back_after_steal buffer.hpp
                   "tail_.store(newest, std::memory_order_seq_cst)" release race --bound 3)
zap_bite_in(${TB} take_back_load_seq_cst take_back_after_steal buffer.hpp
                   "head = head_.load(std::memory_order_seq_cst)" acquire race --bound 3)
# J5/J6: each half of each acq_rel.
zap_bite_in(${TB} fork_join_cas_acquire fork_join parallel_invoke.hpp
                   "state_.compare_exchange_strong(expected, waiting" release race --bound 3)
zap_bite_in(${TB} fork_join_cas_release fork_join parallel_invoke.hpp
                   "state_.compare_exchange_strong(expected, waiting" acquire assert --bound 3)
zap_bite_in(${TB} fork_join_exchange_acquire fork_join parallel_invoke.hpp
                   "self.state_.exchange(finished" release assert --bound 3)
zap_bite_in(${TB} fork_join_exchange_release fork_join parallel_invoke.hpp
                   "self.state_.exchange(finished" acquire race --bound 3)
