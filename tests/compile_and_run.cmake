# SPDX-License-Identifier: MIT
# cmake -DCXX=... -DFLAGS=... -DSOURCE=... -DOUT=... -P compile_and_run.cmake:
# builds SOURCE with another compiler than the build's own (FLAGS is a
# ;-list, libraries included), then runs it; fails when either step does.
# For checks that need a compiler or an optimization level of their own
# (unit.lazy.clang_o2).
separate_arguments(flags NATIVE_COMMAND "${FLAGS}")
execute_process(COMMAND ${CXX} ${SOURCE} -o ${OUT} ${flags} RESULT_VARIABLE built)
if(NOT built EQUAL 0)
  message(FATAL_ERROR "compile failed: ${CXX} ${SOURCE}")
endif()
execute_process(COMMAND ${OUT} RESULT_VARIABLE ran)
if(NOT ran EQUAL 0)
  message(FATAL_ERROR "${OUT} failed (${ran})")
endif()
