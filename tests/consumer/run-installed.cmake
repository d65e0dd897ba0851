# cmake -DBUILD_DIR=<SoftNDK build> -DSOFTNDK_SOURCE_DIR=<checkout> -DPROJECT_DIR=<installed/>
#       -DWORK_DIR=<scratch> -DLIBDIR=<lib> -DGENERATOR=<generator> [-DLAUNCHERS=...]
#       -P run-installed.cmake
# Installs BUILD_DIR into WORK_DIR/stage, moves the prefix to WORK_DIR/prefix (the package
# must be relocatable), checks what was installed (every header of include/ndkpi, the
# SONAMEs), then configures, builds and runs the find_package() consumer project.
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/check-compile-commands.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/run-step.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
string(REPLACE "|" ";" LAUNCHERS "${LAUNCHERS}")
softndk_run_step(install ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/stage")
file(RENAME "${WORK_DIR}/stage" "${WORK_DIR}/prefix")
set(_prefix "${WORK_DIR}/prefix")

# Every header under include/ndkpi, in <prefix>/include/softndk/ndkpi.
file(GLOB_RECURSE _headers RELATIVE "${SOFTNDK_SOURCE_DIR}/include/ndkpi"
  "${SOFTNDK_SOURCE_DIR}/include/ndkpi/*")
foreach(_header IN LISTS _headers)
  if(NOT EXISTS "${_prefix}/include/softndk/ndkpi/${_header}")
    message(FATAL_ERROR "include/ndkpi/${_header} is not installed")
  endif()
endforeach()
foreach(_library softndk softndk_wdk softndk_driver_main)
  set(_file "${_prefix}/${LIBDIR}/lib${_library}.so")
  execute_process(COMMAND readelf -d "${_file}" OUTPUT_VARIABLE _dynamic RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _dynamic MATCHES "SONAME\\)[^\n]*\\[lib${_library}\\.so\\.0\\]")
    message(FATAL_ERROR "${_file}: no SONAME lib${_library}.so.0")
  endif()
endforeach()
if(NOT EXISTS "${_prefix}/bin/softndk")
  message(FATAL_ERROR "bin/softndk is not installed")
endif()

softndk_run_step(configure ${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${WORK_DIR}/build"
  -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS=-Wall"
  "-DCMAKE_PREFIX_PATH=${_prefix}" ${LAUNCHERS})
softndk_run_step(build ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
softndk_run_step(run-shared "${WORK_DIR}/build/consumer" EXPECT "consumer: ok")
softndk_run_step(run-static "${WORK_DIR}/build/consumer_static" EXPECT "consumer: ok")
softndk_run_step(run-driver "${WORK_DIR}/build/msvc_driver" --timeout 30
  EXPECT "msvc-driver: all checks passed")
# The consumer links the shared libraries of the prefix, not SoftNDK's build tree.
execute_process(COMMAND ldd "${WORK_DIR}/build/consumer" OUTPUT_VARIABLE _ldd)
if(NOT _ldd MATCHES "libsoftndk\\.so\\.0 => ${_prefix}/")
  message(FATAL_ERROR "consumer does not load libsoftndk.so.0 from ${_prefix}:\n${_ldd}")
endif()

get_filename_component(_source "${PROJECT_DIR}/../app/consumer.c" ABSOLUTE)
softndk_check_compile_commands("${WORK_DIR}/build/compile_commands.json" "${_source}"
  "${_prefix}/include/softndk/ndkpi")
message(STATUS "consumer: find_package from an install prefix passed")
