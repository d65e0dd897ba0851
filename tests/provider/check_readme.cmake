# Fails unless provider/README.md contains exactly what softndk_provider_slots
# prints (the slot status table generated from provider/slots.hpp).
execute_process(COMMAND "${TOOL}" OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "softndk_provider_slots failed: ${rc}")
endif()
file(READ "${README}" readme)
string(FIND "${readme}" "${table}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "provider/README.md's slot table is out of date; regenerate it with softndk_provider_slots")
endif()
