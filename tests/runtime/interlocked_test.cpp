// The Interlocked* family: return-value conventions (new value vs. previous value), widths,
// wrap-around, and atomicity between two threads.
#include <wdm.h>

#include <thread>

#include <catch2/catch.hpp>

TEST_CASE("interlocked: 32-bit operations wrap like LONG and return Windows' values") {
    LONG value = MAXLONG;
    CHECK(InterlockedIncrement(&value) == MINLONG);  // the new value, wrapped
    CHECK(value == MINLONG);
    CHECK(InterlockedDecrement(&value) == MAXLONG);
    CHECK(InterlockedAdd(&value, 2) == MINLONG + 1);           // Add returns the new value...
    CHECK(InterlockedExchangeAdd(&value, -2) == MINLONG + 1);  // ...ExchangeAdd the old one
    CHECK(value == MAXLONG);

    CHECK(InterlockedExchange(&value, -7) == MAXLONG);
    CHECK(value == -7);

    value = 0x0F0F;
    CHECK(InterlockedOr(&value, 0x00F0) == 0x0F0F);
    CHECK(value == 0x0FFF);
    CHECK(InterlockedAnd(&value, 0x0F00) == 0x0FFF);
    CHECK(value == 0x0F00);
    CHECK(InterlockedXor(&value, 0x0FF0) == 0x0F00);
    CHECK(value == 0x00F0);
}

TEST_CASE("interlocked: CompareExchange returns the initial value and swaps only on a match") {
    LONG value = 5;
    CHECK(InterlockedCompareExchange(&value, 9, 4) == 5);  // no match: unchanged
    CHECK(value == 5);
    CHECK(InterlockedCompareExchange(&value, 9, 5) == 5);  // match: swapped
    CHECK(value == 9);

    SHORT small = 3;
    CHECK(InterlockedCompareExchange16(&small, 4, 2) == 3);
    CHECK(small == 3);
    CHECK(InterlockedCompareExchange16(&small, 4, 3) == 3);
    CHECK(InterlockedIncrement16(&small) == 5);
    CHECK(InterlockedDecrement16(&small) == 4);

    LONG64 wide = 0x1'0000'0000LL;  // above 32 bits: a 32-bit implementation would lose it
    CHECK(InterlockedCompareExchange64(&wide, 1, 0) == 0x1'0000'0000LL);
    CHECK(wide == 0x1'0000'0000LL);
    CHECK(InterlockedCompareExchange64(&wide, 1, 0x1'0000'0000LL) == 0x1'0000'0000LL);
    CHECK(wide == 1);
}

TEST_CASE("interlocked: 64-bit operations keep the upper half") {
    LONG64 value = 0xFFFF'FFFFLL;
    CHECK(InterlockedIncrement64(&value) == 0x1'0000'0000LL);
    CHECK(InterlockedDecrement64(&value) == 0xFFFF'FFFFLL);
    CHECK(InterlockedAdd64(&value, 0x1'0000'0001LL) == 0x2'0000'0000LL);
    CHECK(InterlockedExchangeAdd64(&value, 1) == 0x2'0000'0000LL);
    CHECK(InterlockedExchange64(&value, -1) == 0x2'0000'0001LL);
    CHECK(value == -1);
    CHECK(InterlockedAnd64(&value, 0x7F00'0000'0000'0000LL) == -1);
    CHECK(value == 0x7F00'0000'0000'0000LL);
    CHECK(InterlockedOr64(&value, 1) == 0x7F00'0000'0000'0000LL);
    CHECK(InterlockedXor64(&value, 0x7F00'0000'0000'0001LL) == 0x7F00'0000'0000'0001LL);
    CHECK(value == 0);
}

TEST_CASE("interlocked: pointer exchange and compare-exchange") {
    int first = 0;
    int second = 0;
    PVOID slot = nullptr;
    CHECK(InterlockedCompareExchangePointer(&slot, &first, &second) == nullptr);  // no match
    CHECK(slot == nullptr);
    CHECK(InterlockedCompareExchangePointer(&slot, &first, nullptr) == nullptr);
    CHECK(slot == &first);
    CHECK(InterlockedExchangePointer(&slot, &second) == &first);
    CHECK(slot == &second);
}

TEST_CASE("interlocked: bit test-and-set/reset return the bit's previous value") {
    LONG bits = 0;
    CHECK(InterlockedBitTestAndSet(&bits, 31) == 0);
    CHECK(bits == MINLONG);
    CHECK(InterlockedBitTestAndSet(&bits, 31) == 1);
    CHECK(InterlockedBitTestAndReset(&bits, 31) == 1);
    CHECK(InterlockedBitTestAndReset(&bits, 31) == 0);
    CHECK(bits == 0);

    LONG64 wide = 0;
    CHECK(InterlockedBitTestAndSet64(&wide, 40) == 0);
    CHECK(wide == (1LL << 40));
    CHECK(InterlockedBitTestAndReset64(&wide, 40) == 1);
    CHECK(wide == 0);
}

TEST_CASE("interlocked: increments and compare-exchange loops from two threads lose nothing") {
    constexpr int kIterations = 200'000;
    LONG counter = 0;
    LONG64 total = 0;
    auto work = [&] {
        for (int i = 0; i < kIterations; ++i) {
            InterlockedIncrement(&counter);
            LONG64 seen;
            do {
                // The Windows idiom for an atomic read: a plain read of `total` while
                // the other thread exchanges it is a data race (ThreadSanitizer says so).
                seen = InterlockedCompareExchange64(&total, 0, 0);
            } while (InterlockedCompareExchange64(&total, seen + 3, seen) != seen);
        }
    };
    std::thread first(work);
    std::thread second(work);
    first.join();
    second.join();
    CHECK(counter == 2 * kIterations);
    CHECK(total == 6LL * kIterations);
}
