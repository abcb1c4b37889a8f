# Fails when a doctest binary has a test case that doctest_discover_tests
# would not run: the discovery splits the list of names at ';' (a CMake
# list), so "a; b" became the tests "a" and " b", each a filter matching no
# case, and CTest counted them as passed while the case never ran.
#
#   cmake -DEXE=path/to/test-binary -P CheckTestNames.cmake
execute_process(COMMAND "${EXE}" --list-test-cases --no-version
                OUTPUT_VARIABLE Out RESULT_VARIABLE Rc)
if(NOT Rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list-test-cases failed (${Rc})")
endif()
string(REGEX MATCHALL "[^\n]*;[^\n]*" Bad "${Out}")
if(Bad)
  message(FATAL_ERROR "${EXE}: test case names with ';' are split by "
          "doctest_discover_tests and never run under CTest; use ',': ${Bad}")
endif()
message(STATUS "${EXE}: no test case name holds ';'")
