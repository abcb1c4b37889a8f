# cmake -DBUILD=<perfc build> -DSOURCE=<tests/consumer> -DWORK=<scratch>
#       -DMODEL=<model.onnx> -P RunConsumer.cmake
# Installs the build into a fresh prefix, then configures, builds and runs
# the consumer project against it, as an outside user would.
file(REMOVE_RECURSE ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE Rc OUTPUT_VARIABLE Out
                  ERROR_VARIABLE Err)
  message("${Out}")
  if(NOT Rc EQUAL 0)
    message(FATAL_ERROR "failed (${Rc}): ${ARGN}\n${Err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
if(NOT EXISTS ${WORK}/prefix/include/perfc/perfc.h)
  message(FATAL_ERROR "perfc.h not installed")
endif()
# The installed header must stand alone: no LLVM, ONNX or perfc internals.
file(STRINGS ${WORK}/prefix/include/perfc/perfc.h Includes REGEX "^#include")
foreach(I ${Includes})
  if(NOT I MATCHES "^#include <[a-z_]+>$")
    message(FATAL_ERROR "installed header includes more than the standard "
            "library: ${I}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK}/prefix)
run(${CMAKE_COMMAND} --build ${WORK}/build)
run(${WORK}/build/consumer ${MODEL})
