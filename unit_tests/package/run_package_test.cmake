# install -> configure consumer -> build -> run, each step must succeed.
file(REMOVE_RECURSE ${WORK_DIR})
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("install einrel" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/install)
step("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/install -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
step("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("run consumer on 2 ranks" ${MPIEXEC} -n 2 ${WORK_DIR}/build/consumer)
message(STATUS "${step_output}")
step("run installed einrel" ${WORK_DIR}/install/bin/einrel --version)
message(STATUS "${step_output}")
