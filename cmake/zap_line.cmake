# SPDX-License-Identifier: MIT
# cmake/zap_line.cmake - zap_line(), shared by the Relacy model (model/) and
# the GenMC model (model/genmc/): their tests name call sites by line, found
# by text at configure time, so ZAP_MUTATE entries follow edits of src/.

# The number of the line of FILE that contains TEXT (the first such line, or
# the ARGV3-th): ZAP_MUTATE call sites follow edits of src/.
function(zap_line out file text)
  set(nth 1)
  if(ARGC GREATER 3)
    set(nth ${ARGV3})
  endif()
  file(READ ${file} content)
  set(offset 0)
  foreach(i RANGE 1 ${nth})
    string(SUBSTRING "${content}" ${offset} -1 rest)
    string(FIND "${rest}" "${text}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "zap model: no line containing '${text}' (occurrence ${nth}) in ${file}")
    endif()
    math(EXPR found "${offset} + ${at}")
    math(EXPR offset "${found} + 1")
  endforeach()
  string(SUBSTRING "${content}" 0 ${found} before)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines n)
  math(EXPR n "${n} + 1")
  set(${out} ${n} PARENT_SCOPE)
endfunction()
