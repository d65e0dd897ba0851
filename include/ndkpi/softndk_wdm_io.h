/*
 * softndk_wdm_io.h - part of SoftNDK's wdm.h: the I/O manager beyond wdm.h's core (device stacks,
 * IRP building and cancellation, cancel-safe queues, remove locks, start-packet queues, driver
 * object extensions, error log), Rtl helpers (bit ops, byte swap, generic tables, time fields,
 * counted-string operations), hardware-only calls (port and register I/O, DMA adapters, I/O space
 * mapping) and the small WDK macros (CTL_CODE, ALIGN_*, Add2Ptr, ...).
 *
 * Included at the end of <wdm.h>. Including it alone includes <wdm.h> first.
 */
#ifndef SOFTNDK_SOFTNDK_WDM_IO_H
#define SOFTNDK_SOFTNDK_WDM_IO_H

#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Small WDK macros. ================================================ */

/* Compile-time assertion, at file and block scope, in C and C++. */
#ifndef C_ASSERT
#ifdef __cplusplus
#define C_ASSERT(e) static_assert((e), #e)
#else
#define C_ASSERT(e) _Static_assert((e), #e)
#endif
#endif

/* I/O control codes: device type in bits 16-31, access in 14-15, function in
 * 2-13, transfer method in 0-1. */
#define CTL_CODE(DeviceType, Function, Method, Access) \
    (((DeviceType) << 16) | ((Access) << 14) | ((Function) << 2) | (Method))
#define DEVICE_TYPE_FROM_CTL_CODE(ctrlCode) (((ULONG)(ctrlCode & 0xffff0000)) >> 16)
#define METHOD_FROM_CTL_CODE(ctrlCode)      ((ULONG)(ctrlCode & 3))
#define METHOD_BUFFERED                     0
#define METHOD_IN_DIRECT                    1
#define METHOD_OUT_DIRECT                   2
#define METHOD_NEITHER                      3
#define METHOD_DIRECT_TO_HARDWARE           METHOD_IN_DIRECT
#define METHOD_DIRECT_FROM_HARDWARE         METHOD_OUT_DIRECT
#define FILE_ANY_ACCESS                     0
#define FILE_SPECIAL_ACCESS                 (FILE_ANY_ACCESS)
#define FILE_READ_ACCESS                    (0x0001)
#define FILE_WRITE_ACCESS                   (0x0002)
#define FILE_DEVICE_BEEP                    0x00000001
#define FILE_DEVICE_CD_ROM                  0x00000002
#define FILE_DEVICE_CD_ROM_FILE_SYSTEM      0x00000003
#define FILE_DEVICE_CONTROLLER              0x00000004
#define FILE_DEVICE_DATALINK                0x00000005
#define FILE_DEVICE_DFS                     0x00000006
#define FILE_DEVICE_DISK                    0x00000007
#define FILE_DEVICE_DISK_FILE_SYSTEM        0x00000008
#define FILE_DEVICE_FILE_SYSTEM             0x00000009
#define FILE_DEVICE_INPORT_PORT             0x0000000a
#define FILE_DEVICE_KEYBOARD                0x0000000b
#define FILE_DEVICE_MAILSLOT                0x0000000c
#define FILE_DEVICE_MIDI_IN                 0x0000000d
#define FILE_DEVICE_MIDI_OUT                0x0000000e
#define FILE_DEVICE_MOUSE                   0x0000000f
#define FILE_DEVICE_MULTI_UNC_PROVIDER      0x00000010
#define FILE_DEVICE_NAMED_PIPE              0x00000011
#define FILE_DEVICE_NETWORK_BROWSER         0x00000013
#define FILE_DEVICE_NETWORK_FILE_SYSTEM     0x00000014
#define FILE_DEVICE_NULL                    0x00000015
#define FILE_DEVICE_PARALLEL_PORT           0x00000016
#define FILE_DEVICE_PHYSICAL_NETCARD        0x00000017
#define FILE_DEVICE_PRINTER                 0x00000018
#define FILE_DEVICE_SCANNER                 0x00000019
#define FILE_DEVICE_SERIAL_MOUSE_PORT       0x0000001a
#define FILE_DEVICE_SERIAL_PORT             0x0000001b
#define FILE_DEVICE_SCREEN                  0x0000001c
#define FILE_DEVICE_SOUND                   0x0000001d
#define FILE_DEVICE_STREAMS                 0x0000001e
#define FILE_DEVICE_TAPE                    0x0000001f
#define FILE_DEVICE_TAPE_FILE_SYSTEM        0x00000020
#define FILE_DEVICE_TRANSPORT               0x00000021
#define FILE_DEVICE_VIDEO                   0x00000023
#define FILE_DEVICE_VIRTUAL_DISK            0x00000024
#define FILE_DEVICE_WAVE_IN                 0x00000025
#define FILE_DEVICE_WAVE_OUT                0x00000026
#define FILE_DEVICE_8042_PORT               0x00000027
#define FILE_DEVICE_NETWORK_REDIRECTOR      0x00000028
#define FILE_DEVICE_BATTERY                 0x00000029
#define FILE_DEVICE_BUS_EXTENDER            0x0000002a
#define FILE_DEVICE_MODEM                   0x0000002b
#define FILE_DEVICE_VDM                     0x0000002c
#define FILE_DEVICE_MASS_STORAGE            0x0000002d
#define FILE_DEVICE_SMB                     0x0000002e
#define FILE_DEVICE_KS                      0x0000002f
#define FILE_DEVICE_CHANGER                 0x00000030
#define FILE_DEVICE_SMARTCARD               0x00000031
#define FILE_DEVICE_ACPI                    0x00000032
#define FILE_DEVICE_DVD                     0x00000033
#define FILE_DEVICE_FULLSCREEN_VIDEO        0x00000034
#define FILE_DEVICE_DFS_FILE_SYSTEM         0x00000035
#define FILE_DEVICE_DFS_VOLUME              0x00000036
#define FILE_DEVICE_SERENUM                 0x00000037
#define FILE_DEVICE_TERMSRV                 0x00000038
#define FILE_DEVICE_KSEC                    0x00000039
#define FILE_DEVICE_FIPS                    0x0000003A
#define FILE_DEVICE_INFINIBAND              0x0000003B

/* Alignment (power-of-two alignments only, as in the WDK). */
#define ALIGN_DOWN_BY(length, alignment) ((ULONG_PTR)(length) & ~((ULONG_PTR)(alignment)-1))
#define ALIGN_UP_BY(length, alignment) \
    (ALIGN_DOWN_BY(((ULONG_PTR)(length) + (alignment)-1), alignment))
#define ALIGN_DOWN_POINTER_BY(address, alignment) \
    ((PVOID)((ULONG_PTR)(address) & ~((ULONG_PTR)(alignment)-1)))
#define ALIGN_UP_POINTER_BY(address, alignment) \
    (ALIGN_DOWN_POINTER_BY(((ULONG_PTR)(address) + (alignment)-1), alignment))
#define ALIGN_DOWN(length, type)          ALIGN_DOWN_BY(length, sizeof(type))
#define ALIGN_UP(length, type)            ALIGN_UP_BY(length, sizeof(type))
#define ALIGN_DOWN_POINTER(address, type) ALIGN_DOWN_POINTER_BY(address, sizeof(type))
#define ALIGN_UP_POINTER(address, type)   ALIGN_UP_POINTER_BY(address, sizeof(type))
#define Add2Ptr(P, I)                     ((PVOID)((PUCHAR)(P) + (I)))
#define PtrOffset(B, O)                   ((ULONG)((ULONG_PTR)(O) - (ULONG_PTR)(B)))

/* As on x64 Windows: the byte forms of the Rtl memory macros. */
#define RtlCopyBytes RtlCopyMemory
#define RtlZeroBytes RtlZeroMemory
#define RtlFillBytes RtlFillMemory

