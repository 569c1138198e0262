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

# einrel_module(NAME [HEADER_ONLY] SOURCES ... HEADERS ... DEPENDS ...): one library per module folder,
# exported as einrel::<NAME>, headers installed flat under include/einrel.
function(einrel_module name)
  cmake_parse_arguments(ARG "HEADER_ONLY" "" "SOURCES;HEADERS;DEPENDS" ${ARGN})
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
                                                $<INSTALL_INTERFACE:${EINREL_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} ${scope} ${ARG_DEPENDS})
  install(TARGETS ${target} EXPORT einrelTargets)
  install(FILES ${ARG_HEADERS} DESTINATION ${EINREL_INSTALL_INCLUDEDIR})
endfunction()
