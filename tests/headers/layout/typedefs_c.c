/*
 * typedefs_c.c - every NDK_FN_* typedef, from C11: the function written out
 * with the documented prototype (ndkpi_prototypes.inc) is assigned to a
 * variable of the typedef's type. A mismatch is an incompatible-pointer
 * assignment, an error under -Werror. typedefs_cpp.cpp does the same in C++.
 */
#include <ndkpi.h>

#include "ndkpi_prototypes.inc"

int main(void) {
    int assigned = 0;
#define TYPEDEF(fn_typedef)      \
    {                            \
        fn_typedef fn;           \
        fn = Proto_##fn_typedef; \
        (void)fn;                \
        ++assigned;              \
    }
#include "ndkpi_layout.def"
    return assigned == 63 ? 0 : 1;
}