/* Byte swaps: compiler intrinsics, as the x64 WDK maps them. */
#define RtlUshortByteSwap(_x)    ((USHORT)__builtin_bswap16((USHORT)(_x)))
#define RtlUlongByteSwap(_x)     ((ULONG)__builtin_bswap32((ULONG)(_x)))
#define RtlUlonglongByteSwap(_x) ((ULONGLONG)__builtin_bswap64((ULONGLONG)(_x)))

/* ==== Rtl: bits, large-integer arithmetic, time fields. ================== */

typedef ULONG CLONG;
typedef const WCHAR *PCWCH;
typedef const CHAR *PCCH;

/* The index (0-63) of the lowest / highest set bit of Set, or -1 when Set is 0. */
NTSYSAPI CCHAR NTAPI RtlFindLeastSignificantBit(_In_ ULONGLONG Set);
NTSYSAPI CCHAR NTAPI RtlFindMostSignificantBit(_In_ ULONGLONG Set);
/* The number of bits set in Target. */
NTSYSAPI ULONG NTAPI RtlNumberOfSetBitsUlongPtr(_In_ ULONG_PTR Target);

/* Bitmaps: SizeOfBitMap bits in the caller's ULONG array Buffer (bit i is bit i % 32
 * of Buffer[i / 32]). The caller keeps the bits past SizeOfBitMap in the last ULONG
 * (they are neither read nor written). Ranges must lie inside the bitmap (else the call
 * reports it and aborts). RtlFind{Clear,Set}Bits search from HintIndex to the end, then
 * from 0, for NumberToFind consecutive clear / set bits and return the index of the
 * first, or 0xFFFFFFFF when there is no such run (NumberToFind 0 returns HintIndex
 * rounded down to a multiple of 8); the AndSet / AndClear forms also flip the run found. */
typedef struct _RTL_BITMAP {
    ULONG SizeOfBitMap;
    PULONG Buffer;
} RTL_BITMAP, *PRTL_BITMAP;
NTSYSAPI VOID NTAPI RtlInitializeBitMap(_Out_ PRTL_BITMAP BitMapHeader,
                                        _In_opt_ PULONG BitMapBuffer, _In_opt_ ULONG SizeOfBitMap);
NTSYSAPI VOID NTAPI RtlClearAllBits(_In_ PRTL_BITMAP BitMapHeader);
NTSYSAPI VOID NTAPI RtlSetAllBits(_In_ PRTL_BITMAP BitMapHeader);
NTSYSAPI VOID NTAPI RtlClearBit(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG BitNumber);
NTSYSAPI VOID NTAPI RtlSetBit(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG BitNumber);
NTSYSAPI BOOLEAN NTAPI RtlTestBit(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG BitNumber);
NTSYSAPI VOID NTAPI RtlClearBits(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG StartingIndex,
                                 _In_ ULONG NumberToClear);
NTSYSAPI VOID NTAPI RtlSetBits(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG StartingIndex,
                               _In_ ULONG NumberToSet);
NTSYSAPI BOOLEAN NTAPI RtlAreBitsClear(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG StartingIndex,
                                       _In_ ULONG Length);
NTSYSAPI BOOLEAN NTAPI RtlAreBitsSet(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG StartingIndex,
                                     _In_ ULONG Length);
NTSYSAPI ULONG NTAPI RtlNumberOfSetBits(_In_ PRTL_BITMAP BitMapHeader);
NTSYSAPI ULONG NTAPI RtlNumberOfClearBits(_In_ PRTL_BITMAP BitMapHeader);
NTSYSAPI ULONG NTAPI RtlFindClearBits(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG NumberToFind,
                                      _In_ ULONG HintIndex);
NTSYSAPI ULONG NTAPI RtlFindSetBits(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG NumberToFind,
                                    _In_ ULONG HintIndex);
NTSYSAPI ULONG NTAPI RtlFindClearBitsAndSet(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG NumberToFind,
                                            _In_ ULONG HintIndex);
NTSYSAPI ULONG NTAPI RtlFindSetBitsAndClear(_In_ PRTL_BITMAP BitMapHeader, _In_ ULONG NumberToFind,
                                            _In_ ULONG HintIndex);

/* Multiplicand * Multiplier, keeping the low 64 bits (two's complement). */
NTSYSAPI LARGE_INTEGER NTAPI RtlExtendedIntegerMultiply(_In_ LARGE_INTEGER Multiplicand,
                                                        _In_ LONG Multiplier);
/* Division by multiplication: the high 64 bits of |Dividend| * MagicDivisor (an unsigned
 * 128-bit product), shifted right by ShiftCount, with Dividend's sign. */
NTSYSAPI LARGE_INTEGER NTAPI RtlExtendedMagicDivide(_In_ LARGE_INTEGER Dividend,
                                                    _In_ LARGE_INTEGER MagicDivisor,
                                                    _In_ CCHAR ShiftCount);

/* A system time (100 ns units since 1601-01-01, Gregorian calendar, no leap seconds) split
 * into fields; Weekday 0 is Sunday. RtlTimeFieldsToTime is the inverse: FALSE (and Time
 * untouched) for fields outside their ranges or a date before 1601. */
typedef struct _TIME_FIELDS {
    CSHORT Year;         /* 1601... */
    CSHORT Month;        /* 1..12 */
    CSHORT Day;          /* 1..31 */
    CSHORT Hour;         /* 0..23 */
    CSHORT Minute;       /* 0..59 */
    CSHORT Second;       /* 0..59 */
    CSHORT Milliseconds; /* 0..999 */
    CSHORT Weekday;      /* 0..6 = Sunday..Saturday */
} TIME_FIELDS, *PTIME_FIELDS;
NTSYSAPI VOID NTAPI RtlTimeToTimeFields(_In_ PLARGE_INTEGER Time, _Out_ PTIME_FIELDS TimeFields);
NTSYSAPI BOOLEAN NTAPI RtlTimeFieldsToTime(_In_ PTIME_FIELDS TimeFields, _Out_ PLARGE_INTEGER Time);

/* ==== Rtl: generic tables. ============================================== *
 * An ordered set of caller-defined elements kept in a splay tree, as Windows'
 * RTL_GENERIC_TABLE: the caller's CompareRoutine orders elements, its
 * AllocateRoutine / FreeRoutine provide each node's memory (ByteSize covers the
 * tree links and list entry the table keeps in front of the element, plus the
 * element). The table is not synchronised: callers lock around it.
 *   RtlInsertElementGenericTable  copies BufferSize bytes of Buffer into a new
 *       node unless an equal element is present; returns the stored element (the
 *       new or the existing one) and sets *NewElement (optional) accordingly;
 *       NULL when the AllocateRoutine fails.
 *   RtlLookupElementGenericTable  the stored element equal to Buffer, or NULL.
 *   RtlDeleteElementGenericTable  removes and frees the element equal to Buffer;
 *       FALSE when there is none.
 *   RtlEnumerateGenericTable(Table, Restart)  the elements in ascending order:
 *       TRUE gives the first, FALSE the one after the last returned (NULL at the
 *       end). RtlEnumerateGenericTableWithoutSplaying keeps the position in
 *       *RestartKey (NULL to start). RtlGetElementGenericTable(Table, I) is the
 *       I-th element in INSERTION order (0-based), NULL past the end.
 * Splaying reorganises the tree on lookups: do not delete while enumerating. */
typedef struct _RTL_SPLAY_LINKS {
    struct _RTL_SPLAY_LINKS *Parent;
    struct _RTL_SPLAY_LINKS *LeftChild;
    struct _RTL_SPLAY_LINKS *RightChild;
} RTL_SPLAY_LINKS, *PRTL_SPLAY_LINKS;

typedef enum _RTL_GENERIC_COMPARE_RESULTS {
    GenericLessThan,
    GenericGreaterThan,
    GenericEqual
} RTL_GENERIC_COMPARE_RESULTS;

