# The library API (include/perfc/perfc.h), `perfc batch`, the installed
# package (tests/consumer) and the Python module (tests/python).
# Included from tests/CMakeLists.txt.
find_package(Threads REQUIRED)
add_executable(perfc_api_tests api/ApiTest.cpp)
target_link_libraries(perfc_api_tests PRIVATE perfc_api_obj doctest::doctest
                      Threads::Threads)
target_compile_definitions(perfc_api_tests PRIVATE
  PERFC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
perfc_test_code(perfc_api_tests)
doctest_discover_tests(perfc_api_tests TEST_PREFIX "api.")
perfc_check_test_names(perfc_api_tests)

# Under PERFC_SANITIZE, libperfc.so and the Python module are instrumented
# but the programs that load them (the consumer, built without sanitizers
# like any outside project; the Python interpreter) are not: ASan must be
# preloaded, with libstdc++ (Python does not link it, and ASan's __cxa_throw
# interceptor must find it at start-up), and leak checking is left to the
# instrumented test programs (the interpreter and the tools the consumer
# test runs keep memory to the end on purpose).
if(PERFC_SANITIZE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE PERFC_LIBASAN OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE PERFC_LIBSTDCXX OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(PERFC_HOST_ENV "LD_PRELOAD=${PERFC_LIBASAN}:${PERFC_LIBSTDCXX}"
                     "ASAN_OPTIONS=detect_leaks=0")
endif()

# The installed package, from a fresh prefix, by an outside project.
add_test(NAME api.consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD=${PROJECT_BINARY_DIR}
                 -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/consumer
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/consumer
                 -DMODEL=${PROJECT_SOURCE_DIR}/tests/data/zoo/resnet50.onnx
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/api/RunConsumer.cmake)
set_tests_properties(api.consumer PROPERTIES TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "error as expected")
if(PERFC_SANITIZE)
  set_property(TEST api.consumer APPEND PROPERTY ENVIRONMENT ${PERFC_HOST_ENV})
endif()

# perfc batch: each line equals the CLI's JSON compacted, errors in place.
add_test(NAME cli.batch.matches_cli
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/batch_test.sh
                 $<TARGET_FILE:perfc> ${PROJECT_SOURCE_DIR}/tests/data/zoo
                 ${CMAKE_CURRENT_BINARY_DIR}/batch)
add_test(NAME cli.batch.no_input COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect_error.sh
         "no input given" $<TARGET_FILE:perfc> batch)
add_test(NAME cli.batch.missing_file COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect_error.sh
         "/nonexistent.jsonl: cannot read the file" $<TARGET_FILE:perfc> batch
         /nonexistent.jsonl)

if(PERFC_PYTHON)
  add_test(NAME python.pytest
           COMMAND ${PERFC_PYTHON_EXECUTABLE} -m pytest -q -p no:cacheprovider
                   ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(python.pytest PROPERTIES TIMEOUT 300 ENVIRONMENT
    "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PERFC_SOURCE_DIR=${PROJECT_SOURCE_DIR};PERFC_BIN=$<TARGET_FILE:perfc>")
  if(PERFC_SANITIZE)
    set_property(TEST python.pytest APPEND PROPERTY ENVIRONMENT ${PERFC_HOST_ENV})
  endif()
  # The NAS example runs and ranks a few candidates.
  add_test(NAME python.nas_example
           COMMAND ${PERFC_PYTHON_EXECUTABLE}
                   ${PROJECT_SOURCE_DIR}/tools/examples/nas_random_search.py
                   --samples 8 --top 3)
  set_tests_properties(python.nas_example PROPERTIES
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python"
    PASS_REGULAR_EXPRESSION "8 candidates.*Kendall tau")
  if(PERFC_SANITIZE)
    set_property(TEST python.nas_example APPEND PROPERTY ENVIRONMENT
                 ${PERFC_HOST_ENV})
  endif()
endif()
