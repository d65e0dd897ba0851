/* The I/O part of the WDK surface used from C11, as a driver includes it: <ntddk.h> with
 * <ntintsafe.h>, <ntstrsafe.h>, <ip2string.h> and <wsk.h>. Exit status 0 means every check
 * held; a failed check prints its line. */
#include <ip2string.h>
#include <ntddk.h>
#include <ntintsafe.h>
#include <ntstrsafe.h>
#include <wsk.h>

#include <stdio.h>

C_ASSERT(sizeof(WSK_BUF) == 24);
C_ASSERT(FIELD_OFFSET(WSK_BUF, Offset) == 8);
C_ASSERT(FIELD_OFFSET(WSK_BUF, Length) == 16);
C_ASSERT(sizeof(WSK_SOCKET) == sizeof(void *));
C_ASSERT(sizeof(IO_ERROR_LOG_PACKET) == 0x30);
C_ASSERT(sizeof(TIME_FIELDS) == 16);

static int failures = 0;
#define EXPECT(cond)                                           \
    do {                                                       \
        if (!(cond)) {                                         \
            fprintf(stderr, "line %d: %s\n", __LINE__, #cond); \
            ++failures;                                        \
        }                                                      \
    } while (0)

int main(void) {
    C_ASSERT(METHOD_NEITHER == 3); /* block scope in C */

    /* ip2string.h's W parser is declared for kernel code. */
    struct in_addr address;
    USHORT port = 0;
    EXPECT(RtlIpv4StringToAddressExW(L"10.1.2.3:80", TRUE, &address, &port) == STATUS_SUCCESS);
    EXPECT(port == htons(80));
    EXPECT(RtlIpv4StringToAddressExW(L"10.1.2", TRUE, &address, &port) == STATUS_INVALID_PARAMETER);

    ULONG sum = 0;
    EXPECT(RtlULongAdd(0xFFFFFFF0u, 0x20, &sum) == STATUS_INTEGER_OVERFLOW && sum == ULONG_ERROR);
    EXPECT(CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_BUFFERED, FILE_ANY_ACCESS) == 0x222000);

    char text[8];
    EXPECT(RtlStringCchPrintfA(text, sizeof(text), "%I64u", 1234567890123ULL) ==
           STATUS_BUFFER_OVERFLOW);
    EXPECT(RtlStringCchLengthA(text, sizeof(text), NULL) == STATUS_SUCCESS);

    MDL mdl_storage[2];
    WSK_BUF buffer = {mdl_storage, 4, 100};
    EXPECT(buffer.Mdl == mdl_storage && buffer.Offset == 4 && buffer.Length == 100);
    return failures == 0 ? 0 : 1;
}
