/* Lam.h - the driver's "local address map": a tagged pool block and a checksum over it.
 * Written the way MSVC-only driver sources are: included as "lam.h" and "LAM.H", an
 * upper-case WDK include, VOID-first storage classes, multi-character pool tags. */
#pragma once
#include <NTDEF.H>
#include "LAMDEFS.H"

typedef struct _LAM {
    PUCHAR Bytes;
    ULONG Length;
    ULONG Tag;
} LAM, *PLAM;

NTSTATUS LamCreate(_Out_ PLAM Lam, _In_ ULONG Length);
VOID LamDestroy(_Inout_ PLAM Lam);
ULONG LamChecksum(_In_ const LAM *Lam);

#ifdef __cplusplus
extern "C"
#endif
    ULONG
    LamCppChecksum(const UCHAR *Bytes, ULONG Length); /* Helper.cpp */
