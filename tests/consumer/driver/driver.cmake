# The MSVC-style driver tree of this directory through softndk_add_driver(), compiled as
# strictly as a consumer might (-Wall -Wextra -Werror): the helper's tolerance must keep
# the MSVC habits (wrong-case includes, pragmas, 'maLS', `VOID static`, `= {0}`, unused
# static prototypes) from failing the build. Included by tests/consumer/CMakeLists.txt
# (SoftNDK's build tree) and by installed/CMakeLists.txt (find_package from a prefix).
softndk_add_driver(msvc_driver
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/Driver.c
    ${CMAKE_CURRENT_LIST_DIR}/Lam.c
    ${CMAKE_CURRENT_LIST_DIR}/Helper.cpp
  INCLUDE_DIRECTORIES ${CMAKE_CURRENT_LIST_DIR}/inc
  WPP CXX)
target_compile_options(msvc_driver PRIVATE -Wall -Wextra -Werror)
