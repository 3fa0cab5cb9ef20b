# SPDX-License-Identifier: MIT
# The schemata build (included from model/CMakeLists.txt): one generated copy
# of src/ in the build tree, ${ZAP_SCHEMATA_DIR}/src, where every logic mutant
# of model/mutate-logic and every seed behaviour of model/seed/*.patch sits
# behind a run-time switch: ZAP_MUTANT=ID in the environment turns one on
# (m + 8 hex digits for a logic mutant, seed:NAME for a seed); unset, the copy
# behaves as src/. Every line keeps its number in src/ (#line after a seed's
# patched text), so ZAP_MUTATE's PATH:LINE ordering overrides match it too,
# and a Relacy history names the lines of src/. src/ itself is not touched.
#
# Each check a mutant can meet is compiled once against the copy, its
# "schemata twin": the three Relacy model binaries the seeds' ctests run on
# and tests/test_spin.cpp (two seeds a unit test finds) always; the twin of
# model/mutation/scenarios.cpp, of every unit test and of the stress suite
# only on demand, unless ZAP_MUTANT_CHECKS is on: model_logic_mutants_ci
# builds the few its sample needs (it samples among every mutant the table
# calls killed), and model/mutate-logic --run builds target
# zap_mutant_checks, every twin. Built by default, all of them were
# compiled by the test command's build, though the CI check's sample of
# eight mutants needs a few. twins.json tells model/mutate-logic which twin
# stands for which program.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
option(ZAP_MUTANT_CHECKS "Build every check's schemata twin (unit, stress) by default" OFF)
set(zap_mutant_only EXCLUDE_FROM_ALL)
if(ZAP_MUTANT_CHECKS)
  set(zap_mutant_only "")
endif()