struct _RTL_GENERIC_TABLE;
typedef _IRQL_requires_same_ _Function_class_(RTL_GENERIC_COMPARE_ROUTINE)
    RTL_GENERIC_COMPARE_RESULTS NTAPI
    RTL_GENERIC_COMPARE_ROUTINE(_In_ struct _RTL_GENERIC_TABLE *Table, _In_ PVOID FirstStruct,
                                _In_ PVOID SecondStruct);
typedef RTL_GENERIC_COMPARE_ROUTINE *PRTL_GENERIC_COMPARE_ROUTINE;
typedef _IRQL_requires_same_ _Function_class_(RTL_GENERIC_ALLOCATE_ROUTINE) PVOID NTAPI
    RTL_GENERIC_ALLOCATE_ROUTINE(_In_ struct _RTL_GENERIC_TABLE *Table, _In_ CLONG ByteSize);
typedef RTL_GENERIC_ALLOCATE_ROUTINE *PRTL_GENERIC_ALLOCATE_ROUTINE;
typedef _IRQL_requires_same_ _Function_class_(RTL_GENERIC_FREE_ROUTINE) VOID NTAPI
    RTL_GENERIC_FREE_ROUTINE(_In_ struct _RTL_GENERIC_TABLE *Table,
                             _In_ __drv_freesMem(Mem) _Post_invalid_ PVOID Buffer);
typedef RTL_GENERIC_FREE_ROUTINE *PRTL_GENERIC_FREE_ROUTINE;

typedef struct _RTL_GENERIC_TABLE {
    PRTL_SPLAY_LINKS TableRoot;
    LIST_ENTRY InsertOrderList;
    PLIST_ENTRY OrderedPointer;
    ULONG WhichOrderedElement;
    ULONG NumberGenericTableElements;
    PRTL_GENERIC_COMPARE_ROUTINE CompareRoutine;
    PRTL_GENERIC_ALLOCATE_ROUTINE AllocateRoutine;
    PRTL_GENERIC_FREE_ROUTINE FreeRoutine;
    PVOID TableContext;
} RTL_GENERIC_TABLE, *PRTL_GENERIC_TABLE;

NTSYSAPI VOID NTAPI RtlInitializeGenericTable(_Out_ PRTL_GENERIC_TABLE Table,
                                              _In_ PRTL_GENERIC_COMPARE_ROUTINE CompareRoutine,
                                              _In_ PRTL_GENERIC_ALLOCATE_ROUTINE AllocateRoutine,
                                              _In_ PRTL_GENERIC_FREE_ROUTINE FreeRoutine,
                                              _In_opt_ PVOID TableContext);
NTSYSAPI PVOID NTAPI RtlInsertElementGenericTable(_In_ PRTL_GENERIC_TABLE Table,
                                                  _In_reads_bytes_(BufferSize) PVOID Buffer,
                                                  _In_ CLONG BufferSize,
                                                  _Out_opt_ PBOOLEAN NewElement);
NTSYSAPI BOOLEAN NTAPI RtlDeleteElementGenericTable(_In_ PRTL_GENERIC_TABLE Table,
                                                    _In_ PVOID Buffer);
NTSYSAPI PVOID NTAPI RtlLookupElementGenericTable(_In_ PRTL_GENERIC_TABLE Table, _In_ PVOID Buffer);
NTSYSAPI PVOID NTAPI RtlEnumerateGenericTable(_In_ PRTL_GENERIC_TABLE Table, _In_ BOOLEAN Restart);
NTSYSAPI PVOID NTAPI RtlEnumerateGenericTableWithoutSplaying(_In_ PRTL_GENERIC_TABLE Table,
                                                             _Inout_ PVOID *RestartKey);
NTSYSAPI PVOID NTAPI RtlGetElementGenericTable(_In_ PRTL_GENERIC_TABLE Table, _In_ ULONG I);
NTSYSAPI ULONG NTAPI RtlNumberGenericTableElements(_In_ PRTL_GENERIC_TABLE Table);
NTSYSAPI BOOLEAN NTAPI RtlIsGenericTableEmpty(_In_ PRTL_GENERIC_TABLE Table);

/* ==== Rtl: counted strings beyond wdm.h's core. ========================== *
 * The "ANSI" code page is UTF-8 here (Windows' is the system code page, often
 * 1252); for ASCII text the results are the same. Allocated buffers come from
 * pool (ExAllocatePoolWithTag, tag 'Strg') and are released with
 * RtlFreeUnicodeString / RtlFreeAnsiString.
 *   RtlAnsiStringToUnicodeString  converts Source into Destination: with
 *       AllocateDestinationString a new buffer of the needed size plus a
 *       terminator (STATUS_NO_MEMORY when pool fails), else the caller's buffer,
 *       which must hold the result AND a terminator (else STATUS_BUFFER_OVERFLOW,
 *       Destination unchanged). A result longer than a UNICODE_STRING can hold is
 *       STATUS_INVALID_PARAMETER_2. RtlUnicodeStringToAnsiString is the reverse.
 *   RtlFreeUnicodeString / RtlFreeAnsiString  free Buffer (if not NULL) and zero
 *       the string.
 *   RtlAppendUnicodeStringToString / RtlAppendUnicodeToString  append Source;
 *       STATUS_BUFFER_TOO_SMALL (Destination unchanged) when it does not fit;
 *       a terminator is written when room is left after the result.
 *   RtlCompareUnicodeStrings  as RtlCompareUnicodeString, on counted character
 *       arrays (lengths in characters).
 *   RtlUnicodeStringToInteger  skips leading white space, takes an optional +/-
 *       sign; Base 0 reads a 0x / 0o / 0b prefix (hex / octal / binary) and is
 *       decimal otherwise; Base must be 0, 2, 8, 10 or 16 (else
 *       STATUS_INVALID_PARAMETER). Digits are read up to the first character
 *       that is not one in Base (no digit gives 0); the value wraps at 32 bits
 *       and a '-' negates it.
 *   RtlUnicodeToMultiByteN  converts BytesInUnicodeString bytes of wide text to
 *       UTF-8, storing whole characters while they fit in
 *       MaxBytesInMultiByteString (no terminator); *BytesInMultiByteString
 *       (optional) gets the bytes written. Always STATUS_SUCCESS, as Windows
 *       (which truncates silently). */
NTSYSAPI NTSTATUS NTAPI RtlAnsiStringToUnicodeString(_When_(AllocateDestinationString, _Out_)
                                                         _When_(!AllocateDestinationString, _Inout_)
                                                             PUNICODE_STRING DestinationString,
                                                     _In_ PCANSI_STRING SourceString,
                                                     _In_ BOOLEAN AllocateDestinationString);
NTSYSAPI NTSTATUS NTAPI RtlUnicodeStringToAnsiString(_When_(AllocateDestinationString, _Out_)
                                                         _When_(!AllocateDestinationString, _Inout_)
                                                             PANSI_STRING DestinationString,
                                                     _In_ PCUNICODE_STRING SourceString,
                                                     _In_ BOOLEAN AllocateDestinationString);
NTSYSAPI VOID NTAPI RtlFreeUnicodeString(_Inout_ PUNICODE_STRING UnicodeString);
NTSYSAPI VOID NTAPI RtlFreeAnsiString(_Inout_ PANSI_STRING AnsiString);
NTSYSAPI NTSTATUS NTAPI RtlAppendUnicodeStringToString(_Inout_ PUNICODE_STRING Destination,
                                                       _In_ PCUNICODE_STRING Source);
NTSYSAPI NTSTATUS NTAPI RtlAppendUnicodeToString(_Inout_ PUNICODE_STRING Destination,
                                                 _In_opt_z_ PCWSTR Source);
NTSYSAPI LONG NTAPI RtlCompareUnicodeStrings(_In_reads_(String1Length) PCWCH String1,
                                             _In_ SIZE_T String1Length,
                                             _In_reads_(String2Length) PCWCH String2,
                                             _In_ SIZE_T String2Length,
                                             _In_ BOOLEAN CaseInSensitive);
