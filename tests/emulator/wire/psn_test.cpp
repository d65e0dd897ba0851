// PSN arithmetic: wrap at 2^24, modular compare, the half-range boundary, go-back-N helpers.
#include <catch2/catch.hpp>

#include "wire/psn.hpp"

using namespace softndk::wire;

// Most of this is constexpr: pin the wrap behaviour at compile time too.
static_assert(psn_add(0xFFFFFF, 1) == 0);
static_assert(psn_diff(0, 0xFFFFFF) == 1);
static_assert(Psn(0xFFFFFF) + 1 == Psn(0));

TEST_CASE("psn_add wraps at 0xFFFFFF", "[psn][edge]") {
    CHECK(psn_add(0xFFFFFF, 1) == 0);
    CHECK(psn_add(0xFFFFFF, 2) == 1);
    CHECK(psn_add(0xFFFFF0, 0x20) == 0x10);
    CHECK(psn_add(0, kPsnModulus) == 0);  // a full turn is the identity
    CHECK(psn_add(5, 0xFFFFFFFF) == 4);   // 32-bit overflow of the addend still wraps right
    CHECK(psn_sub(0, 1) == 0xFFFFFF);
    CHECK(psn_sub(3, 5) == 0xFFFFFE);
}

TEST_CASE("inputs with junk above bit 23 are masked", "[psn][edge]") {
    CHECK(psn_mask(0xAB123456) == 0x123456);
    CHECK(psn_add(0xFF000000 | 0xFFFFFF, 1) == 0);
    CHECK(psn_diff(0xFF000001, 0x00000000) == 1);
    CHECK(Psn(0x12345678).value() == 0x345678);
}

TEST_CASE("psn_diff compares across the wrap", "[psn][edge]") {
    CHECK(psn_diff(0, 0xFFFFFF) == 1);
    CHECK(psn_diff(0xFFFFFF, 0) == -1);
    CHECK(psn_diff(5, 0xFFFFFB) == 10);
    CHECK(psn_before(0xFFFFFF, 0));
    CHECK(psn_after(0, 0xFFFFFF));
    CHECK_FALSE(psn_before(7, 7));
    CHECK_FALSE(psn_after(7, 7));
    CHECK(psn_equal(0x1000007, 7));
}

TEST_CASE("psn_diff at and around half range", "[psn][edge]") {
    // 2^23 - 1 ahead is still "after"; exactly 2^23 is ambiguous and reads as "before"
    // (rxe's definition); 2^23 + 1 ahead is really 2^23 - 1 behind.
    CHECK(psn_diff(kPsnHalfRange - 1, 0) == static_cast<std::int32_t>(kPsnHalfRange - 1));
    CHECK(psn_diff(kPsnHalfRange, 0) == -static_cast<std::int32_t>(kPsnHalfRange));
    CHECK(psn_diff(0, kPsnHalfRange) == -static_cast<std::int32_t>(kPsnHalfRange));
    CHECK(psn_diff(kPsnHalfRange + 1, 0) == -static_cast<std::int32_t>(kPsnHalfRange - 1));
    // Antisymmetry holds everywhere except the ambiguous point.
    for (std::uint32_t a : {0u, 1u, 0x7FFFFFu, 0x800001u, 0xFFFFFFu}) {
        for (std::uint32_t d : {1u, 2u, 0x100u, 0x7FFFFFu}) {
            const std::uint32_t b = psn_add(a, d);
            CHECK(psn_diff(b, a) == static_cast<std::int32_t>(d));
            CHECK(psn_diff(a, b) == -static_cast<std::int32_t>(d));
        }
    }
}

TEST_CASE("psn_distance and psn_in_range across the wrap", "[psn]") {
    CHECK(psn_distance(0xFFFFFE, 2) == 4);
    CHECK(psn_distance(2, 0xFFFFFE) == 0xFFFFFC);
    CHECK(psn_distance(9, 9) == 0);
    CHECK(psn_in_range(0xFFFFFF, 0xFFFFFE, 3));
    CHECK(psn_in_range(0, 0xFFFFFE, 3));
    CHECK_FALSE(psn_in_range(1, 0xFFFFFE, 3));  // half-open
    CHECK_FALSE(psn_in_range(0xFFFFFD, 0xFFFFFE, 3));
    CHECK_FALSE(psn_in_range(5, 5, 0));  // empty range
    CHECK(psn_in_range(123, 456, kPsnModulus));
}

TEST_CASE("responder classification of a request PSN", "[psn][gbn]") {
    CHECK(classify_request_psn(100, 100) == PsnClass::kExpected);
    CHECK(classify_request_psn(100, 99) == PsnClass::kDuplicate);
    CHECK(classify_request_psn(100, 101) == PsnClass::kOutOfSequence);
    // Across the wrap: expecting 0, 0xFFFFFF is an old duplicate and 1 is ahead.
    CHECK(classify_request_psn(0, 0xFFFFFF) == PsnClass::kDuplicate);
    CHECK(classify_request_psn(0, 1) == PsnClass::kOutOfSequence);
    CHECK(classify_request_psn(0xFFFFFF, 0) == PsnClass::kOutOfSequence);
}

TEST_CASE("requester window and cumulative ACK coverage", "[psn][gbn]") {
    // window 128 with oldest unacked 0xFFFFC0: 0xFFFFC0 .. 0x3F may be in flight.
    CHECK(psn_window_open(0xFFFFC0, 0xFFFFC0, 128));
    CHECK(psn_window_open(0x3F, 0xFFFFC0, 128));
    CHECK_FALSE(psn_window_open(0x40, 0xFFFFC0, 128));
    CHECK_FALSE(psn_window_open(0, 0, 0));
    // An ACK for 2 acknowledges 0xFFFFFF, 0, 1, 2 but not 3.
    CHECK(psn_covered_by_ack(0xFFFFFF, 2));
    CHECK(psn_covered_by_ack(2, 2));
    CHECK_FALSE(psn_covered_by_ack(3, 2));
}

TEST_CASE("Psn value type", "[psn]") {
    Psn p(0xFFFFFE);
    ++p;
    CHECK(p.value() == 0xFFFFFF);
    p += 3;
    CHECK(p.value() == 2);
    CHECK((p - 5u).value() == 0xFFFFFD);
    CHECK(Psn(2) - Psn(0xFFFFFF) == 3);
    CHECK(Psn(0xFFFFFF).before(Psn(2)));
    CHECK(Psn(2).after(Psn(0xFFFFFF)));
    CHECK(Psn(0x1000005) == Psn(5));
}
