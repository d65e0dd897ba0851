/*
 * evntrace.h - SoftNDK user-mode stand-in for the event-tracing header, reduced
 * to the trace levels that WPP and ETW trace calls take (TRACE_LEVEL_*), which
 * drivers use in their WPP configuration (trace.h) and TraceEvents calls.
 */
#ifndef _EVNTRACE_
#define _EVNTRACE_

#define TRACE_LEVEL_NONE        0
#define TRACE_LEVEL_CRITICAL    1
#define TRACE_LEVEL_FATAL       1
#define TRACE_LEVEL_ERROR       2
#define TRACE_LEVEL_WARNING     3
#define TRACE_LEVEL_INFORMATION 4
#define TRACE_LEVEL_VERBOSE     5
#define TRACE_LEVEL_RESERVED6   6
#define TRACE_LEVEL_RESERVED7   7
#define TRACE_LEVEL_RESERVED8   8
#define TRACE_LEVEL_RESERVED9   9

#endif /* _EVNTRACE_ */
