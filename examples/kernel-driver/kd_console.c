/*
 * kd_console.c - the example program's stdout (kd_console.h). User mode only.
 */
#include "kd_console.h"

#include <stdio.h>

void KdConsoleSummary(long Checks) {
    printf("kernel-driver: all checks passed (%ld checks)\n", Checks);
    fflush(stdout);
}
