// status.hpp - the NTSTATUS values the device puts in command responses and EQEs.
//
// Values are those of the WDK's ntstatus.h (see include/ndkpi/ntstatus.h); the
// emulator keeps its own copy so that it never depends on the consumer-facing
// headers. NTSTATUS is signed: errors are negative.
#pragma once

#include <cstdint>

namespace softndk::emu::status {

constexpr int32_t nt(uint32_t v) {
    return static_cast<int32_t>(v);
}

inline constexpr int32_t kSuccess = 0;
inline constexpr int32_t kPending = nt(0x00000103);
inline constexpr int32_t kBufferOverflow = nt(0x80000005);
inline constexpr int32_t kUnsuccessful = nt(0xC0000001);
inline constexpr int32_t kInvalidHandle = nt(0xC0000008);
inline constexpr int32_t kInvalidParameter = nt(0xC000000D);
inline constexpr int32_t kInvalidDeviceRequest = nt(0xC0000010);
inline constexpr int32_t kNoMemory = nt(0xC0000017);
inline constexpr int32_t kBufferTooSmall = nt(0xC0000023);
inline constexpr int32_t kSharingViolation = nt(0xC0000043);
inline constexpr int32_t kAddressAlreadyExists = nt(0xC000020A);
inline constexpr int32_t kInsufficientResources = nt(0xC000009A);
inline constexpr int32_t kIoTimeout = nt(0xC00000B5);
inline constexpr int32_t kNotSupported = nt(0xC00000BB);
inline constexpr int32_t kInternalError = nt(0xC00000E5);
inline constexpr int32_t kCancelled = nt(0xC0000120);
inline constexpr int32_t kInvalidAddress = nt(0xC0000141);
inline constexpr int32_t kInvalidDeviceState = nt(0xC0000184);
inline constexpr int32_t kTooManyAddresses = nt(0xC0000209);
inline constexpr int32_t kConnectionRefused = nt(0xC0000236);
inline constexpr int32_t kConnectionInvalid = nt(0xC000023A);
inline constexpr int32_t kConnectionActive = nt(0xC000023B);
inline constexpr int32_t kNetworkUnreachable = nt(0xC000023C);
inline constexpr int32_t kHostUnreachable = nt(0xC000023D);
inline constexpr int32_t kConnectionAborted = nt(0xC0000241);
inline constexpr int32_t kDeviceRemoved = nt(0xC00002B6);
inline constexpr int32_t kImplementationLimit = nt(0xC000042B);
inline constexpr int32_t kBadVersion = nt(0xC0010004);  // NDIS_STATUS_BAD_VERSION

// NDK_ADAPTER_FLAG_* (ndkinfo.h).
inline constexpr uint32_t kAdapterFlagInOrderDma = 0x00000001;
inline constexpr uint32_t kAdapterFlagReadSinkNotRequired = 0x00000002;
inline constexpr uint32_t kAdapterFlagCqModeration = 0x00000004;
inline constexpr uint32_t kAdapterFlagMultiEngine = 0x00000008;
inline constexpr uint32_t kAdapterFlagReadLocalInvalidate = 0x00000010;
inline constexpr uint32_t kAdapterFlagCqResize = 0x00000100;
inline constexpr uint32_t kAdapterFlagLoopback = 0x00010000;

// NDK_RDMA_TECHNOLOGY.
inline constexpr uint32_t kTechnologyIwarp = 1;
inline constexpr uint32_t kTechnologyInfiniBand = 2;
inline constexpr uint32_t kTechnologyRoceV2 = 4;

}  // namespace softndk::emu::status
