// Helper.cpp - the driver's C++ file: the same checksum, computed in C++, which the driver
// compares with the C one. softndk_add_driver(... CXX) compiles it with SOFTNDK_LEGACY_SAL.
#include <Ntddk.h>
#include "lam.h"

#ifndef SOFTNDK_LEGACY_SAL
#error "softndk_add_driver(CXX) defines SOFTNDK_LEGACY_SAL for C++ sources"
#endif

extern "C" ULONG LamCppChecksum(const UCHAR *Bytes, ULONG Length) {
    ULONG sum = 0;
    for (ULONG i = 0; i < Length; i++)
        sum = sum * 31 + Bytes[i];
    return sum;
}
