/*
 * kd_console.h - what the example program prints for the person who ran it.
 *
 * Not driver code: a kernel driver has no stdout, and its verdict is the
 * DbgPrintEx line (visible at SOFTNDK_LOG_LEVEL=info). Run as a Linux program,
 * the example also says on stdout that it passed, so a plain run is not silent.
 * A WDK (.sys) build leaves kd_console.c out and defines KdConsoleSummary as
 * nothing.
 */
#pragma once

/* Prints "kernel-driver: all checks passed (N checks)" to stdout, flushed. Called
 * once, by DriverUnload, only when every check passed. */
void KdConsoleSummary(long Checks);