set(ZAP_SCHEMATA_DIR ${CMAKE_BINARY_DIR}/schemata)
file(GLOB zap_schemata_inputs ${PROJECT_SOURCE_DIR}/src/zap/*.hpp ${PROJECT_SOURCE_DIR}/model/seed/*.patch
     ${PROJECT_SOURCE_DIR}/model/mutation/*.py)
add_custom_command(
  OUTPUT ${ZAP_SCHEMATA_DIR}/stamp
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/model/mutate-logic --schemata ${ZAP_SCHEMATA_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${ZAP_SCHEMATA_DIR}/stamp
  DEPENDS ${zap_schemata_inputs} ${PROJECT_SOURCE_DIR}/model/mutate-logic
  COMMENT "zap: the schemata tree (every logic mutant and seed behind ZAP_MUTANT)")
add_custom_target(zap_schemata_tree DEPENDS ${ZAP_SCHEMATA_DIR}/stamp)
add_custom_target(zap_mutant_checks)

# zap_schemata_model(TARGET RING SOURCES...): a Relacy model binary on the copy.
function(zap_schemata_model target ring)
  zap_model_executable(${target} ${ZAP_SCHEMATA_DIR}/src ${ring} ${ARGN})
  add_dependencies(${target} zap_schemata_tree)
  add_dependencies(zap_mutant_checks ${target})
endfunction()

# zap_schemata_program(TARGET SOURCE [EXCLUDE_FROM_ALL] [GTEST]): a program of
# tests/ or stress/ on the copy. The copy comes first on the include path
# (zap::zap would put src/ first) and as a system directory, so that the
# programs' -Werror does not judge the generated switches.
function(zap_schemata_program target source)
  cmake_parse_arguments(P "EXCLUDE_FROM_ALL;GTEST" "" "" ${ARGN})
  if(P_EXCLUDE_FROM_ALL)
    add_executable(${target} EXCLUDE_FROM_ALL ${source})
  else()
    add_executable(${target} ${source})
  endif()
  add_dependencies(${target} zap_schemata_tree)
  add_dependencies(zap_mutant_checks ${target})
  target_include_directories(${target} SYSTEM BEFORE PRIVATE ${ZAP_SCHEMATA_DIR}/src)
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_link_libraries(${target} PRIVATE Threads::Threads $<$<PLATFORM_ID:Windows>:synchronization>)  # as zap's
  if(ZAP_PLATFORM STREQUAL "portable")
    target_compile_definitions(${target} PRIVATE ZAP_PORTABLE_PLATFORM)
  endif()
  if(P_GTEST)
    target_link_libraries(${target} PRIVATE gtest gtest_main)
  endif()
endfunction()

set(ZAP_SCHEMATA_TWINS "")
macro(zap_schemata_twin program target)
  string(APPEND ZAP_SCHEMATA_TWINS "  \"${program}\": \"$<TARGET_FILE:${target}>\",\n")
endmacro()

# The Relacy models' twins (not in a cross build, which has no models).
if(COMMAND zap_model_executable)
  zap_schemata_model(zap_model_schemata 2 ${ZAP_MODEL_SOURCES})
  zap_schemata_twin(zap_model zap_model_schemata)
  zap_schemata_model(zap_model_take_back_schemata 4 ${CMAKE_CURRENT_SOURCE_DIR}/take_back_models.cpp)
  zap_schemata_twin(zap_model_take_back zap_model_take_back_schemata)
  zap_schemata_model(zap_model_work_conserving_schemata 4 ${CMAKE_CURRENT_SOURCE_DIR}/work_conserving_models.cpp)
  zap_schemata_twin(zap_model_work_conserving zap_model_work_conserving_schemata)
  zap_schemata_model(zap_model_mutation_schemata 4 ${CMAKE_CURRENT_SOURCE_DIR}/mutation/scenarios.cpp)
  if(NOT ZAP_MUTANT_CHECKS)
    set_target_properties(zap_model_mutation_schemata PROPERTIES EXCLUDE_FROM_ALL TRUE)  # no seed runs on it
  endif()
  zap_schemata_twin(zap_model_mutation zap_model_mutation_schemata)
endif()

# The unit tests (tests/ is configured before model/) and the stress suite.
get_directory_property(zap_unit_tests DIRECTORY ${PROJECT_SOURCE_DIR}/tests DEFINITION ZAP_UNIT_TESTS)
# As the unit tests themselves, the twins share one precompiled header of
# GoogleTest's and zap's headers (the copy's): test_spin_schemata's, the twin
# built in every configuration.
zap_schemata_program(test_spin_schemata ${PROJECT_SOURCE_DIR}/tests/test_spin.cpp GTEST)
target_precompile_headers(test_spin_schemata PRIVATE <gtest/gtest.h> <zap/zap.hpp>)
foreach(name ${zap_unit_tests})
  if(NOT name STREQUAL "spin")
    zap_schemata_program(test_${name}_schemata ${PROJECT_SOURCE_DIR}/tests/test_${name}.cpp ${zap_mutant_only} GTEST)
    if(NOT name STREQUAL "available_parallelism")  # libstdc++'s assertions first, as its unit test
      target_precompile_headers(test_${name}_schemata REUSE_FROM test_spin_schemata)
    endif()
  endif()
  zap_schemata_twin(test_${name} test_${name}_schemata)
endforeach()
if(TARGET test_contract_violations_release)
  zap_schemata_program(test_contract_violations_release_schemata ${PROJECT_SOURCE_DIR}/tests/test_contract_violations.cpp
                       ${zap_mutant_only} GTEST)
  target_compile_definitions(test_contract_violations_release_schemata PRIVATE NDEBUG)
  zap_schemata_twin(test_contract_violations_release test_contract_violations_release_schemata)
endif()
# The std::execution test (tests/test_execution.cpp, zap_test_execution) is
# built only where stdexec compiles (cmake/zap_stdexec.cmake); its twin is
# the one check that runs execution.hpp, and the one unit test that runs
# schedule_operation.hpp through a scheduler.
include(${PROJECT_SOURCE_DIR}/cmake/zap_stdexec.cmake)
if(ZAP_STDEXEC_SKIP STREQUAL "")
  zap_schemata_program(test_execution_schemata ${PROJECT_SOURCE_DIR}/tests/test_execution.cpp ${zap_mutant_only} GTEST)
  target_include_directories(test_execution_schemata SYSTEM PRIVATE ${ZAP_STDEXEC_DIR})
  target_link_libraries(test_execution_schemata PRIVATE ${ZAP_STDEXEC_LIBS})
  zap_schemata_twin(zap_test_execution test_execution_schemata)
endif()
if(NOT CMAKE_CROSSCOMPILING)  # a cross build has no stress suite
  zap_schemata_program(zap_stress_schemata ${PROJECT_SOURCE_DIR}/stress/main.cpp ${zap_mutant_only})
  zap_schemata_twin(zap_stress zap_stress_schemata)
endif()
file(GENERATE OUTPUT ${ZAP_SCHEMATA_DIR}/twins.json CONTENT "{\n${ZAP_SCHEMATA_TWINS}  \"\": \"\"\n}\n")
