/*
 * faults_c.c - SoftNdkInjectFault from kernel-style C11 (softndk_faults.h promises it
 * works there): a driver routine that arms a fault on its QP and one that removes it,
 * called by faults_test.cpp.
 */
#include <ndkpi.h>
#include <ntddk.h>
#include <softndk_faults.h>

NTSTATUS FaultsCArmLossyTx(_In_ NDK_ADAPTER *Adapter, _In_ NDK_QP *Qp, _Out_ ULONG *FaultId);
NTSTATUS FaultsCRemove(_In_ NDK_ADAPTER *Adapter, _In_ ULONG FaultId);

/* Every SEND packet the QP transmits is lost, the first 8 times. */
NTSTATUS FaultsCArmLossyTx(_In_ NDK_ADAPTER *Adapter, _In_ NDK_QP *Qp, _Out_ ULONG *FaultId) {
    SOFTNDK_FAULT fault;
    RtlZeroMemory(&fault, sizeof fault);
    fault.Kind = SoftNdkFaultDrop;
    fault.pQp = Qp;
    fault.Direction = SOFTNDK_FAULT_TX;
    fault.PacketClasses = SOFTNDK_FAULT_PACKET_SEND;
    fault.Count = 8;
    fault.Probability = SOFTNDK_FAULT_ALWAYS;
    fault.Name = "c-lossy";
    *FaultId = 0;
    return SoftNdkInjectFault(Adapter, &fault, FaultId);
}

NTSTATUS FaultsCRemove(_In_ NDK_ADAPTER *Adapter, _In_ ULONG FaultId) {
    return SoftNdkRemoveFault(Adapter, FaultId);
}