NTSYSAPI NTSTATUS NTAPI RtlUnicodeStringToInteger(_In_ PCUNICODE_STRING String, _In_opt_ ULONG Base,
                                                  _Out_ PULONG Value);
NTSYSAPI NTSTATUS NTAPI RtlUnicodeToMultiByteN(
    _Out_writes_bytes_to_(MaxBytesInMultiByteString, *BytesInMultiByteString) PCHAR MultiByteString,
    _In_ ULONG MaxBytesInMultiByteString, _Out_opt_ PULONG BytesInMultiByteString,
    _In_reads_bytes_(BytesInUnicodeString) PCWCH UnicodeString, _In_ ULONG BytesInUnicodeString);

/* ==== I/O manager. ======================================================= */

/* IRP.Flags (Windows' values). */
#define IRP_NOCACHE               0x00000001
#define IRP_PAGING_IO             0x00000002
#define IRP_MOUNT_COMPLETION      0x00000002
#define IRP_SYNCHRONOUS_API       0x00000004
#define IRP_ASSOCIATED_IRP        0x00000008
#define IRP_BUFFERED_IO           0x00000010
#define IRP_DEALLOCATE_BUFFER     0x00000020
#define IRP_INPUT_OPERATION       0x00000040
#define IRP_SYNCHRONOUS_PAGING_IO 0x00000040
#define IRP_CREATE_OPERATION      0x00000080
#define IRP_READ_OPERATION        0x00000100
#define IRP_WRITE_OPERATION       0x00000200
#define IRP_CLOSE_OPERATION       0x00000400
#define IRP_DEFER_IO_COMPLETION   0x00000800

#define IO_TYPE_FILE                  5
#define CANCEL_STATE_IN_COMPLETED_IRP 0x00000048

/* (Shared types carry SOFTNDK_<TYPE>_DEFINED guards, so that another part header may
 * define them too.) The leading part of Windows' x64 FILE_OBJECT (offsets as on Windows). The
 * runtime creates one per IoGetDeviceObjectPointer. */
#ifndef SOFTNDK_FILE_OBJECT_DEFINED
#define SOFTNDK_FILE_OBJECT_DEFINED
typedef struct _FILE_OBJECT {
    CSHORT Type; /* IO_TYPE_FILE */
    CSHORT Size;
    PDEVICE_OBJECT DeviceObject;
    PVPB Vpb;
    PVOID FsContext;
    PVOID FsContext2;
    PVOID SectionObjectPointer;
    PVOID PrivateCacheMap;
    NTSTATUS FinalStatus;
    struct _FILE_OBJECT *RelatedFileObject;
    BOOLEAN LockOperation;
    BOOLEAN DeletePending;
    BOOLEAN ReadAccess;
    BOOLEAN WriteAccess;
    BOOLEAN DeleteAccess;
    BOOLEAN SharedRead;
    BOOLEAN SharedWrite;
    BOOLEAN SharedDelete;
    ULONG Flags;
    UNICODE_STRING FileName;
    LARGE_INTEGER CurrentByteOffset;
} FILE_OBJECT;
#endif

#ifndef FILE_READ_DATA
#define FILE_READ_DATA 0x0001
#endif
#ifndef FILE_WRITE_DATA
#define FILE_WRITE_DATA 0x0002
#endif
#ifndef FILE_ALL_ACCESS
#define FILE_ALL_ACCESS (STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0x1FF)
#endif

/* ---- Device stacks and names. IoCreateDevice (wdm.h) enters a named device in
 * the runtime's object name space (a name already taken fails with
 * STATUS_OBJECT_NAME_COLLISION; names compare case-insensitively, as the object
 * manager does) and IoDeleteDevice removes it.
 *   IoAttachDeviceToDeviceStack(Source, Target)  puts Source on top of Target's
 *       stack: returns the device that was on top (Source's lower device, to pass
 *       IRPs to), sets its AttachedDevice to Source and Source->StackSize to its
 *       StackSize + 1. NULL when Target is NULL.
 *   IoDetachDevice(Target)  removes the device attached on top of Target.
 *   IoGetAttachedDeviceReference(Device)  the highest device of Device's stack,
 *       with a reference the caller releases with ObDereferenceObject.
 *   IoGetDeviceObjectPointer(Name, Access, &FileObject, &DeviceObject)  opens the
 *       named device as Windows does: sends IRP_MJ_CREATE (with the new
 *       FILE_OBJECT in its stack location) to the highest device of its stack and
 *       waits for it; a failed create is returned. On success *DeviceObject is that
 *       highest device and *FileObject a referenced FILE_OBJECT: the caller's
 *       ObDereferenceObject(FileObject) sends IRP_MJ_CLEANUP and IRP_MJ_CLOSE and
 *       frees it. STATUS_OBJECT_NAME_NOT_FOUND for an unknown name. PASSIVE_LEVEL.
 * A device with references (IoGetAttachedDeviceReference, an open FILE_OBJECT)
 * that IoDeleteDevice deletes is freed at its last ObDereferenceObject, as on
 * Windows. */
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PDEVICE_OBJECT NTAPI
    IoAttachDeviceToDeviceStack(_In_ PDEVICE_OBJECT SourceDevice, _In_ PDEVICE_OBJECT TargetDevice);
_IRQL_requires_max_(PASSIVE_LEVEL) NTKERNELAPI VOID NTAPI
    IoDetachDevice(_Inout_ PDEVICE_OBJECT TargetDevice);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PDEVICE_OBJECT NTAPI
    IoGetAttachedDeviceReference(_In_ PDEVICE_OBJECT DeviceObject);
NTKERNELAPI PDEVICE_OBJECT NTAPI IoGetAttachedDevice(_In_ PDEVICE_OBJECT DeviceObject);
_IRQL_requires_max_(PASSIVE_LEVEL) NTKERNELAPI NTSTATUS NTAPI
    IoGetDeviceObjectPointer(_In_ PUNICODE_STRING ObjectName, _In_ ACCESS_MASK DesiredAccess,
                             _Out_ PFILE_OBJECT *FileObject, _Out_ PDEVICE_OBJECT *DeviceObject);

