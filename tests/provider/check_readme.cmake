# Fails unless provider/README.md contains exactly what softndk_provider_slots
# prints (the slot coverage table generated from provider/slots.hpp and the test
# sources in TEST_DIRS).
execute_process(COMMAND "${TOOL}" ${TEST_DIRS} OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "softndk_provider_slots failed: ${rc}")
endif()
file(READ "${README}" readme)
string(FIND "${readme}" "${table}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "provider/README.md's slot table is out of date; regenerate it with softndk_provider_slots tests/provider examples")
endif()
