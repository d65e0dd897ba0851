// The hardware-only WDK calls: port I/O, I/O space mapping and DMA adapters. A user-mode
// process has no device behind them, so each returns its documented failure (or does its
// documented no-op) and says so once through the "wdk" logger. (Register access, which is
// plain memory access in the WDK's x64 headers, is inline in softndk_wdm_io.h.)
#include <atomic>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

// One warning per call name: drivers poll ports in loops.
void warn_once(std::atomic<bool> &warned, const char *what) {
    if (!warned.exchange(true)) {
        logger().warn("{}: no hardware in user mode (SoftNDK); see README's hardware-only calls",
                      what);
    }
}

std::atomic<bool> port_read_warned{false};
std::atomic<bool> port_write_warned{false};
std::atomic<bool> map_warned{false};
std::atomic<bool> dma_warned{false};

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

// A read from a port no device decodes returns all ones on PC hardware.
UCHAR NTAPI READ_PORT_UCHAR(PUCHAR Port) {
    (void)Port;
    wdk::warn_once(wdk::port_read_warned, "READ_PORT_*: reads all ones");
    return 0xFF;
}
USHORT NTAPI READ_PORT_USHORT(PUSHORT Port) {
    (void)Port;
    wdk::warn_once(wdk::port_read_warned, "READ_PORT_*: reads all ones");
    return 0xFFFF;
}
ULONG NTAPI READ_PORT_ULONG(PULONG Port) {
    (void)Port;
    wdk::warn_once(wdk::port_read_warned, "READ_PORT_*: reads all ones");
    return 0xFFFFFFFFu;
}
VOID NTAPI WRITE_PORT_UCHAR(PUCHAR Port, UCHAR Value) {
    (void)Port;
    (void)Value;
    wdk::warn_once(wdk::port_write_warned, "WRITE_PORT_*: the write goes nowhere");
}
VOID NTAPI WRITE_PORT_USHORT(PUSHORT Port, USHORT Value) {
    (void)Port;
    (void)Value;
    wdk::warn_once(wdk::port_write_warned, "WRITE_PORT_*: the write goes nowhere");
}
VOID NTAPI WRITE_PORT_ULONG(PULONG Port, ULONG Value) {
    (void)Port;
    (void)Value;
    wdk::warn_once(wdk::port_write_warned, "WRITE_PORT_*: the write goes nowhere");
}

PVOID NTAPI MmMapIoSpace(PHYSICAL_ADDRESS PhysicalAddress, SIZE_T NumberOfBytes,
                         MEMORY_CACHING_TYPE CacheType) {
    (void)PhysicalAddress;
    (void)NumberOfBytes;
    (void)CacheType;
    wdk::warn_once(wdk::map_warned, "MmMapIoSpace: returns NULL");
    return nullptr;
}

VOID NTAPI MmUnmapIoSpace(PVOID BaseAddress, SIZE_T NumberOfBytes) {
    (void)BaseAddress;
    (void)NumberOfBytes;
}

PDMA_ADAPTER NTAPI IoGetDmaAdapter(PDEVICE_OBJECT PhysicalDeviceObject,
                                   PDEVICE_DESCRIPTION DeviceDescription,
                                   PULONG NumberOfMapRegisters) {
    (void)PhysicalDeviceObject;
    (void)DeviceDescription;
    if (NumberOfMapRegisters != nullptr) *NumberOfMapRegisters = 0;
    wdk::warn_once(wdk::dma_warned, "IoGetDmaAdapter: returns NULL");
    return nullptr;
}

}  // extern "C"
