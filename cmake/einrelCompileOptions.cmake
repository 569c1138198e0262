# Compile options for einrel's own targets (never exported: consumers choose their own flags).
include_guard(GLOBAL)

add_library(einrel_build_options INTERFACE)
target_compile_options(einrel_build_options INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra>
  $<$<AND:$<BOOL:${EINREL_WARNINGS_AS_ERRORS}>,$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>>:-Werror>)
if(EINREL_ENABLE_SANITIZERS)
  target_compile_options(einrel_build_options INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(einrel_build_options INTERFACE -fsanitize=address,undefined)
endif()
if(EINREL_ENABLE_FUZZING)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "einrel: EINREL_ENABLE_FUZZING needs clang (libFuzzer), e.g. -DCMAKE_CXX_COMPILER=clang++-14; "
                        "this build uses ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}")
  endif()
  # Coverage feedback for libFuzzer from all of einrel's code; only the fuzz targets link its main.
  target_compile_options(einrel_build_options INTERFACE -fsanitize=fuzzer-no-link)
endif()

# Run-time options of sanitized tests: every test of the calling directory so far gets them (ctest runs
# them with no further set-up); each test directory calls this last. Leaks are checked; cmake/lsan.supp lists the MPI and HDF5 allocations that stay
# reachable only through their libraries' own state. HWLOC_COMPONENTS=-pci: MPICH's hwloc loads its PCI
# plugin, whose libpciaccess state becomes unreachable when hwloc unloads the plugin in MPI_Finalize; a
# suppression cannot name a library that is gone by the time leaks are checked, so the plugin stays out
# (einrel needs no PCI topology).
function(einrel_sanitizer_test_environment)
  if(NOT EINREL_ENABLE_SANITIZERS)
    return()
  endif()
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
      "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
      "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/cmake/lsan.supp:print_suppressions=0"
      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1" "HWLOC_COMPONENTS=-pci")
  endforeach()
endfunction()

# einrel_module(NAME [HEADER_ONLY] SOURCES ... HEADERS ... [SUBFOLDERS ...] DEPENDS ...): one library per module
# folder, exported as einrel::<NAME>. A module's public headers (what a library user includes: einrel.hpp and
# the headers it names) lie in src/ and are installed at the top of include/; its internal ones lie in
# src/detail/ and are installed under include/einrel/detail/ (as ArborX's details/ and Cabana's impl/). Both
# folders are on the include path, so headers include each other by name alone. SUBFOLDERS are folders of
# src/detail/ that hold an internal part of the module (namespace einrel::<module>::<subfolder>).
function(einrel_module name)
  cmake_parse_arguments(ARG "HEADER_ONLY" "" "SOURCES;HEADERS;SUBFOLDERS;DEPENDS" ${ARGN})
  set(target einrel_${name})
  if(ARG_HEADER_ONLY)
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  else()
    add_library(${target} ${ARG_SOURCES})
    set(scope PUBLIC)
    target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:einrel_build_options>)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  add_library(einrel::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/src>
                                                $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                                                $<INSTALL_INTERFACE:${EINREL_INSTALL_DETAIL_INCLUDEDIR}>)
  if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/src/detail)
    target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/src/detail>)
  endif()
  foreach(folder IN LISTS ARG_SUBFOLDERS)
    target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/src/detail/${folder}>)
  endforeach()
  target_link_libraries(${target} ${scope} ${ARG_DEPENDS})
  install(TARGETS ${target} EXPORT einrelTargets)
  foreach(header IN LISTS ARG_HEADERS)
    if(header MATCHES "(^|/)detail/")
      install(FILES ${header} DESTINATION ${EINREL_INSTALL_DETAIL_INCLUDEDIR})
    else()
      install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
      set_property(GLOBAL APPEND PROPERTY EINREL_PUBLIC_HEADERS ${CMAKE_CURRENT_SOURCE_DIR}/${header})
    endif()
  endforeach()
endfunction()
