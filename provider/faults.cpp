// faults.cpp - SoftNdkInjectFault / SoftNdkRemoveFault (softndk_faults.h): the
// consumer's fault spec becomes one kInjectFault device command (hw_interface.hpp),
// with the NDK objects named by their device numbers and NDK statuses and calls
// translated to the device's syndromes and command opcodes.
#include <softndk_faults.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

#include "log.hpp"
#include "provider.hpp"

namespace softndk::provider {
namespace {

// The syndrome whose completion status (syndrome_status) is `status`: the first in
// this order, so each status maps to the most general cause that reports it.
std::optional<hw::Syndrome> syndrome_for_status(NTSTATUS status) {
    using S = hw::Syndrome;
    static constexpr S kOrder[] = {
        S::kWorkRequestFlushed,     S::kLocalLength,          S::kLocalQpOperation,
        S::kLocalProtection,        S::kRemoteInvalidRequest, S::kRemoteAccess,
        S::kTransportRetryExceeded, S::kRemoteAborted,        S::kReceiveOverflow,
    };
    for (S s : kOrder)
        if (syndrome_status(s) == status) return s;
    return std::nullopt;
}

std::optional<hw::CommandOpcode> command_opcode(ULONG command) {
    using O = hw::CommandOpcode;
    switch (command) {
        case SoftNdkFaultCommandCreatePd:
            return O::kCreatePd;
        case SoftNdkFaultCommandCreateCq:
            return O::kCreateCq;
        case SoftNdkFaultCommandResizeCq:
            return O::kResizeCq;
        case SoftNdkFaultCommandCreateQp:
            return O::kCreateQp;
        case SoftNdkFaultCommandCreateSrq:
            return O::kCreateSrq;
        case SoftNdkFaultCommandCreateMr:
            return O::kAllocMr;
        case SoftNdkFaultCommandRegisterMr:
            return O::kRegisterMr;
        case SoftNdkFaultCommandCreateMw:
            return O::kAllocMw;
        case SoftNdkFaultCommandBuildLam:
            return O::kBuildLam;
        case SoftNdkFaultCommandListen:
            return O::kListen;
        case SoftNdkFaultCommandConnect:
            return O::kConnect;
        case SoftNdkFaultCommandAccept:
            return O::kAccept;
        default:
            return std::nullopt;
    }
}

NTSTATUS build_request(Adapter &adapter, const SOFTNDK_FAULT &f, hw::FaultRequest &rq) {
    rq = {};
    rq.kind = f.Kind;
    rq.qp = hw::kNoObject;
    rq.count = f.Count;
    rq.probability_ppm = f.Probability == 0 ? hw::kFaultCertain : f.Probability;
    rq.direction = f.Direction;
    rq.packet_class = f.PacketClasses;
    rq.operation = f.Operation;
    rq.token = f.Token;
    rq.time_ns = f.TimeNs;
    rq.start_ns = f.StartNs;
    if (f.Name != nullptr)
        std::strncpy(reinterpret_cast<char *>(rq.name), f.Name, sizeof rq.name - 1);
    const auto kind = static_cast<hw::FaultKind>(f.Kind);
    if (kind == hw::FaultKind::kCqOverrun || kind == hw::FaultKind::kEqStorm) {
        Cq *cq = from_ndk<Cq>(f.pCq);
        if (cq == nullptr || !adapter.same_interface(cq->adapter()))
            return STATUS_INVALID_PARAMETER;
        rq.qp = cq->number();
        return STATUS_SUCCESS;
    }
    if (f.pQp != nullptr) {
        Qp *qp = from_ndk<Qp>(f.pQp);
        if (qp == nullptr || !adapter.same_interface(qp->adapter()))
            return STATUS_INVALID_PARAMETER;
        rq.qp = qp->number();
    }
    switch (kind) {
        case hw::FaultKind::kFailOperation: {
            auto s = syndrome_for_status(f.Status);
            if (!s || f.Status == STATUS_SUCCESS) return STATUS_INVALID_PARAMETER;
            rq.status = static_cast<int32_t>(*s);
            break;
        }
        case hw::FaultKind::kQpError: {
            if (f.Status == STATUS_SUCCESS) break;  // plain flush
            auto s = syndrome_for_status(f.Status);
            if (!s) return STATUS_INVALID_PARAMETER;
            rq.status = static_cast<int32_t>(*s);
            break;
        }
        case hw::FaultKind::kFailCommand: {
            auto op = command_opcode(f.Operation);
            if (!op || NT_SUCCESS(f.Status)) return STATUS_INVALID_PARAMETER;
            rq.operation = static_cast<uint32_t>(*op);
            rq.status = f.Status;
            break;
        }
        default:
            break;
    }
    return STATUS_SUCCESS;
}

}  // namespace
}  // namespace softndk::provider

using namespace softndk::provider;

extern "C" {

NTSTATUS SoftNdkInjectFault(NDK_ADAPTER *pAdapter, const SOFTNDK_FAULT *pFault, ULONG *pFaultId) {
    Adapter *adapter = from_ndk<Adapter>(pAdapter);
    if (adapter == nullptr || pFault == nullptr) return STATUS_INVALID_PARAMETER;
    softndk::hw::FaultRequest rq;
    if (const NTSTATUS s = build_request(*adapter, *pFault, rq); s != STATUS_SUCCESS) return s;
    softndk::hw::ObjectResponse rs{};
    const NTSTATUS s = adapter->execute(softndk::hw::CommandOpcode::kInjectFault, rq, rs);
    if (s == STATUS_SUCCESS && pFaultId != nullptr) *pFaultId = rs.object;
    log().debug("SoftNdkInjectFault kind {} -> {:#x}", pFault->Kind, static_cast<uint32_t>(s));
    return s;
}

NTSTATUS SoftNdkRemoveFault(NDK_ADAPTER *pAdapter, ULONG FaultId) {
    Adapter *adapter = from_ndk<Adapter>(pAdapter);
    if (adapter == nullptr) return STATUS_INVALID_PARAMETER;
    return adapter->execute_object(softndk::hw::CommandOpcode::kRemoveFault, FaultId);
}

NTSTATUS SoftNdkQueryCounter(NDK_ADAPTER *pAdapter, const char *Name, ULONG64 *pValue) {
    Adapter *adapter = from_ndk<Adapter>(pAdapter);
    if (adapter == nullptr || Name == nullptr || pValue == nullptr) return STATUS_INVALID_PARAMETER;
    // The device reports its counters in SOFTNDK_DEVICE_COUNTERS order (hw_interface.hpp).
    static constexpr const char *kNames[] = {
#define SOFTNDK_X(name) #name,
        SOFTNDK_DEVICE_COUNTERS(SOFTNDK_X)
#undef SOFTNDK_X
    };
    uint32_t index = 0;
    while (index < std::size(kNames) && std::strcmp(kNames[index], Name) != 0)
        ++index;
    if (index == std::size(kNames)) return STATUS_NOT_FOUND;
    softndk::hw::ObjectRequest rq{};
    softndk::hw::CountersResponse rs{};
    const NTSTATUS s = adapter->execute(softndk::hw::CommandOpcode::kQueryCounters, rq, rs);
    if (s != STATUS_SUCCESS) return s;
    if (index >= rs.count) return STATUS_NOT_FOUND;  // an older device
    *pValue = rs.values[index];
    return STATUS_SUCCESS;
}

}  // extern "C"
