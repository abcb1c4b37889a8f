# Dependencies come from Debian 12 packages; see ../shared/notes/build.md for
# the quirks each one has.

# LLVM 14: ADT and Support (cl, YAML, JSON, Error/Expected, SourceMgr).
find_package(LLVM 14 REQUIRED CONFIG HINTS /usr/lib/llvm-14/lib/cmake/llvm)
llvm_map_components_to_libnames(PERFC_LLVM_LIBS support)
add_library(perfc_llvm INTERFACE)
# LLVM's imported targets carry no include directories or definitions.
target_include_directories(perfc_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
separate_arguments(PERFC_LLVM_DEFS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_options(perfc_llvm INTERFACE ${PERFC_LLVM_DEFS})
target_link_libraries(perfc_llvm INTERFACE ${PERFC_LLVM_LIBS})

# Protobuf must be found before ONNX: ONNX's config does not look for it.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED CONFIG)

find_package(fmt REQUIRED)

find_package(PkgConfig REQUIRED)
pkg_check_modules(Z3 REQUIRED IMPORTED_TARGET z3)

if(PERFC_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()

# OpenBLAS (Debian's libopenblas-dev, pthread variant) for `perfc calibrate`'s
# GEMM. Only its header is used at build time: tools/calibrate opens the
# library with dlopen when it measures, so that perfc does not start BLAS
# threads otherwise.
find_path(PERFC_OPENBLAS_INCLUDE_DIR cblas.h REQUIRED NO_DEFAULT_PATH
  PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
        /usr/include/openblas)
find_library(PERFC_OPENBLAS_LIBRARY NAMES openblas REQUIRED NO_DEFAULT_PATH
  PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread /usr/lib64
        /usr/lib)
