# softndk_run_step(<name> <command>... [EXPECT <regex>]): runs <command> with its output
# shown, and fails the test (FATAL_ERROR) unless it exits 0 and, with EXPECT, prints a line
# matching <regex>.
function(softndk_run_step name)
  cmake_parse_arguments(PARSE_ARGV 1 _arg "" "EXPECT" "")
  message(STATUS "[${name}] ${_arg_UNPARSED_ARGUMENTS}")
  execute_process(COMMAND ${_arg_UNPARSED_ARGUMENTS} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
    ERROR_VARIABLE _out)
  message("${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "[${name}] failed: ${_rc}")
  endif()
  if(DEFINED _arg_EXPECT AND NOT _out MATCHES "${_arg_EXPECT}")
    message(FATAL_ERROR "[${name}] printed no line matching '${_arg_EXPECT}'")
  endif()
endfunction()
