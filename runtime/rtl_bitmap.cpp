// RTL_BITMAP: bit arrays over a caller's ULONG buffer (RtlInitializeBitMap, set / clear /
// test, counting, and the first-fit searches RtlFind{Clear,Set}Bits[And{Set,Clear}]).
#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kNotFound = 0xFFFFFFFFu;

void check_range(PRTL_BITMAP bitmap, ULONG start, ULONG count, const char *caller) {
    if (static_cast<ULONGLONG>(start) + count > bitmap->SizeOfBitMap) {
        fatal(fmt::format("{}: bits [{}, +{}) are outside the bitmap of {} bits", caller, start,
                          count, bitmap->SizeOfBitMap));
    }
}

bool bit(PRTL_BITMAP bitmap, ULONG index) {
    return ((bitmap->Buffer[index / 32] >> (index % 32)) & 1u) != 0;
}

void put(PRTL_BITMAP bitmap, ULONG start, ULONG count, bool value) {
    for (ULONG i = start; i < start + count; ++i) {
        const ULONG mask = 1u << (i % 32);
        if (value) {
            bitmap->Buffer[i / 32] |= mask;
        } else {
            bitmap->Buffer[i / 32] &= ~mask;
        }
    }
}

bool all(PRTL_BITMAP bitmap, ULONG start, ULONG count, bool value) {
    for (ULONG i = start; i < start + count; ++i) {
        if (bit(bitmap, i) != value) return false;
    }
    return true;
}

// The first run of `count` bits equal to `value` starting in [from, to), entirely inside the
// bitmap; kNotFound if none.
ULONG find_run(PRTL_BITMAP bitmap, ULONG count, bool value, ULONG from, ULONG to) {
    ULONG run = 0;
    for (ULONG i = from; i < bitmap->SizeOfBitMap; ++i) {
        if (bit(bitmap, i) == value) {
            if (++run == count) return i + 1 - count;
        } else {
            run = 0;
            if (i + 1 >= to) break;  // a run must start before `to`
        }
    }
    return kNotFound;
}

ULONG find(PRTL_BITMAP bitmap, ULONG count, ULONG hint, bool value) {
    if (count > bitmap->SizeOfBitMap) return kNotFound;
    if (count == 0) return hint & ~7u;
    if (hint >= bitmap->SizeOfBitMap) hint = 0;
    ULONG found = find_run(bitmap, count, value, hint, bitmap->SizeOfBitMap);
    if (found == kNotFound && hint != 0) found = find_run(bitmap, count, value, 0, hint);
    return found;
}

ULONG count_set(PRTL_BITMAP bitmap) {
    ULONG total = 0;
    const ULONG whole = bitmap->SizeOfBitMap / 32;
    for (ULONG i = 0; i < whole; ++i)
        total += static_cast<ULONG>(__builtin_popcount(bitmap->Buffer[i]));
    for (ULONG i = whole * 32; i < bitmap->SizeOfBitMap; ++i)
        total += bit(bitmap, i) ? 1 : 0;
    return total;
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI RtlInitializeBitMap(PRTL_BITMAP BitMapHeader, PULONG BitMapBuffer, ULONG SizeOfBitMap) {
    BitMapHeader->SizeOfBitMap = SizeOfBitMap;
    BitMapHeader->Buffer = BitMapBuffer;
}

VOID NTAPI RtlClearAllBits(PRTL_BITMAP BitMapHeader) {
    wdk::put(BitMapHeader, 0, BitMapHeader->SizeOfBitMap, false);
}

VOID NTAPI RtlSetAllBits(PRTL_BITMAP BitMapHeader) {
    wdk::put(BitMapHeader, 0, BitMapHeader->SizeOfBitMap, true);
}

VOID NTAPI RtlClearBit(PRTL_BITMAP BitMapHeader, ULONG BitNumber) {
    wdk::check_range(BitMapHeader, BitNumber, 1, "RtlClearBit");
    wdk::put(BitMapHeader, BitNumber, 1, false);
}

VOID NTAPI RtlSetBit(PRTL_BITMAP BitMapHeader, ULONG BitNumber) {
    wdk::check_range(BitMapHeader, BitNumber, 1, "RtlSetBit");
    wdk::put(BitMapHeader, BitNumber, 1, true);
}

BOOLEAN NTAPI RtlTestBit(PRTL_BITMAP BitMapHeader, ULONG BitNumber) {
    wdk::check_range(BitMapHeader, BitNumber, 1, "RtlTestBit");
    return wdk::bit(BitMapHeader, BitNumber) ? TRUE : FALSE;
}

VOID NTAPI RtlClearBits(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG NumberToClear) {
    wdk::check_range(BitMapHeader, StartingIndex, NumberToClear, "RtlClearBits");
    wdk::put(BitMapHeader, StartingIndex, NumberToClear, false);
}

VOID NTAPI RtlSetBits(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG NumberToSet) {
    wdk::check_range(BitMapHeader, StartingIndex, NumberToSet, "RtlSetBits");
    wdk::put(BitMapHeader, StartingIndex, NumberToSet, true);
}

BOOLEAN NTAPI RtlAreBitsClear(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG Length) {
    if (static_cast<ULONGLONG>(StartingIndex) + Length > BitMapHeader->SizeOfBitMap) return FALSE;
    return wdk::all(BitMapHeader, StartingIndex, Length, false) ? TRUE : FALSE;
}

BOOLEAN NTAPI RtlAreBitsSet(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG Length) {
    if (static_cast<ULONGLONG>(StartingIndex) + Length > BitMapHeader->SizeOfBitMap) return FALSE;
    return wdk::all(BitMapHeader, StartingIndex, Length, true) ? TRUE : FALSE;
}

ULONG NTAPI RtlNumberOfSetBits(PRTL_BITMAP BitMapHeader) {
    return wdk::count_set(BitMapHeader);
}

ULONG NTAPI RtlNumberOfClearBits(PRTL_BITMAP BitMapHeader) {
    return BitMapHeader->SizeOfBitMap - wdk::count_set(BitMapHeader);
}

ULONG NTAPI RtlFindClearBits(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex) {
    return wdk::find(BitMapHeader, NumberToFind, HintIndex, false);
}

ULONG NTAPI RtlFindSetBits(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex) {
    return wdk::find(BitMapHeader, NumberToFind, HintIndex, true);
}

ULONG NTAPI RtlFindClearBitsAndSet(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex) {
    const ULONG index = wdk::find(BitMapHeader, NumberToFind, HintIndex, false);
    if (index != wdk::kNotFound) wdk::put(BitMapHeader, index, NumberToFind, true);
    return index;
}

ULONG NTAPI RtlFindSetBitsAndClear(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex) {
    const ULONG index = wdk::find(BitMapHeader, NumberToFind, HintIndex, true);
    if (index != wdk::kNotFound) wdk::put(BitMapHeader, index, NumberToFind, false);
    return index;
}

}  // extern "C"
