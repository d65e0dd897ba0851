/* Wdmsec.h - the spelling some drivers use for <wdmsec.h>. */
#include <wdmsec.h>
