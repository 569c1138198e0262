# A test that fails when a library source passes EINREL_MAX_SOURCE_LINES lines (CONTRIBUTING.md, "Small
# files"): a file that grows past it is split by idea in the commit that makes it grow. Tests, examples,
# benchmarks and fuzz targets are not library sources.
set(EINREL_MAX_SOURCE_LINES 520)
file(GLOB_RECURSE EINREL_LIBRARY_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/core/*.[ch]pp ${PROJECT_SOURCE_DIR}/partition/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/comm/*.[ch]pp ${PROJECT_SOURCE_DIR}/kernels/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/redistribute/*.[ch]pp ${PROJECT_SOURCE_DIR}/engine/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/engine/*.h ${PROJECT_SOURCE_DIR}/engine/*.f90 ${PROJECT_SOURCE_DIR}/drivers/*.[ch]pp
     ${PROJECT_SOURCE_DIR}/drivers/*.c)
list(FILTER EINREL_LIBRARY_SOURCES EXCLUDE REGEX "/drivers/examples/")
add_test(NAME Lint_source_size
         COMMAND ${CMAKE_COMMAND} -DLIMIT=${EINREL_MAX_SOURCE_LINES} -DROOT=${PROJECT_SOURCE_DIR}
                 "-DSOURCES=${EINREL_LIBRARY_SOURCES}" -P ${PROJECT_SOURCE_DIR}/cmake/check_source_size.cmake)
