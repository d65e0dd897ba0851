/* Lam.c - the pool side of the local address map. */
#include "LAM.H"
#include <ntddk.h>

VOID static LamFill(PLAM Lam);         /* storage class after the type */
static NTSTATUS LamNeverDefined(VOID); /* an unused static prototype */

#pragma alloc_text(PAGE, LamCreate)
#pragma alloc_text(PAGE, LamDestroy)

VOID static LamFill(PLAM Lam) {
    ULONG i;
    for (i = 0; i < Lam->Length; i++)
        Lam->Bytes[i] = (UCHAR)(LAM_FILL_BYTE ^ i);
}

NTSTATUS LamCreate(PLAM Lam, ULONG Length) {
    LAM created = {0}; /* missing field initialisers */
    PAGED_CODE();
    created.Bytes = (PUCHAR)ExAllocatePoolWithTag(NonPagedPoolNx, Length, LAM_POOL_TAG);
    if (created.Bytes == NULL) return STATUS_INSUFFICIENT_RESOURCES;
    created.Length = Length;
    created.Tag = LAM_POOL_TAG;
    LamFill(&created);
    *Lam = created;
    return STATUS_SUCCESS;
}

VOID LamDestroy(PLAM Lam) {
    PAGED_CODE();
    if (Lam->Bytes != NULL) ExFreePoolWithTag(Lam->Bytes, Lam->Tag);
    Lam->Bytes = NULL;
}

ULONG LamChecksum(const LAM *Lam) {
    ULONG sum = 0, i;
    for (i = 0; i < Lam->Length; i++)
        sum = sum * 31 + Lam->Bytes[i];
    return sum;
}