/* ---- IRPs the I/O manager builds. Both return an IRP with DeviceObject->StackSize
 * locations whose first (next) location is filled in; send it with IoCallDriver.
 * When it completes to the top, the I/O manager part of IoCompleteRequest copies
 * buffered output back (IRP_BUFFERED_IO with IRP_INPUT_OPERATION, unless the
 * status is an error: Information bytes), frees the system buffer, unlocks and
 * frees the IRP's MDLs, stores IoStatus in *IoStatusBlock, sets Event and FREES
 * the IRP (so the caller must not touch it after completion; a completion routine
 * returning STATUS_MORE_PROCESSING_REQUIRED keeps it, and then the caller owns and
 * frees it). NULL when out of pool.
 *   IoBuildDeviceIoControlRequest  IRP_MJ_[INTERNAL_]DEVICE_CONTROL with the
 *       code's transfer method: METHOD_BUFFERED copies InputBuffer into a system
 *       buffer of max(InputBufferLength, OutputBufferLength) bytes and output back
 *       to OutputBuffer; METHOD_IN/OUT_DIRECT buffer the input and describe
 *       OutputBuffer with a locked MDL (Irp->MdlAddress); METHOD_NEITHER passes the
 *       caller's pointers (Type3InputBuffer, UserBuffer).
 *   IoBuildSynchronousFsdRequest  IRP_MJ_READ / IRP_MJ_WRITE (Length, ByteOffset =
 *       *StartingOffset or 0) with Buffer as the device wants it (DO_BUFFERED_IO:
 *       a system buffer; DO_DIRECT_IO: a locked MDL; else UserBuffer), or any other
 *       major function without a buffer (IRP_MJ_FLUSH_BUFFERS, IRP_MJ_SHUTDOWN, ...).
 *   IoBuildAsynchronousFsdRequest  the same without an event: the IRP is NOT freed at
 *       completion; the caller's completion routine unlocks and frees its MDLs
 *       (MmUnlockPages, IoFreeMdl), frees it with IoFreeIrp (which also frees a
 *       system buffer the I/O manager allocated) and returns
 *       STATUS_MORE_PROCESSING_REQUIRED, as on Windows. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTKERNELAPI PIRP NTAPI
    IoBuildDeviceIoControlRequest(_In_ ULONG IoControlCode, _In_ PDEVICE_OBJECT DeviceObject,
                                  _In_opt_ PVOID InputBuffer, _In_ ULONG InputBufferLength,
                                  _Out_opt_ PVOID OutputBuffer, _In_ ULONG OutputBufferLength,
                                  _In_ BOOLEAN InternalDeviceIoControl, _In_opt_ PKEVENT Event,
                                  _Out_ PIO_STATUS_BLOCK IoStatusBlock);
_IRQL_requires_max_(PASSIVE_LEVEL) NTKERNELAPI PIRP NTAPI
    IoBuildSynchronousFsdRequest(_In_ ULONG MajorFunction, _In_ PDEVICE_OBJECT DeviceObject,
                                 _Inout_opt_ PVOID Buffer, _In_opt_ ULONG Length,
                                 _In_opt_ PLARGE_INTEGER StartingOffset, _In_ PKEVENT Event,
                                 _Out_ PIO_STATUS_BLOCK IoStatusBlock);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PIRP NTAPI
    IoBuildAsynchronousFsdRequest(_In_ ULONG MajorFunction, _In_ PDEVICE_OBJECT DeviceObject,
                                  _Inout_opt_ PVOID Buffer, _In_opt_ ULONG Length,
                                  _In_opt_ PLARGE_INTEGER StartingOffset,
                                  _In_opt_ PIO_STATUS_BLOCK IoStatusBlock);

/* Initialises a caller-allocated IRP of PacketSize bytes (at least
 * IoSizeOfIrp(StackSize)) as IoAllocateIrp would. */
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoInitializeIrp(_Inout_updates_bytes_(PacketSize) PIRP Irp, _In_ USHORT PacketSize,
                    _In_ CCHAR StackSize);

/* Merges an associated IRP's Status into its master IRP, as the WDK's inline:
 * STATUS_FT_READ_FROM_COPY is ignored; STATUS_VERIFY_REQUIRED always wins; an
 * error replaces success; of two errors the numerically greater wins. */
FORCEINLINE VOID IoSetMasterIrpStatus(_Inout_ PIRP MasterIrp, _In_ NTSTATUS Status) {
    NTSTATUS MasterStatus = MasterIrp->IoStatus.Status;
    if (Status == STATUS_FT_READ_FROM_COPY) return;
    if ((Status == STATUS_VERIFY_REQUIRED) ||
        (MasterStatus == STATUS_SUCCESS && !NT_SUCCESS(Status)) ||
        (!NT_SUCCESS(MasterStatus) && !NT_SUCCESS(Status) && Status > MasterStatus)) {
        MasterIrp->IoStatus.Status = Status;
    }
}

/* Partial MDL: TargetMdl describes Length bytes of SourceMdl's buffer from
 * VirtualAddress (Length 0: to the end of the source), with its pages and, when the
 * source is mapped or built for non-paged pool, its system address. The range must
 * lie inside the source and TargetMdl must be big enough (MmSizeOfMdl), else the
 * call reports it and aborts (Windows bug-checks). */
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoBuildPartialMdl(_In_ PMDL SourceMdl, _Inout_ PMDL TargetMdl, _In_ PVOID VirtualAddress,
                      _In_ ULONG Length);

/* ---- Cancellation. One process-wide cancel spin lock, as on Windows.
 *   IoSetCancelRoutine  swaps Irp->CancelRoutine atomically, returns the old one.
 *   IoCancelIrp  under the cancel spin lock: sets Irp->Cancel, takes the cancel
 *       routine; if there was one, calls it with Irp->CancelIrql set and the lock
 *       still held (the routine must release it with
 *       IoReleaseCancelSpinLock(Irp->CancelIrql)) and returns TRUE; else releases
 *       the lock and returns FALSE.
 * IoCompleteRequest on an IRP that still has a cancel routine bug-checks
 * CANCEL_STATE_IN_COMPLETED_IRP, as on Windows. */
/* An inline function rather than the WDK's macro, so that the common statement
 * `IoSetCancelRoutine(Irp, NULL);` compiles without an unused-value warning. */
FORCEINLINE PDRIVER_CANCEL IoSetCancelRoutine(_Inout_ PIRP Irp,
                                              _In_opt_ PDRIVER_CANCEL NewCancelRoutine) {
    return (PDRIVER_CANCEL)(ULONG_PTR)InterlockedExchangePointer(
        (PVOID volatile *)&Irp->CancelRoutine, (PVOID)(ULONG_PTR)NewCancelRoutine);
}
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI BOOLEAN NTAPI IoCancelIrp(_In_ PIRP Irp);
_IRQL_requires_max_(DISPATCH_LEVEL) _IRQL_raises_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoAcquireCancelSpinLock(_Out_ _At_(*Irql, _IRQL_saves_) PKIRQL Irql);
_IRQL_requires_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoReleaseCancelSpinLock(_In_ _IRQL_restores_ KIRQL Irql);

/* ---- Cancel-safe IRP queues (IO_CSQ), Windows' protocol: the driver supplies the
 * queue (insert / remove / peek routines) and its lock; the runtime handles the
 * cancel routine. A queued IRP is marked pending; its Tail.Overlay.DriverContext[3]
 * belongs to the queue while it is queued. A queued IRP that is cancelled
 * (IoCancelIrp) is removed under the queue's lock and handed to
 * CsqCompleteCanceledIrp; one cancelled before or while being inserted is handed
 * over at once. IoCsqRemoveNextIrp returns the first IRP (per CsqPeekNextIrp and
 * PeekContext) that is not being cancelled, or NULL; IoCsqRemoveIrp removes the IRP
 * a context was inserted with, or returns NULL when it is gone (cancelled or
 * removed). IoCsqInsertIrpEx returns what CsqInsertIrpEx returned (an error leaves
 * the IRP unqueued); IoCsqInitialize[Ex] always succeed. */
#define IO_TYPE_CSQ_IRP_CONTEXT 1
#define IO_TYPE_CSQ             2
#define IO_TYPE_CSQ_EX          3

struct _IO_CSQ;
typedef struct _IO_CSQ_IRP_CONTEXT {
    ULONG Type;
    PIRP Irp;
    struct _IO_CSQ *Csq;
} IO_CSQ_IRP_CONTEXT, *PIO_CSQ_IRP_CONTEXT;

typedef _IRQL_requires_max_(DISPATCH_LEVEL) _Function_class_(IO_CSQ_INSERT_IRP) VOID NTAPI
    IO_CSQ_INSERT_IRP(_In_ struct _IO_CSQ *Csq, _In_ PIRP Irp);
typedef IO_CSQ_INSERT_IRP *PIO_CSQ_INSERT_IRP;
typedef _IRQL_requires_max_(DISPATCH_LEVEL) _Function_class_(IO_CSQ_INSERT_IRP_EX) NTSTATUS NTAPI
    IO_CSQ_INSERT_IRP_EX(_In_ struct _IO_CSQ *Csq, _In_ PIRP Irp, _In_ PVOID InsertContext);
typedef IO_CSQ_INSERT_IRP_EX *PIO_CSQ_INSERT_IRP_EX;
typedef _IRQL_requires_max_(DISPATCH_LEVEL) _Function_class_(IO_CSQ_REMOVE_IRP) VOID NTAPI
    IO_CSQ_REMOVE_IRP(_In_ struct _IO_CSQ *Csq, _In_ PIRP Irp);
