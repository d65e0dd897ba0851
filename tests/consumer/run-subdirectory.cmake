# cmake -DSOFTNDK_SOURCE_DIR=<checkout> -DPROJECT_DIR=<subdirectory/> -DWORK_DIR=<scratch>
#       -DGENERATOR=<generator> [-DLAUNCHERS=<-DCMAKE_..._LAUNCHER=...|...>] -P run-subdirectory.cmake
# Configures the C-only consumer project in WORK_DIR (emptied first) with CMAKE_C_FLAGS=-Wall,
# builds its `consumer` target (and so SoftNDK's libraries), runs it, and checks the
# consumer's compile command (check-compile-commands.cmake). The build type is Debug, what
# a consumer's developer builds most: unoptimised SoftNDK code calls into libm where -O2
# inlines, which the C linker must be told (CMakeLists.txt, softndk_link_cxx). It also
# compiles SoftNDK in less time than an optimised build.
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/check-compile-commands.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/run-step.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
string(REPLACE "|" ";" LAUNCHERS "${LAUNCHERS}")
softndk_run_step(configure ${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${WORK_DIR}" -G "${GENERATOR}"
  -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS=-Wall"
  "-DSOFTNDK_SOURCE_DIR=${SOFTNDK_SOURCE_DIR}" ${LAUNCHERS})
softndk_run_step(build ${CMAKE_COMMAND} --build "${WORK_DIR}" --target consumer)
softndk_run_step(run "${WORK_DIR}/consumer" EXPECT "consumer: ok")

get_filename_component(_source "${PROJECT_DIR}/../app/consumer.c" ABSOLUTE)
softndk_check_compile_commands("${WORK_DIR}/compile_commands.json" "${_source}"
  "${SOFTNDK_SOURCE_DIR}/include/ndkpi")
message(STATUS "consumer: subdirectory build passed")
