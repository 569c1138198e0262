# A test that fails when any C++ source differs from .clang-format (fix with: cmake --build BUILD --target format).
find_program(EINREL_CLANG_FORMAT NAMES clang-format clang-format-14 clang-format-15 clang-format-16)
file(GLOB_RECURSE EINREL_FORMATTED_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/core/*.[ch]pp ${PROJECT_SOURCE_DIR}/kernels/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/partition/*.[ch]pp ${PROJECT_SOURCE_DIR}/redistribute/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/comm/*.[ch]pp ${PROJECT_SOURCE_DIR}/engine/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/drivers/*.[ch]pp ${PROJECT_SOURCE_DIR}/unit_tests/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/system_tests/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/perf_tests/*.[ch]pp ${PROJECT_SOURCE_DIR}/fuzz/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/engine/*.h ${PROJECT_SOURCE_DIR}/drivers/*.c)
if(EINREL_CLANG_FORMAT)
  add_test(NAME Format_clang_format
           COMMAND ${EINREL_CLANG_FORMAT} --dry-run --Werror --style=file ${EINREL_FORMATTED_SOURCES})
  add_custom_target(format COMMAND ${EINREL_CLANG_FORMAT} -i --style=file ${EINREL_FORMATTED_SOURCES}
                    COMMENT "clang-format on einrel sources")
else()
  message(STATUS "einrel: clang-format not found; the format test is skipped")
endif()
