# Project-wide compiler settings: warnings as errors and optional sanitizers.
# Every SoftNDK target links softndk_warnings (directly or transitively).

add_library(softndk_warnings INTERFACE)
target_compile_options(softndk_warnings INTERFACE -Wall -Wextra -Werror)

# SOFTNDK_SANITIZE is a comma-separated -fsanitize= list ("address,undefined",
# "thread"); the CMake presets set it. Applied globally so that every object,
# including header self-checks, is instrumented the same way.
set(SOFTNDK_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined or thread")
if(SOFTNDK_SANITIZE)
  add_compile_options(-fsanitize=${SOFTNDK_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${SOFTNDK_SANITIZE})
  if(SOFTNDK_SANITIZE MATCHES "thread")
    # g++ 12 warns (-Wtsan) on every std::atomic_thread_fence under TSan, which does
    # not model standalone fences. Boost.Asio's headers use them, so the warning
    # cannot be silenced at the source there; SoftNDK's own fence (wake_fence) says
    # why it is safe where it is written.
    add_compile_options(-Wno-tsan)
  endif()
endif()

# SOFTNDK_FUZZ builds tests/fuzz as libFuzzer targets (docs/fuzzing.md). It needs clang
# (Debian: clang-14 and libclang-rt-14-dev; the `fuzz` preset sets the compilers):
# everything is compiled with -fsanitize=fuzzer-no-link,address so that the code under
# test is instrumented, and only the fuzz targets' tests are registered.
option(SOFTNDK_FUZZ "Build the libFuzzer targets of tests/fuzz (clang only)" OFF)
if(SOFTNDK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SOFTNDK_FUZZ=ON needs clang++ (cmake --preset fuzz), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address)
endif()
