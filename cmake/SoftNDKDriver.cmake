# softndk_add_driver(<name> SOURCES <file>... [INCLUDE_DIRECTORIES <dir>...]
#                    [WPP] [CXX] [WARNINGS <flag>...])
#
# Builds a Windows kernel driver's source folder as it is into the executable <name>, run
# by SoftNDK's driver runner: SoftNDK::ndk (headers, provider, WDK runtime) and
# SoftNDK::driver_main (main() calling DriverEntry / DriverUnload) are linked PRIVATE.
#
#   SOURCES              the driver's .c files (and, with CXX, .cpp/.cc/.cxx files);
#                        relative paths are relative to CMAKE_CURRENT_SOURCE_DIR.
#   INCLUDE_DIRECTORIES  the driver's own include directories (what the .vcxproj lists in
#                        AdditionalIncludeDirectories); the directories of the sources are
#                        added too, as MSVC searches the including file's directory.
#   WPP                  the sources `#include "<source>.tmh"`: softndk_wpp_stubs() writes
#                        no-op trace headers for them (SoftNDKWpp.cmake).
#   CXX                  C++ sources are allowed; they compile with SOFTNDK_LEGACY_SAL
#                        defined (the legacy SAL names for C++). CXX must be enabled.
#   WARNINGS             replaces the default warning tolerance below.
#
# Include names are case-insensitive on Windows: drivers write "lam.h" for Lam.h and
# <NTDDK.H> or <NdkPi.h> for SoftNDK's ntddk.h and ndkpi.h. At configure time the helper
# reads every #include "..." / <...> of the sources and, transitively, of the driver's
# headers it finds. An include whose exact spelling exists in none of the directories the
# compiler searches for it (the including file's directory for "...", the driver's include
# directories, SoftNDK's include/ndkpi, the WPP stub directory) but that matches a file
# there when case is ignored gets a symbolic link with its own spelling in
# ${CMAKE_CURRENT_BINARY_DIR}/softndk_case/<name>, a private include directory of <name>.
# Every scanned file is a CMAKE_CONFIGURE_DEPENDS, so an edited include line re-runs the
# scan; a header added to the tree is found by the next configure. Includes that reach
# upwards ("../x.h") are left to the compiler.
#
# The default warning tolerance, PRIVATE to <name> and added after the consumer's own
# flags (so -Wall, even -Wextra -Werror, keep holding for everything else) - habits of code
# written for MSVC that gcc reports:
#   -Wno-unknown-pragmas          #pragma alloc_text / code_seg / warning / region
#   -Wno-multichar                pool tags and IOCTL codes like 'gaTx'
#   -Wno-missing-field-initializers  `STRUCT s = { 0 };` with more than one field
#   -Wno-unused-function          static prototypes (role-type declarations) never defined
#   -Wno-unused-parameter         dispatch routines that ignore their IRP or context
#   -Wno-sign-compare             ULONG against LONG counters
#   -Wno-old-style-declaration    `VOID static Foo(VOID)` (C only)
# Targets that use the WDK headers without this helper and meet the same habits add the
# flags they need themselves; SoftNDK imposes none of them on its consumers.
#
#   softndk_add_driver(lamdrv SOURCES Driver.c Lam.c INCLUDE_DIRECTORIES inc WPP)
#   add_test(NAME lamdrv COMMAND lamdrv --timeout 30)
function(softndk_add_driver name)
  cmake_parse_arguments(PARSE_ARGV 1 _arg "WPP;CXX" "" "SOURCES;INCLUDE_DIRECTORIES;WARNINGS")
  if(_arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "softndk_add_driver(${name}): unknown arguments ${_arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT _arg_SOURCES)
    message(FATAL_ERROR "softndk_add_driver(${name}): no SOURCES")
  endif()

  set(_sources "")
  set(_include_dirs "")
  foreach(_source IN LISTS _arg_SOURCES)
    get_filename_component(_source "${_source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${_source}")
      message(FATAL_ERROR "softndk_add_driver(${name}): no source file ${_source}")
    endif()
    if(_source MATCHES "\\.(cpp|cc|cxx|CPP|C)$")
      if(NOT _arg_CXX)
        message(FATAL_ERROR "softndk_add_driver(${name}): ${_source} is C++: pass CXX")
      endif()
    endif()
    list(APPEND _sources "${_source}")
    get_filename_component(_dir "${_source}" DIRECTORY)
    list(APPEND _include_dirs "${_dir}")
  endforeach()
  foreach(_dir IN LISTS _arg_INCLUDE_DIRECTORIES)
    get_filename_component(_dir "${_dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _include_dirs "${_dir}")
  endforeach()
  list(REMOVE_DUPLICATES _include_dirs)
  if(_arg_CXX)
    get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CXX" IN_LIST _languages)
      message(FATAL_ERROR "softndk_add_driver(${name}): CXX given but the CXX language is not enabled")
    endif()
  endif()

  add_executable(${name} ${_sources})
  target_include_directories(${name} PRIVATE ${_include_dirs})
  target_link_libraries(${name} PRIVATE SoftNDK::ndk SoftNDK::driver_main)
  if(_arg_CXX)
    target_compile_definitions(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:SOFTNDK_LEGACY_SAL>)
  endif()
  if(DEFINED _arg_WARNINGS)
    target_compile_options(${name} PRIVATE ${_arg_WARNINGS})
  else()
    target_compile_options(${name} PRIVATE
      -Wno-unknown-pragmas -Wno-multichar -Wno-missing-field-initializers -Wno-unused-function
      -Wno-unused-parameter -Wno-sign-compare $<$<COMPILE_LANGUAGE:C>:-Wno-old-style-declaration>)
  endif()

  set(_search_dirs ${_include_dirs})
  if(_arg_WPP)
    softndk_wpp_stubs(${name} ${_sources})
    list(APPEND _search_dirs "${CMAKE_CURRENT_BINARY_DIR}/softndk_wpp/${name}")
  endif()
  _softndk_ndkpi_dir(_ndkpi)
  list(APPEND _search_dirs "${_ndkpi}")

  set(_case_dir "${CMAKE_CURRENT_BINARY_DIR}/softndk_case/${name}")
  _softndk_case_links("${_case_dir}" "${_search_dirs}" "${_ndkpi}" ${_sources})
  target_include_directories(${name} PRIVATE "${_case_dir}")
endfunction()

# _softndk_ndkpi_dir(<out>): SoftNDK's include/ndkpi - in an install prefix the directory
# SoftNDKConfig.cmake records (global property SOFTNDK_NDKPI_DIR), in the source tree the
# one beside this file's cmake/.
function(_softndk_ndkpi_dir out)
  get_property(_dir GLOBAL PROPERTY SOFTNDK_NDKPI_DIR)
  if(_dir)
    set(${out} "${_dir}" PARENT_SCOPE)
    return()
  endif()
  set(_here "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  if(EXISTS "${_here}/../include/ndkpi/ndkpi.h")
    get_filename_component(_dir "${_here}/../include/ndkpi" ABSOLUTE)
  else()
    message(FATAL_ERROR "softndk_add_driver: cannot find SoftNDK's ndkpi headers from ${_here}")
  endif()
  set(${out} "${_dir}" PARENT_SCOPE)
endfunction()

# _softndk_find_nocase(<out> <dir> <relative path>): the existing path under <dir> whose
# components equal <relative path>'s when case is ignored, or "" if none does.
function(_softndk_find_nocase out dir relative)
  string(REPLACE "/" ";" _parts "${relative}")
  set(_at "${dir}")
  foreach(_part IN LISTS _parts)
    if(_part STREQUAL "" OR _part STREQUAL ".")
      continue()
    endif()
    if(EXISTS "${_at}/${_part}")
      set(_at "${_at}/${_part}")
      continue()
    endif()
    string(TOLOWER "${_part}" _wanted)
    file(GLOB _entries LIST_DIRECTORIES true RELATIVE "${_at}" "${_at}/*")
    set(_match "")
    foreach(_entry IN LISTS _entries)
      string(TOLOWER "${_entry}" _lower)
      if(_lower STREQUAL _wanted)
        set(_match "${_entry}")
        break()
      endif()
    endforeach()
    if(_match STREQUAL "")
      set(${out} "" PARENT_SCOPE)
      return()
    endif()
    set(_at "${_at}/${_match}")
  endforeach()
  set(${out} "${_at}" PARENT_SCOPE)
endfunction()

# _softndk_case_links(<link dir> <search dirs> <ndkpi dir> <file>...): the scan described
# above, from <file>... (the sources). Headers under <ndkpi dir> are SoftNDK's own and
# spelled right, so they are not scanned.
function(_softndk_case_links link_dir search_dirs ndkpi)
  set(_queue ${ARGN})
  set(_seen "")
  set(_links "")  # "<spelling>|<target>" pairs
  while(_queue)
    list(POP_FRONT _queue _file)
    if(_file IN_LIST _seen)
      continue()
    endif()
    list(APPEND _seen "${_file}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_file}")
    get_filename_component(_file_dir "${_file}" DIRECTORY)
    file(STRINGS "${_file}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"][^>\"]+[>\"]")
    foreach(_line IN LISTS _lines)
      string(REGEX MATCH "[<\"]([^>\"]+)[>\"]" _ignored "${_line}")
      set(_spelling "${CMAKE_MATCH_1}")
      string(REPLACE "\\" "/" _spelling "${_spelling}")  # MSVC accepts "sub\\x.h"
      if(_spelling MATCHES "(^|/)\\.\\.(/|$)" OR IS_ABSOLUTE "${_spelling}")
        continue()
      endif()
      set(_dirs ${search_dirs})
      if(_line MATCHES "\"")
        list(PREPEND _dirs "${_file_dir}")
      endif()
      # The compiler's answer first: the exact spelling in a searched directory.
      set(_found "")
      foreach(_dir IN LISTS _dirs)
        if(EXISTS "${_dir}/${_spelling}" AND NOT IS_DIRECTORY "${_dir}/${_spelling}")
          set(_found "${_dir}/${_spelling}")
          break()
        endif()
      endforeach()
      if(_found STREQUAL "")
        foreach(_dir IN LISTS _dirs)
          _softndk_find_nocase(_match "${_dir}" "${_spelling}")
          if(NOT _match STREQUAL "" AND NOT IS_DIRECTORY "${_match}")
            set(_found "${_match}")
            list(APPEND _links "${_spelling}|${_found}")
            break()
          endif()
        endforeach()
      endif()
      # System headers (<stdio.h>) stay unresolved and are the compiler's business.
      if(NOT _found STREQUAL "")
        string(FIND "${_found}" "${ndkpi}/" _in_ndkpi)
        if(NOT _in_ndkpi EQUAL 0)
          list(APPEND _queue "${_found}")
        endif()
      endif()
    endforeach()
  endwhile()

  # Create the links, keep the ones that are already right (their dependants then do not
  # rebuild), remove the ones no include needs any more.
  file(MAKE_DIRECTORY "${link_dir}")
  set(_wanted "")
  list(REMOVE_DUPLICATES _links)
  foreach(_pair IN LISTS _links)
    string(REGEX MATCH "^([^|]*)\\|(.*)$" _ignored "${_pair}")
    set(_spelling "${CMAKE_MATCH_1}")
    set(_target "${CMAKE_MATCH_2}")
    if("${_spelling}" IN_LIST _wanted)
      message(WARNING "softndk_add_driver: #include \"${_spelling}\" names different files "
                      "depending on the including directory; using ${_target}")
    endif()
    list(APPEND _wanted "${_spelling}")
    set(_link "${link_dir}/${_spelling}")
    if(IS_SYMLINK "${_link}")
      file(READ_SYMLINK "${_link}" _current)
      if(_current STREQUAL _target)
        continue()
      endif()
      file(REMOVE "${_link}")
    endif()
    get_filename_component(_link_parent "${_link}" DIRECTORY)
    file(MAKE_DIRECTORY "${_link_parent}")
    file(CREATE_LINK "${_target}" "${_link}" SYMBOLIC)
  endforeach()
  file(GLOB_RECURSE _existing LIST_DIRECTORIES false RELATIVE "${link_dir}" "${link_dir}/*")
  foreach(_old IN LISTS _existing)
    if(NOT _old IN_LIST _wanted)
      file(REMOVE "${link_dir}/${_old}")
    endif()
  endforeach()
endfunction()
