// Hardware-only WDK calls: what they do in a process with no hardware (README lists them).
#include <wdm.h>

#include <catch2/catch.hpp>

TEST_CASE("hardware-only: register access is a volatile access to the given memory") {
    volatile ULONG registers[2] = {0, 0};
    WRITE_REGISTER_ULONG(&registers[1], 0xA5A5F00Du);
    CHECK(READ_REGISTER_ULONG(&registers[1]) == 0xA5A5F00Du);
    volatile USHORT halfword = 0;
    WRITE_REGISTER_USHORT(&halfword, 0xBEEF);
    CHECK(READ_REGISTER_USHORT(&halfword) == 0xBEEF);
    volatile UCHAR byte = 0;
    WRITE_REGISTER_UCHAR(&byte, 0x7E);
    CHECK(READ_REGISTER_UCHAR(&byte) == 0x7E);
}

TEST_CASE("hardware-only: ports read all ones and swallow writes, no I/O space, no DMA adapter") {
    USHORT *port = reinterpret_cast<USHORT *>(static_cast<ULONG_PTR>(0x1F0));
    WRITE_PORT_USHORT(port, 0x1234);  // must not touch the address
    CHECK(READ_PORT_USHORT(port) == 0xFFFF);
    CHECK(READ_PORT_UCHAR(reinterpret_cast<PUCHAR>(port)) == 0xFF);
    PHYSICAL_ADDRESS physical;
    physical.QuadPart = 0xFED00000;
    CHECK(MmMapIoSpace(physical, 4096, MmNonCached) == nullptr);
    MmUnmapIoSpace(nullptr, 0);
    DEVICE_DESCRIPTION description{};
    description.Version = DEVICE_DESCRIPTION_VERSION3;
    description.Master = TRUE;
    description.ScatterGather = TRUE;
    description.InterfaceType = PCIBus;
    ULONG map_registers = 99;
    CHECK(IoGetDmaAdapter(nullptr, &description, &map_registers) == nullptr);
    CHECK(map_registers == 0);
}
