# cli.json_schema: runs PERFC on MODEL with --format json and checks the
# documented fields with string(JSON), which stops the script (and fails the
# test) on a missing key. A PASS_REGULAR_EXPRESSION of fifteen '.*' over the
# 100 KB report did the same in 15-25 s of CTest's own thread (CMake's regex
# backtracks), stalling every other test in a parallel run.
#
#   cmake -DPERFC=... -DMODEL=.../resnet50.onnx -P CheckJsonSchema.cmake
execute_process(COMMAND ${PERFC} ${MODEL} --format json
                OUTPUT_VARIABLE Out ERROR_VARIABLE Err RESULT_VARIABLE Rc)
if(NOT Rc EQUAL 0)
  message(FATAL_ERROR "perfc exited ${Rc}: ${Err}")
endif()

function(expect Want)
  string(JSON Got GET "${Out}" ${ARGN})
  if(NOT Got STREQUAL Want)
    message(FATAL_ERROR "${ARGN}: '${Got}', expected '${Want}'")
  endif()
endfunction()
function(expect_count)
  string(JSON Got GET "${Out}" ${ARGN})
  if(NOT Got MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${ARGN}: '${Got}' is not a count")
  endif()
endfunction()

expect(1 schema_version)
expect(resnet50 model name)
expect_count(model nodes)
expect(25557032 totals params)
foreach(Key flops macs bytes bytes_read bytes_written)
  expect_count(totals ${Key})
endforeach()
string(JSON Nodes LENGTH "${Out}" nodes)
if(Nodes LESS 1)
  message(FATAL_ERROR "nodes: empty")
endif()
string(JSON Name GET "${Out}" nodes 0 name)
string(JSON Op GET "${Out}" nodes 0 op)
foreach(Key params flops macs bytes)
  expect_count(nodes 0 ${Key})
endforeach()
message(STATUS "schema ok: ${Nodes} nodes, the first '${Name}' (${Op})")
