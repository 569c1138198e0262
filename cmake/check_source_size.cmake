# cmake -DLIMIT=N -DROOT=DIR -DSOURCES="a;b;..." -P check_source_size.cmake
cmake_minimum_required(VERSION 3.20)  # cmake_path
# Fails naming every source of more than LIMIT lines (cmake/einrelSourceSizeCheck.cmake).
set(over "")
foreach(source IN LISTS SOURCES)
  file(READ "${source}" text)
  string(REGEX REPLACE "[^\n]" "" newlines "${text}")
  string(LENGTH "${newlines}" count)
  if(count GREATER LIMIT)
    cmake_path(RELATIVE_PATH source BASE_DIRECTORY "${ROOT}" OUTPUT_VARIABLE name)
    string(APPEND over "\n  ${name}: ${count} lines")
  endif()
endforeach()
list(LENGTH SOURCES checked)
if(over)
  message(FATAL_ERROR "library sources over ${LIMIT} lines (split each by idea):${over}")
endif()
message(STATUS "${checked} library sources, none over ${LIMIT} lines")