typedef IO_CSQ_REMOVE_IRP *PIO_CSQ_REMOVE_IRP;
typedef _IRQL_requires_max_(DISPATCH_LEVEL) _Function_class_(IO_CSQ_PEEK_NEXT_IRP) PIRP NTAPI
    IO_CSQ_PEEK_NEXT_IRP(_In_ struct _IO_CSQ *Csq, _In_opt_ PIRP Irp, _In_opt_ PVOID PeekContext);
typedef IO_CSQ_PEEK_NEXT_IRP *PIO_CSQ_PEEK_NEXT_IRP;
typedef _IRQL_requires_max_(DISPATCH_LEVEL) _Function_class_(IO_CSQ_ACQUIRE_LOCK) VOID NTAPI
    IO_CSQ_ACQUIRE_LOCK(_In_ struct _IO_CSQ *Csq, _Out_ PKIRQL Irql);
typedef IO_CSQ_ACQUIRE_LOCK *PIO_CSQ_ACQUIRE_LOCK;
typedef _IRQL_requires_max_(DISPATCH_LEVEL) _Function_class_(IO_CSQ_RELEASE_LOCK) VOID NTAPI
    IO_CSQ_RELEASE_LOCK(_In_ struct _IO_CSQ *Csq, _In_ KIRQL Irql);
typedef IO_CSQ_RELEASE_LOCK *PIO_CSQ_RELEASE_LOCK;
typedef _IRQL_requires_max_(DISPATCH_LEVEL)
    _Function_class_(IO_CSQ_COMPLETE_CANCELED_IRP) VOID NTAPI
    IO_CSQ_COMPLETE_CANCELED_IRP(_In_ struct _IO_CSQ *Csq, _In_ PIRP Irp);
typedef IO_CSQ_COMPLETE_CANCELED_IRP *PIO_CSQ_COMPLETE_CANCELED_IRP;

typedef struct _IO_CSQ {
    ULONG Type;
    PIO_CSQ_INSERT_IRP CsqInsertIrp;
    PIO_CSQ_REMOVE_IRP CsqRemoveIrp;
    PIO_CSQ_PEEK_NEXT_IRP CsqPeekNextIrp;
    PIO_CSQ_ACQUIRE_LOCK CsqAcquireLock;
    PIO_CSQ_RELEASE_LOCK CsqReleaseLock;
    PIO_CSQ_COMPLETE_CANCELED_IRP CsqCompleteCanceledIrp;
    PVOID ReservePointer;
} IO_CSQ, *PIO_CSQ;

_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI NTSTATUS NTAPI
    IoCsqInitialize(_Out_ PIO_CSQ Csq, _In_ PIO_CSQ_INSERT_IRP CsqInsertIrp,
                    _In_ PIO_CSQ_REMOVE_IRP CsqRemoveIrp, _In_ PIO_CSQ_PEEK_NEXT_IRP CsqPeekNextIrp,
                    _In_ PIO_CSQ_ACQUIRE_LOCK CsqAcquireLock,
                    _In_ PIO_CSQ_RELEASE_LOCK CsqReleaseLock,
                    _In_ PIO_CSQ_COMPLETE_CANCELED_IRP CsqCompleteCanceledIrp);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI NTSTATUS NTAPI
    IoCsqInitializeEx(_Out_ PIO_CSQ Csq, _In_ PIO_CSQ_INSERT_IRP_EX CsqInsertIrp,
                      _In_ PIO_CSQ_REMOVE_IRP CsqRemoveIrp,
                      _In_ PIO_CSQ_PEEK_NEXT_IRP CsqPeekNextIrp,
                      _In_ PIO_CSQ_ACQUIRE_LOCK CsqAcquireLock,
                      _In_ PIO_CSQ_RELEASE_LOCK CsqReleaseLock,
                      _In_ PIO_CSQ_COMPLETE_CANCELED_IRP CsqCompleteCanceledIrp);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoCsqInsertIrp(_Inout_ PIO_CSQ Csq, _Inout_ PIRP Irp, _Out_opt_ PIO_CSQ_IRP_CONTEXT Context);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI NTSTATUS NTAPI
    IoCsqInsertIrpEx(_Inout_ PIO_CSQ Csq, _Inout_ PIRP Irp, _Out_opt_ PIO_CSQ_IRP_CONTEXT Context,
                     _In_opt_ PVOID InsertContext);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PIRP NTAPI
    IoCsqRemoveNextIrp(_Inout_ PIO_CSQ Csq, _In_opt_ PVOID PeekContext);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PIRP NTAPI
    IoCsqRemoveIrp(_Inout_ PIO_CSQ Csq, _Inout_ PIO_CSQ_IRP_CONTEXT Context);

/* ---- Remove locks (free-build layout: the common block only).
 *   IoInitializeRemoveLock  count 1 (the device's own), not removed.
 *   IoAcquireRemoveLock  STATUS_SUCCESS and one more reference, or
 *       STATUS_DELETE_PENDING once IoReleaseRemoveLockAndWait has started.
 *   IoReleaseRemoveLock  drops one reference; releasing more than was acquired is
 *       reported and aborts.
 *   IoReleaseRemoveLockAndWait  (PASSIVE_LEVEL; the caller holds one acquisition)
 *       marks the lock removed, drops the caller's and the initial reference and
 *       waits until every other holder has released. Tags are not tracked. */
typedef struct _IO_REMOVE_LOCK_COMMON_BLOCK {
    BOOLEAN Removed;
    BOOLEAN Reserved[3];
    volatile LONG IoCount;
    KEVENT RemoveEvent;
} IO_REMOVE_LOCK_COMMON_BLOCK;
typedef struct _IO_REMOVE_LOCK {
    IO_REMOVE_LOCK_COMMON_BLOCK Common;
} IO_REMOVE_LOCK, *PIO_REMOVE_LOCK;

NTKERNELAPI VOID NTAPI IoInitializeRemoveLockEx(_Out_ PIO_REMOVE_LOCK Lock, _In_ ULONG AllocateTag,
                                                _In_ ULONG MaxLockedMinutes,
                                                _In_ ULONG HighWatermark, _In_ ULONG RemlockSize);
_Must_inspect_result_ NTKERNELAPI NTSTATUS NTAPI
IoAcquireRemoveLockEx(_Inout_ PIO_REMOVE_LOCK RemoveLock, _In_opt_ PVOID Tag, _In_ PCSTR File,
                      _In_ ULONG Line, _In_ ULONG RemlockSize);
NTKERNELAPI VOID NTAPI IoReleaseRemoveLockEx(_Inout_ PIO_REMOVE_LOCK RemoveLock, _In_opt_ PVOID Tag,
                                             _In_ ULONG RemlockSize);
_IRQL_requires_(PASSIVE_LEVEL) NTKERNELAPI VOID NTAPI
    IoReleaseRemoveLockAndWaitEx(_Inout_ PIO_REMOVE_LOCK RemoveLock, _In_opt_ PVOID Tag,
                                 _In_ ULONG RemlockSize);
#define IoInitializeRemoveLock(Lock, AllocateTag, MaxLockedMinutes, HighWatermark) \
    IoInitializeRemoveLockEx(Lock, AllocateTag, MaxLockedMinutes, HighWatermark,   \
                             sizeof(IO_REMOVE_LOCK))
#define IoAcquireRemoveLock(RemoveLock, Tag) \
    IoAcquireRemoveLockEx(RemoveLock, Tag, __FILE__, __LINE__, sizeof(IO_REMOVE_LOCK))
#define IoReleaseRemoveLock(RemoveLock, Tag) \
    IoReleaseRemoveLockEx(RemoveLock, Tag, sizeof(IO_REMOVE_LOCK))
#define IoReleaseRemoveLockAndWait(RemoveLock, Tag) \
    IoReleaseRemoveLockAndWaitEx(RemoveLock, Tag, sizeof(IO_REMOVE_LOCK))

