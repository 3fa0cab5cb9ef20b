# SPDX-License-Identifier: MIT
# std::execution (src/zap/execution.hpp) needs stdexec (NVIDIA/stdexec,
# header-only, not in Debian): ZAP_STDEXEC_DIR names its include directory
# ($STDEXEC_INCLUDE, else /opt/stdexec/include). The programs that need it
# are built where it is found and compiles with this compiler (g++ 12 does,
# clang 14 does not; cross builds are not tried); elsewhere each of their
# tests exits 77, which ctest reports SKIPPED - never a pass. stdexec
# includes <execution>, whose libstdc++ parallel algorithms need TBB's
# library when TBB's headers are installed (libtbb-dev): linked when found.
# Included by tests/ and examples/; the compile check runs once (cached).
if(DEFINED ENV{STDEXEC_INCLUDE})
  set(zap_stdexec_default "$ENV{STDEXEC_INCLUDE}")
else()
  set(zap_stdexec_default /opt/stdexec/include)
endif()
set(ZAP_STDEXEC_DIR "${zap_stdexec_default}" CACHE PATH "stdexec's include directory (NVIDIA/stdexec)")
set(ZAP_STDEXEC_SKIP "")
set(ZAP_STDEXEC_LIBS Threads::Threads)
if(CMAKE_CROSSCOMPILING)
  set(ZAP_STDEXEC_SKIP "a cross build (stdexec is tried natively only)")
elseif(NOT EXISTS "${ZAP_STDEXEC_DIR}/stdexec/execution.hpp")
  set(ZAP_STDEXEC_SKIP "stdexec not found (ZAP_STDEXEC_DIR=${ZAP_STDEXEC_DIR})")
else()
  include(CheckCXXSourceCompiles)
  find_package(TBB CONFIG QUIET)
  if(TBB_FOUND)
    list(APPEND ZAP_STDEXEC_LIBS TBB::tbb)
  endif()
  set(CMAKE_REQUIRED_INCLUDES "${ZAP_STDEXEC_DIR}")
  set(CMAKE_REQUIRED_FLAGS "-std=c++20")
  set(CMAKE_REQUIRED_LIBRARIES ${ZAP_STDEXEC_LIBS})
  check_cxx_source_compiles("#include <stdexec/execution.hpp>
    int main() { return stdexec::sync_wait(stdexec::just(0)).has_value() ? 0 : 1; }" ZAP_STDEXEC_COMPILES)
  unset(CMAKE_REQUIRED_INCLUDES)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LIBRARIES)
  if(NOT ZAP_STDEXEC_COMPILES)
    set(ZAP_STDEXEC_SKIP "stdexec does not compile with ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  endif()
endif()

# zap_stdexec_test(NAME SOURCE [GTEST] [ARGS args...] [PASS regex]): test
# NAME (label unit) runs the program built from SOURCE with stdexec (and
# GoogleTest, with GTEST), or exits 77 naming why it cannot be built.
function(zap_stdexec_test name source)
  cmake_parse_arguments(T "GTEST" "PASS" "ARGS" ${ARGN})
  if(ZAP_STDEXEC_SKIP STREQUAL "")
    get_filename_component(target ${source} NAME_WE)
    set(target zap_${target})
    if(NOT TARGET ${target})
      add_executable(${target} ${source})
      target_include_directories(${target} SYSTEM PRIVATE ${ZAP_STDEXEC_DIR})
      target_link_libraries(${target} PRIVATE zap::zap ${ZAP_STDEXEC_LIBS})
      if(T_GTEST)
        target_link_libraries(${target} PRIVATE gtest gtest_main)
      endif()
      target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
      if(TARGET zap_unit_tests)
        add_dependencies(zap_unit_tests ${target})
      endif()
    endif()
    add_test(NAME ${name} COMMAND ${target} ${T_ARGS})
    if(T_PASS)
      set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${T_PASS}")
    endif()
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'SKIPPED: ${ZAP_STDEXEC_SKIP}'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77)
endfunction()
