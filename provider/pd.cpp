#include <softndk_ext.h>

#include "provider.hpp"

namespace softndk::provider {

Pd::Pd(Adapter *a, uint32_t number)
    : Object(a, fmt::format("{} pd#{}", a->name(), number)), number_(number) {
    publish(*static_cast<Embedded<NDK_PD> *>(this), kType, a->version(), &kPdDispatch);
    depend_on(a);
}

void Pd::on_final() {
    adapter()->execute_object(hw::CommandOpcode::kDestroyPd, number_);
}

NTSTATUS create_pd(Adapter *a, Pd **out) {
    hw::ObjectResponse response{};
    const NTSTATUS status = a->execute_object(hw::CommandOpcode::kCreatePd, 0, 0, &response);
    if (!NT_SUCCESS(status)) return status;
    *out = new Pd(a, response.object);
    return STATUS_SUCCESS;
}

namespace {

NTSTATUS close_pd(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Pd *pd = from_header<Pd>(h);
    if (pd == nullptr) return STATUS_INVALID_PARAMETER;
    return pd->close(cb, ctx);
}

NTSTATUS create_mw_of_type(NDK_PD *pPd, NDK_FN_CREATE_COMPLETION cb, NDK_MW **ppNdkMw,
                           uint8_t type) {
    Pd *pd = from_ndk<Pd>(pPd);
    if (pd == nullptr || cb == nullptr || ppNdkMw == nullptr) return STATUS_INVALID_PARAMETER;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    Mw *mw = nullptr;
    const NTSTATUS status = create_mw(pd, type, &mw);
    if (NT_SUCCESS(status)) *ppNdkMw = &mw->ndk;
    return status;
}

NTSTATUS create_mw_slot(NDK_PD *pPd, NDK_FN_CREATE_COMPLETION cb, PVOID, NDK_MW **ppNdkMw) {
    return create_mw_of_type(pPd, cb, ppNdkMw, 2);
}

NTSTATUS create_mw_type1(NDK_PD *pPd, NDK_FN_CREATE_COMPLETION cb, PVOID, NDK_MW **ppNdkMw) {
    return create_mw_of_type(pPd, cb, ppNdkMw, 1);
}

const SOFTNDK_MW_EXTENSION_DISPATCH kMwExtensionDispatch = {
    .SoftNdkCreateMwType1 = create_mw_type1,
};

// The PD offers SoftNDK's type-1 window extension (softndk_ext.h) at version 1.0; a
// newer version, another GUID or another object gets the common answer.
NTSTATUS pd_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                            NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Pd>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    static const ExtensionOffer kMwExtension{
        SOFTNDK_MW_EXTENSION_GUID_INIT, SOFTNDK_MW_EXTENSION_VERSION_MAJOR,
        SOFTNDK_MW_EXTENSION_VERSION_MINOR, &kMwExtensionDispatch};
    return offer_extension(kMwExtension, h, id, v, out);
}

NTSTATUS create_mr_slot(NDK_PD *pPd, BOOLEAN FastRegister, NDK_FN_CREATE_COMPLETION cb, PVOID,
                        NDK_MR **ppNdkMr) {
    Pd *pd = from_ndk<Pd>(pPd);
    if (pd == nullptr || cb == nullptr || ppNdkMr == nullptr) return STATUS_INVALID_PARAMETER;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    Mr *mr = nullptr;
    const NTSTATUS status = create_mr(pd, FastRegister != FALSE, &mr);
    if (NT_SUCCESS(status)) *ppNdkMr = &mr->ndk;
    return status;
}

NTSTATUS create_qp_slot(NDK_PD *pPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq, PVOID QPContext,
                        ULONG ReceiveQueueDepth, ULONG InitiatorQueueDepth,
                        ULONG MaxReceiveRequestSge, ULONG MaxInitiatorRequestSge,
                        ULONG InlineDataSize, NDK_FN_CREATE_COMPLETION cb, PVOID,
                        NDK_QP **ppNdkQp) {
    Pd *pd = from_ndk<Pd>(pPd);
    Cq *rcq = from_ndk<Cq>(pReceiveCq);
    Cq *icq = from_ndk<Cq>(pInitiatorCq);
    if (pd == nullptr || rcq == nullptr || icq == nullptr || cb == nullptr || ppNdkQp == nullptr)
        return STATUS_INVALID_PARAMETER;
    Adapter *a = pd->adapter();
    if (!a->same_interface(rcq->adapter()) || !a->same_interface(icq->adapter()))
        return STATUS_INVALID_PARAMETER;
    if (pd->closing() || rcq->closing() || icq->closing()) return STATUS_INVALID_DEVICE_STATE;
    const NDK_ADAPTER_INFO &info = a->info();
    if (ReceiveQueueDepth > info.MaxReceiveQueueDepth ||
        InitiatorQueueDepth > info.MaxInitiatorQueueDepth || InitiatorQueueDepth == 0 ||
        MaxReceiveRequestSge > info.MaxReceiveRequestSge ||
        MaxInitiatorRequestSge > info.MaxInitiatorRequestSge ||
        InlineDataSize > info.MaxInlineDataSize)
        return STATUS_INVALID_PARAMETER;
    Qp *qp = nullptr;
    const NTSTATUS status =
        create_qp(pd, rcq, icq, nullptr, QPContext,
                  QpLimits{ReceiveQueueDepth, InitiatorQueueDepth, MaxReceiveRequestSge,
                           MaxInitiatorRequestSge, InlineDataSize},
                  &qp);
    if (NT_SUCCESS(status)) *ppNdkQp = &qp->ndk;
    return status;
}

NTSTATUS create_srq_slot(NDK_PD *pPd, ULONG SrqDepth, ULONG MaxReceiveRequestSge,
                         ULONG NotifyThreshold, NDK_FN_SRQ_NOTIFICATION_CALLBACK SrqNotification,
                         PVOID SrqNotificationContext, GROUP_AFFINITY *,
                         NDK_FN_CREATE_COMPLETION cb, PVOID, NDK_SRQ **ppNdkSrq) {
    Pd *pd = from_ndk<Pd>(pPd);
    if (pd == nullptr || cb == nullptr || ppNdkSrq == nullptr) return STATUS_INVALID_PARAMETER;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    const NDK_ADAPTER_INFO &info = pd->adapter()->info();
    if (SrqDepth == 0 || SrqDepth > info.MaxSrqDepth || MaxReceiveRequestSge == 0 ||
        MaxReceiveRequestSge > info.MaxReceiveRequestSge || NotifyThreshold > SrqDepth)
        return STATUS_INVALID_PARAMETER;
    Srq *srq = nullptr;
    const NTSTATUS status = create_srq(pd, SrqDepth, MaxReceiveRequestSge, NotifyThreshold,
                                       SrqNotification, SrqNotificationContext, &srq);
    if (NT_SUCCESS(status)) *ppNdkSrq = &srq->ndk;
    return status;
}

NTSTATUS create_qp_with_srq_slot(NDK_PD *pPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq,
                                 NDK_SRQ *pSrq, PVOID QPContext, ULONG InitiatorQueueDepth,
                                 ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                 NDK_FN_CREATE_COMPLETION cb, PVOID, NDK_QP **ppNdkQp) {
    Pd *pd = from_ndk<Pd>(pPd);
    Cq *rcq = from_ndk<Cq>(pReceiveCq);
    Cq *icq = from_ndk<Cq>(pInitiatorCq);
    Srq *srq = from_ndk<Srq>(pSrq);
    if (pd == nullptr || rcq == nullptr || icq == nullptr || srq == nullptr || cb == nullptr ||
        ppNdkQp == nullptr)
        return STATUS_INVALID_PARAMETER;
    Adapter *a = pd->adapter();
    // The SRQ's receives are checked against the QP's PD: they must be the same.
    if (!a->same_interface(rcq->adapter()) || !a->same_interface(icq->adapter()) || srq->pd() != pd)
        return STATUS_INVALID_PARAMETER;
    if (pd->closing() || rcq->closing() || icq->closing() || srq->closing())
        return STATUS_INVALID_DEVICE_STATE;
    const NDK_ADAPTER_INFO &info = a->info();
    if (InitiatorQueueDepth > info.MaxInitiatorQueueDepth || InitiatorQueueDepth == 0 ||
        MaxInitiatorRequestSge > info.MaxInitiatorRequestSge ||
        InlineDataSize > info.MaxInlineDataSize)
        return STATUS_INVALID_PARAMETER;
    Qp *qp = nullptr;
    const NTSTATUS status = create_qp(
        pd, rcq, icq, srq, QPContext,
        QpLimits{0, InitiatorQueueDepth, srq->max_sge(), MaxInitiatorRequestSge, InlineDataSize},
        &qp);
    if (NT_SUCCESS(status)) *ppNdkQp = &qp->ndk;
    return status;
}

// One token per PD, local access only, over the adapter logical addresses NdkBuildLAM
// hands out (ndkpi-api.md 7.11). The device creates it on first use and answers the
// same token until the PD is closed. The slot cannot fail (VOID): if the device has no
// key left, the answer is token 0, which no access ever accepts (MPT index 0 is
// reserved), so the consumer's first use completes with a protection error.
void privileged_token(NDK_PD *pPd, UINT32 *pToken) {
    Pd *pd = from_ndk<Pd>(pPd);
    if (pToken == nullptr) return;
    *pToken = 0;
    if (pd == nullptr) return;
    hw::ObjectResponse response{};
    const NTSTATUS status = pd->adapter()->execute_object(hw::CommandOpcode::kPrivilegedToken,
                                                          pd->number(), 0, &response);
    if (NT_SUCCESS(status)) {
        *pToken = response.token;
    } else {
        log().error("{}: no privileged token: {:#x}", pd->name(), static_cast<uint32_t>(status));
    }
}

}  // namespace

const NDK_PD_DISPATCH kPdDispatch = {
    .NdkClosePd = close_pd,
    .NdkQueryExtension = pd_query_extension,
    .NdkCreateMr = create_mr_slot,
    .NdkCreateMw = create_mw_slot,
    .NdkCreateSrq = create_srq_slot,
    .NdkCreateQp = create_qp_slot,
    .NdkCreateQpWithSrq = create_qp_with_srq_slot,
    .NdkGetPrivilegedMemoryRegionToken = privileged_token,
};

}  // namespace softndk::provider