/* ---- Start-I/O packets: the device's queue of IRPs for DriverObject->DriverStartIo.
 *   IoStartPacket(Device, Irp, Key, CancelFunction)  at DISPATCH_LEVEL: sets the
 *       cancel routine (if given) under the cancel spin lock; if the device is idle
 *       it becomes busy with Irp (Device->CurrentIrp) and DriverStartIo runs now,
 *       else Irp is queued (in ascending Key order when Key is given, FIFO among
 *       equal keys). A queued IRP already cancelled is handed to CancelFunction.
 *   IoStartNextPacket(Device, Cancelable)  (DISPATCH_LEVEL, usually from the
 *       DPC that finishes CurrentIrp) the next queued IRP goes to DriverStartIo, or
 *       the device becomes idle (CurrentIrp NULL). IoStartNextPacketByKey takes
 *       the first IRP whose key is >= Key (else the first).
 *   IoSetStartIoAttributes(Device, DeferredStartIo, NonCancelable)
 *       DeferredStartIo: a start-next from inside DriverStartIo runs after it
 *       returns instead of recursing; NonCancelable: the cancel routine is cleared
 *       before DriverStartIo gets the IRP.
 * The queue is the runtime's (Windows' KDEVICE_QUEUE is not part of this
 * DEVICE_OBJECT): a cancel routine of a queued packet cannot dequeue it with
 * KeRemoveEntryDeviceQueue; IoRemoveStartIoPacket (SoftNDK) does that. */
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoStartPacket(_In_ PDEVICE_OBJECT DeviceObject, _In_ PIRP Irp, _In_opt_ PULONG Key,
                  _In_opt_ PDRIVER_CANCEL CancelFunction);
_IRQL_requires_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoStartNextPacket(_In_ PDEVICE_OBJECT DeviceObject, _In_ BOOLEAN Cancelable);
_IRQL_requires_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoStartNextPacketByKey(_In_ PDEVICE_OBJECT DeviceObject, _In_ BOOLEAN Cancelable,
                           _In_ ULONG Key);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    IoSetStartIoAttributes(_In_ PDEVICE_OBJECT DeviceObject, _In_ BOOLEAN DeferredStartIo,
                           _In_ BOOLEAN NonCancelable);
/* SoftNDK: removes a queued (not current) packet from the device's start-I/O queue;
 * TRUE if it was queued. For cancel routines, in place of KeRemoveEntryDeviceQueue. */
NTKERNELAPI BOOLEAN NTAPI IoRemoveStartIoPacket(_In_ PDEVICE_OBJECT DeviceObject, _In_ PIRP Irp);

/* ---- Driver object extensions: zeroed blocks keyed by (driver, caller's address).
 * STATUS_OBJECT_NAME_COLLISION when the key exists, STATUS_INSUFFICIENT_RESOURCES
 * when out of memory. They live as long as the process (a DRIVER_OBJECT is never
 * deleted here). IoGetDriverObjectExtension returns NULL for an unknown key. */
_IRQL_requires_max_(APC_LEVEL) _Must_inspect_result_ NTKERNELAPI NTSTATUS NTAPI
    IoAllocateDriverObjectExtension(_In_ PDRIVER_OBJECT DriverObject,
                                    _In_ PVOID ClientIdentificationAddress,
                                    _In_ ULONG DriverObjectExtensionSize,
                                    _Outptr_result_maybenull_ PVOID *DriverObjectExtension);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PVOID NTAPI
    IoGetDriverObjectExtension(_In_ PDRIVER_OBJECT DriverObject,
                               _In_ PVOID ClientIdentificationAddress);

/* ---- Error log. IoAllocateErrorLogEntry(IoObject, EntrySize) returns a zeroed
 * entry of EntrySize bytes (sizeof(IO_ERROR_LOG_PACKET) to ERROR_LOG_MAXIMUM_SIZE;
 * else, or for a NULL IoObject, NULL). IoWriteErrorLogEntry logs it through the
 * "wdk" logger at error level (device or driver, ErrorCode, UniqueErrorValue,
 * FinalStatus, MajorFunctionCode, the insertion strings and the dump data) and
 * frees it; IoFreeErrorLogEntry frees it unlogged. */
typedef struct _IO_ERROR_LOG_PACKET {
    UCHAR MajorFunctionCode;
    UCHAR RetryCount;
    USHORT DumpDataSize;
    USHORT NumberOfStrings;
    USHORT StringOffset;
    USHORT EventCategory;
    NTSTATUS ErrorCode;
    ULONG UniqueErrorValue;
    NTSTATUS FinalStatus;
    ULONG SequenceNumber;
    ULONG IoControlCode;
    LARGE_INTEGER DeviceOffset;
    ULONG DumpData[1];
} IO_ERROR_LOG_PACKET, *PIO_ERROR_LOG_PACKET;
#define ERROR_LOG_LIMIT_SIZE   (256 - 16)
#define ERROR_LOG_MAXIMUM_SIZE ERROR_LOG_LIMIT_SIZE
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PVOID NTAPI
    IoAllocateErrorLogEntry(_In_ PVOID IoObject, _In_ UCHAR EntrySize);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI IoWriteErrorLogEntry(_In_ PVOID ElEntry);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI IoFreeErrorLogEntry(_In_ PVOID ElEntry);

/* ---- Per-IRP attributes (kept beside the IRP; cleared by IoFreeIrp / IoReuseIrp).
 *   IoSetActivityIdIrp / IoGetActivityIdIrp  an ETW activity GUID;
 *       IoGetActivityIdIrp is STATUS_NOT_FOUND when none was set; a NULL Guid
 *       to IoSetActivityIdIrp (meaning "the current thread's") is
 *       STATUS_NOT_FOUND: threads carry no activity id here.
 *   IoSetIoPriorityHint / IoGetIoPriorityHint  IoPriorityNormal until set; a
 *       value outside the enumeration is STATUS_INVALID_PARAMETER.
 *   IoGetPagingIoPriority  IoPagingPriorityInvalid unless Irp->Flags has
 *       IRP_PAGING_IO; then IoPagingPriorityHigh for a priority hint of
 *       IoPriorityHigh or above, else IoPagingPriorityNormal. */
typedef enum _IO_PRIORITY_HINT {
    IoPriorityVeryLow = 0,
    IoPriorityLow,
    IoPriorityNormal,
    IoPriorityHigh,
    IoPriorityCritical,
    MaxIoPriorityTypes
} IO_PRIORITY_HINT;
typedef enum _IO_PAGING_PRIORITY {
    IoPagingPriorityInvalid,
    IoPagingPriorityNormal,
    IoPagingPriorityHigh,
    IoPagingPriorityReserved1,
    IoPagingPriorityReserved2
} IO_PAGING_PRIORITY;
NTKERNELAPI NTSTATUS NTAPI IoSetActivityIdIrp(_Inout_ PIRP Irp, _In_opt_ LPCGUID Guid);
NTKERNELAPI NTSTATUS NTAPI IoGetActivityIdIrp(_In_ PIRP Irp, _Out_ LPGUID Guid);
NTKERNELAPI NTSTATUS NTAPI IoSetIoPriorityHint(_In_ PIRP Irp, _In_ IO_PRIORITY_HINT PriorityHint);
NTKERNELAPI IO_PRIORITY_HINT NTAPI IoGetIoPriorityHint(_In_ PIRP Irp);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI IO_PAGING_PRIORITY FASTCALL
    IoGetPagingIoPriority(_In_ PIRP Irp);

/* ---- Storage-driver helpers.
 *   IoIsErrorUserInduced(Status)  TRUE for the statuses a user can cause (no
 *       media, wrong or write-protected volume, timeout, not ready, verify).
 *   IoSetHardErrorOrVerifyDevice(Irp, Device)  records Device as the device to
 *       verify for the IRP's thread (Irp->Tail.Overlay.Thread);
 *       IoGetDeviceToVerify(Thread) reads it back (NULL if none).
 *   IoAdjustPagingPathCount(Count, Increment)  interlocked ++ or -- of *Count. */
