// slots.hpp - which of the 70 NDKPI dispatch slots the provider implements.
//
// This table is the single source of truth for the coverage table in
// provider/README.md (the `softndk_provider_slots` tool prints it as Markdown,
// with the test files that call each slot; a CTest keeps the README current).
// Every slot is built today. A slot added by a future NDK version starts as
// kNotBuilt, answers STATUS_NOT_SUPPORTED (0 / nothing for UINT32 and VOID
// slots) and is marked kBuilt in the same change that implements it.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace softndk::provider {

enum class SlotStatus { kBuilt, kNotBuilt };

struct Slot {
    std::string_view table;  // NDK_xxx_DISPATCH
    std::string_view name;   // member name
    SlotStatus status;
};

inline constexpr SlotStatus B = SlotStatus::kBuilt;
inline constexpr SlotStatus N = SlotStatus::kNotBuilt;

// In member order, table by table (ndkpi-api.md section 2).
inline constexpr std::array<Slot, 70> kSlots{{
    {"NDK_ADAPTER_DISPATCH", "NdkQueryExtension", B},
    {"NDK_ADAPTER_DISPATCH", "NdkQueryAdapterInfo", B},
    {"NDK_ADAPTER_DISPATCH", "NdkCreateCq", B},
    {"NDK_ADAPTER_DISPATCH", "NdkCreatePd", B},
    {"NDK_ADAPTER_DISPATCH", "NdkCreateSharedEndpoint", B},
    {"NDK_ADAPTER_DISPATCH", "NdkCreateConnector", B},
    {"NDK_ADAPTER_DISPATCH", "NdkCreateListener", B},
    {"NDK_ADAPTER_DISPATCH", "NdkBuildLAM", B},
    {"NDK_ADAPTER_DISPATCH", "NdkReleaseLAM", B},

    {"NDK_PD_DISPATCH", "NdkClosePd", B},
    {"NDK_PD_DISPATCH", "NdkQueryExtension", B},
    {"NDK_PD_DISPATCH", "NdkCreateMr", B},
    {"NDK_PD_DISPATCH", "NdkCreateMw", B},
    {"NDK_PD_DISPATCH", "NdkCreateSrq", B},
    {"NDK_PD_DISPATCH", "NdkCreateQp", B},
    {"NDK_PD_DISPATCH", "NdkCreateQpWithSrq", B},
    {"NDK_PD_DISPATCH", "NdkGetPrivilegedMemoryRegionToken", B},

    {"NDK_CQ_DISPATCH", "NdkCloseCq", B},
    {"NDK_CQ_DISPATCH", "NdkQueryExtension", B},
    {"NDK_CQ_DISPATCH", "NdkResizeCq", B},
    {"NDK_CQ_DISPATCH", "NdkArmCq", B},
    {"NDK_CQ_DISPATCH", "NdkGetCqResults", B},
    {"NDK_CQ_DISPATCH", "NdkControlCqInterruptModeration", B},
    {"NDK_CQ_DISPATCH", "NdkGetCqResultsEx", B},

    {"NDK_QP_DISPATCH", "NdkCloseQp", B},
    {"NDK_QP_DISPATCH", "NdkQueryExtension", B},
    {"NDK_QP_DISPATCH", "NdkFlush", B},
    {"NDK_QP_DISPATCH", "NdkSend", B},
    {"NDK_QP_DISPATCH", "NdkReceive", B},
    {"NDK_QP_DISPATCH", "NdkBind", B},
    {"NDK_QP_DISPATCH", "NdkFastRegister", B},
    {"NDK_QP_DISPATCH", "NdkInvalidate", B},
    {"NDK_QP_DISPATCH", "NdkRead", B},
    {"NDK_QP_DISPATCH", "NdkWrite", B},
    {"NDK_QP_DISPATCH", "NdkSendAndInvalidate", B},

    {"NDK_SRQ_DISPATCH", "NdkCloseSrq", B},
    {"NDK_SRQ_DISPATCH", "NdkQueryExtension", B},
    {"NDK_SRQ_DISPATCH", "NdkModifySrq", B},
    {"NDK_SRQ_DISPATCH", "NdkSrqReceive", B},

    {"NDK_MR_DISPATCH", "NdkCloseMr", B},
    {"NDK_MR_DISPATCH", "NdkQueryExtension", B},
    {"NDK_MR_DISPATCH", "NdkRegisterMr", B},
    {"NDK_MR_DISPATCH", "NdkDeregisterMr", B},
    {"NDK_MR_DISPATCH", "NdkInitializeFastRegisterMr", B},
    {"NDK_MR_DISPATCH", "NdkGetRemoteTokenFromMr", B},
    {"NDK_MR_DISPATCH", "NdkGetLocalTokenFromMr", B},

    {"NDK_MW_DISPATCH", "NdkCloseMw", B},
    {"NDK_MW_DISPATCH", "NdkQueryExtension", B},
    {"NDK_MW_DISPATCH", "NdkGetRemoteTokenFromMw", B},

    {"NDK_CONNECTOR_DISPATCH", "NdkCloseConnector", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkQueryExtension", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkConnect", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkConnectWithSharedEndpoint", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkCompleteConnect", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkAccept", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkReject", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkGetConnectionData", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkGetLocalAddress", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkGetPeerAddress", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkDisconnect", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkCompleteConnectEx", B},
    {"NDK_CONNECTOR_DISPATCH", "NdkAcceptEx", B},

    {"NDK_LISTENER_DISPATCH", "NdkCloseListener", B},
    {"NDK_LISTENER_DISPATCH", "NdkQueryExtension", B},
    {"NDK_LISTENER_DISPATCH", "NdkListen", B},
    {"NDK_LISTENER_DISPATCH", "NdkGetLocalAddress", B},
    {"NDK_LISTENER_DISPATCH", "NdkControlConnectEvents", B},

    {"NDK_SHARED_ENDPOINT_DISPATCH", "NdkCloseSharedEndpoint", B},
    {"NDK_SHARED_ENDPOINT_DISPATCH", "NdkQueryExtension", B},
    {"NDK_SHARED_ENDPOINT_DISPATCH", "NdkGetLocalAddress", B},
}};

constexpr size_t slot_count(std::string_view table) {
    size_t n = 0;
    for (const Slot &s : kSlots)
        n += s.table == table ? 1 : 0;
    return n;
}

}  // namespace softndk::provider
