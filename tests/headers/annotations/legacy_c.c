/*
 * legacy_c.c - the legacy (SAL 1) annotations in C with no opt-in: this file includes
 * <ntddk.h> and no other WDK header, uses __in, __out, __reserved, __callback ... as
 * driver code does, and then includes the glibc headers that use some of those names
 * as identifiers. _GNU_SOURCE makes <sys/stat.h> include <linux/stat.h>, whose
 * struct statx_timestamp has a member named __reserved: it must keep it.
 * Also __pragma, ARGUMENT_PRESENT, min/max and the BENIGN_RACE / NO_COMPETING_THREAD
 * brackets as driver code writes them.
 *
 * Built as C11 with -Wall -Wextra -Werror. Exit status 0 and "N checks passed" when
 * every check holds; otherwise the failed check is on stderr.
 */
#define _GNU_SOURCE 1

#include <ntddk.h> /* the only WDK header */

/* System headers after the WDK headers, the order a driver port ends up with. */
#include <arpa/inet.h>
#include <envz.h>
#include <link.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread_db.h>

static int checks;
static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        ++checks;                                                                    \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                              \
        }                                                                            \
    } while (0)

/* ---- Legacy annotations in prototypes and definitions, as in WDK-era drivers. */
__checkReturn static NTSTATUS CopyBytes(__out_bcount_part(Capacity, *Copied) PUCHAR Destination,
                                        __in ULONG Capacity,
                                        __in_bcount(Length) const UCHAR *Source, __in ULONG Length,
                                        __out PULONG Copied, __reserved PVOID Reserved);

__checkReturn static NTSTATUS CopyBytes(__out_bcount_part(Capacity, *Copied) PUCHAR Destination,
                                        __in ULONG Capacity,
                                        __in_bcount(Length) const UCHAR *Source, __in ULONG Length,
                                        __out PULONG Copied, __reserved PVOID Reserved) {
    if (Reserved != NULL) return STATUS_INVALID_PARAMETER;
    ULONG count = min(Capacity, Length);
    memcpy(Destination, Source, count);
    *Copied = count;
    return count == Length ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
}

typedef VOID(NTAPI *NOTIFY_ROUTINE)(__in_opt PVOID Context);

static ULONG notified;
__drv_functionClass(NOTIFY_ROUTINE) __drv_maxIRQL(DISPATCH_LEVEL)
    __drv_raisesIRQL(DISPATCH_LEVEL) static VOID NTAPI Notify(__in_opt __callback PVOID Context) {
    if (ARGUMENT_PRESENT(Context)) notified += *(PULONG)Context;
}

static ULONG CountPresent(__in_opt PVOID First, __inout_opt PULONG Second, __override PVOID Third,
                          __deref_out_opt PVOID *Fourth) {
    return (ULONG)(ARGUMENT_PRESENT(First) + ARGUMENT_PRESENT(Second) + ARGUMENT_PRESENT(Third) +
                   ARGUMENT_PRESENT(Fourth));
}

/* __pragma(pack(...)) must keep its meaning: it changes the layout. */
__pragma(pack(push, 1)) typedef struct _PACKED_HEADER {
    UCHAR Kind;
    ULONG Length;
} PACKED_HEADER;
__pragma(pack(pop))

    typedef struct _NATURAL_HEADER {
    UCHAR Kind;
    ULONG Length;
} NATURAL_HEADER;

/* Warning and analysis pragmas vanish, with no -Wunknown-pragmas warning. */
__pragma(warning(push)) __pragma(warning(disable : 4201)) __pragma(prefast(suppress : 28118))
    __pragma(warning(pop))

        int main(void) {
    UCHAR source[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    UCHAR destination[4] = {0};
    ULONG copied = 0;
    CHECK(CopyBytes(destination, sizeof destination, source, sizeof source, &copied, NULL) ==
          STATUS_BUFFER_OVERFLOW);
    CHECK(copied == 4 && destination[3] == 4);
    CHECK(CopyBytes(destination, sizeof destination, source, 2, &copied, NULL) == STATUS_SUCCESS);
    CHECK(copied == 2);

    ULONG value = 5;
    Notify(&value);
    Notify(NULL);
    CHECK(notified == 5);
    PVOID out = NULL;
    CHECK(CountPresent(NULL, &value, NULL, &out) == 2);
    CHECK(ARGUMENT_PRESENT(&value) && !ARGUMENT_PRESENT(NULL));

    CHECK(min(3, 5) == 3 && max(3, 5) == 5 && min(-1, 1) == -1 && max(-1, 1) == 1);

    CHECK(sizeof(PACKED_HEADER) == 5);
    CHECK(sizeof(NATURAL_HEADER) == 8);

    /* The brackets around a deliberate race, with a statement and with a block. */
    volatile LONG racy = 0;
    BENIGN_RACE_BEGIN
    racy = racy + 1;
    BENIGN_RACE_END
    NO_COMPETING_THREAD_BEGIN {
        racy = racy + 1;
    }
    NO_COMPETING_THREAD_END
    CHECK(racy == 2);

    /* <linux/stat.h> was read before __reserved became an annotation, so the member is
     * there (and the macro is still defined for driver code). */
#pragma push_macro("__reserved")
#undef __reserved
    CHECK(offsetof(struct statx_timestamp, __reserved) == 12);
#pragma pop_macro("__reserved")
    __reserved int reserved_annotation_still_expands = 0;
    CHECK(reserved_annotation_still_expands == 0);

    /* glibc functions whose prototypes name their parameters __in / __out. */
    struct in_addr address;
    CHECK(inet_pton(AF_INET, "192.0.2.1", &address) == 1);
    CHECK(strcmp(inet_ntoa(address), "192.0.2.1") == 0);

    if (failures != 0) {
        fprintf(stderr, "legacy SAL in C: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("legacy SAL in C: %d checks passed\n", checks);
    return 0;
}