#define IoIsErrorUserInduced(Status)                                                              \
    ((BOOLEAN)(((Status) == STATUS_DEVICE_NOT_READY) || ((Status) == STATUS_IO_TIMEOUT) ||        \
               ((Status) == STATUS_MEDIA_WRITE_PROTECTED) ||                                      \
               ((Status) == STATUS_NO_MEDIA_IN_DEVICE) ||                                         \
               ((Status) == STATUS_UNRECOGNIZED_MEDIA) || ((Status) == STATUS_VERIFY_REQUIRED) || \
               ((Status) == STATUS_WRONG_VOLUME)))
NTKERNELAPI VOID NTAPI IoSetHardErrorOrVerifyDevice(_In_ PIRP Irp,
                                                    _In_ PDEVICE_OBJECT DeviceObject);
NTKERNELAPI PDEVICE_OBJECT NTAPI IoGetDeviceToVerify(_In_opt_ PETHREAD Thread);
#define IoAdjustPagingPathCount(_count_, _paging_) \
    do {                                           \
        if (_paging_) {                            \
            InterlockedIncrement(_count_);         \
        } else {                                   \
            InterlockedDecrement(_count_);         \
        }                                          \
    } while (0)

/* ==== Hardware-only calls. ============================================== *
 * No device registers, I/O ports, physical memory or DMA hardware exist in a
 * user-mode process. These compile and behave as documented where that can mean
 * something:
 *   READ_REGISTER_* / WRITE_REGISTER_*  are the WDK's x64 inline functions: a
 *       volatile access at the address with a compiler barrier (a fence after
 *       writes). Only memory the caller owns can be passed (no register is ever
 *       mapped here), which makes them usable on fake register blocks in tests.
 *   READ_PORT_* return all ones (what a read from an absent device gives) and
 *       WRITE_PORT_* do nothing; both log a warning once per call site kind.
 *   MmMapIoSpace returns NULL (mapping failed); MmUnmapIoSpace does nothing.
 *   IoGetDmaAdapter returns NULL (no adapter: a driver then fails its start). */
FORCEINLINE UCHAR READ_REGISTER_UCHAR(_In_ volatile UCHAR *Register) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return *Register;
}
FORCEINLINE USHORT READ_REGISTER_USHORT(_In_ volatile USHORT *Register) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return *Register;
}
FORCEINLINE ULONG READ_REGISTER_ULONG(_In_ volatile ULONG *Register) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return *Register;
}
FORCEINLINE ULONG64 READ_REGISTER_ULONG64(_In_ volatile ULONG64 *Register) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return *Register;
}
FORCEINLINE VOID WRITE_REGISTER_UCHAR(_In_ volatile UCHAR *Register, _In_ UCHAR Value) {
    *Register = Value;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
FORCEINLINE VOID WRITE_REGISTER_USHORT(_In_ volatile USHORT *Register, _In_ USHORT Value) {
    *Register = Value;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
FORCEINLINE VOID WRITE_REGISTER_ULONG(_In_ volatile ULONG *Register, _In_ ULONG Value) {
    *Register = Value;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
FORCEINLINE VOID WRITE_REGISTER_ULONG64(_In_ volatile ULONG64 *Register, _In_ ULONG64 Value) {
    *Register = Value;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

NTHALAPI UCHAR NTAPI READ_PORT_UCHAR(_In_ PUCHAR Port);
NTHALAPI USHORT NTAPI READ_PORT_USHORT(_In_ PUSHORT Port);
NTHALAPI ULONG NTAPI READ_PORT_ULONG(_In_ PULONG Port);
NTHALAPI VOID NTAPI WRITE_PORT_UCHAR(_In_ PUCHAR Port, _In_ UCHAR Value);
NTHALAPI VOID NTAPI WRITE_PORT_USHORT(_In_ PUSHORT Port, _In_ USHORT Value);
NTHALAPI VOID NTAPI WRITE_PORT_ULONG(_In_ PULONG Port, _In_ ULONG Value);

#ifndef SOFTNDK_MEMORY_CACHING_TYPE_DEFINED
#define SOFTNDK_MEMORY_CACHING_TYPE_DEFINED
typedef enum _MEMORY_CACHING_TYPE {
    MmNonCached = 0,
    MmCached = 1,
    MmWriteCombined = 2,
    MmHardwareCoherentCached,
    MmNonCachedUnordered,
    MmUSWCCached,
    MmMaximumCacheType,
    MmNotMapped = -1
} MEMORY_CACHING_TYPE;
#endif
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI PVOID NTAPI
    MmMapIoSpace(_In_ PHYSICAL_ADDRESS PhysicalAddress, _In_ SIZE_T NumberOfBytes,
                 _In_ MEMORY_CACHING_TYPE CacheType);
_IRQL_requires_max_(DISPATCH_LEVEL) NTKERNELAPI VOID NTAPI
    MmUnmapIoSpace(_In_ PVOID BaseAddress, _In_ SIZE_T NumberOfBytes);

#ifndef SOFTNDK_INTERFACE_TYPE_DEFINED
#define SOFTNDK_INTERFACE_TYPE_DEFINED
typedef enum _INTERFACE_TYPE {
    InterfaceTypeUndefined = -1,
    Internal = 0,
    Isa,
    Eisa,
    MicroChannel,
    TurboChannel,
    PCIBus,
    VMEBus,
    NuBus,
    PCMCIABus,
    CBus,
    MPIBus,
    MPSABus,
    ProcessorInternal,
    InternalPowerBus,
    PNPISABus,
    PNPBus,
    Vmcs,
    ACPIBus,
    MaximumInterfaceType
} INTERFACE_TYPE,
    *PINTERFACE_TYPE;
#endif
typedef enum _DMA_WIDTH {
    Width8Bits,
    Width16Bits,
    Width32Bits,
    Width64Bits,
    WidthNoWrap,
    MaximumDmaWidth
} DMA_WIDTH,
    *PDMA_WIDTH;
typedef enum _DMA_SPEED {
    Compatible,
    TypeA,
    TypeB,
    TypeC,
    TypeF,
    MaximumDmaSpeed
} DMA_SPEED,
    *PDMA_SPEED;
#define DEVICE_DESCRIPTION_VERSION  0
#define DEVICE_DESCRIPTION_VERSION1 1
#define DEVICE_DESCRIPTION_VERSION2 2
#define DEVICE_DESCRIPTION_VERSION3 3
typedef struct _DEVICE_DESCRIPTION {
    ULONG Version;
    BOOLEAN Master;
    BOOLEAN ScatterGather;
    BOOLEAN DemandMode;
    BOOLEAN AutoInitialize;
    BOOLEAN Dma32BitAddresses;
    BOOLEAN IgnoreCount;
    BOOLEAN Reserved1;
    BOOLEAN Dma64BitAddresses;
    ULONG BusNumber;
    ULONG DmaChannel;
    INTERFACE_TYPE InterfaceType;
    DMA_WIDTH DmaWidth;
    DMA_SPEED DmaSpeed;
    ULONG MaximumLength;
    ULONG DmaPort;
    ULONG DmaAddressWidth;
    ULONG DmaControllerInstance;
    ULONG DmaRequestLine;
    PHYSICAL_ADDRESS DeviceAddress;
} DEVICE_DESCRIPTION, *PDEVICE_DESCRIPTION;
typedef struct _DMA_OPERATIONS *PDMA_OPERATIONS;
typedef struct _DMA_ADAPTER {
    USHORT Version;
    USHORT Size;
    PDMA_OPERATIONS DmaOperations;
} DMA_ADAPTER, *PDMA_ADAPTER;
_IRQL_requires_(PASSIVE_LEVEL) NTKERNELAPI PDMA_ADAPTER NTAPI
    IoGetDmaAdapter(_In_opt_ PDEVICE_OBJECT PhysicalDeviceObject,
                    _In_ PDEVICE_DESCRIPTION DeviceDescription, _Out_ PULONG NumberOfMapRegisters);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_SOFTNDK_WDM_IO_H */
