// psn.hpp - 24-bit packet sequence numbers (IBA vol. 1 9.7.1) and go-back-N helpers.
//
// A PSN is 24 bits and wraps: 0xFFFFFF + 1 == 0. Ordering is modular and only
// meaningful for PSNs less than half the space (2^23) apart, which the RC window
// guarantees (rxe stops at 128 outstanding PSNs; IBA caps it at 2^23).
// psn_diff() is the kernel rxe definition: the 24-bit difference sign-extended,
// i.e. (int32_t)((a - b) << 8) >> 8. A difference of exactly 2^23 is ambiguous on
// the wire; this definition calls it negative (a is "behind" b).
//
// All values passed in may carry junk above bit 23 (e.g. straight out of a
// 32-bit BTH word); every function masks. Every function returns a masked PSN.
#pragma once

#include <cstdint>

namespace softndk::wire {

inline constexpr std::uint32_t kPsnBits = 24;
inline constexpr std::uint32_t kPsnMask = 0x00FFFFFFu;
inline constexpr std::uint32_t kPsnModulus = 0x01000000u;
// Largest distance for which "ahead"/"behind" is well defined (IBA: half the space).
inline constexpr std::uint32_t kPsnHalfRange = 0x00800000u;

constexpr std::uint32_t psn_mask(std::uint32_t v) noexcept {
    return v & kPsnMask;
}

// psn + n modulo 2^24.
constexpr std::uint32_t psn_add(std::uint32_t psn, std::uint32_t n) noexcept {
    return (psn + n) & kPsnMask;
}

// psn - n modulo 2^24.
constexpr std::uint32_t psn_sub(std::uint32_t psn, std::uint32_t n) noexcept {
    return (psn - n) & kPsnMask;
}

// Signed modular difference a - b in [-2^23, 2^23 - 1]. Positive: a is after b.
// C++20 defines both the unsigned->signed conversion (modular) and the arithmetic
// right shift of a negative value, so this is portable and constexpr.
constexpr std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) noexcept {
    return static_cast<std::int32_t>((a - b) << 8) >> 8;
}

constexpr bool psn_before(std::uint32_t a, std::uint32_t b) noexcept {
    return psn_diff(a, b) < 0;
}
constexpr bool psn_after(std::uint32_t a, std::uint32_t b) noexcept {
    return psn_diff(a, b) > 0;
}
constexpr bool psn_equal(std::uint32_t a, std::uint32_t b) noexcept {
    return psn_mask(a) == psn_mask(b);
}

// Forward distance from `from` to `to`, 0 .. 2^24-1 (how many PSNs lie in [from, to)).
constexpr std::uint32_t psn_distance(std::uint32_t from, std::uint32_t to) noexcept {
    return (to - from) & kPsnMask;
}

// True if psn lies in the half-open modular range [first, first + count).
// count == 0 is the empty range. count > 2^24 is treated as the whole space.
constexpr bool psn_in_range(std::uint32_t psn, std::uint32_t first, std::uint32_t count) noexcept {
    return count >= kPsnModulus || psn_distance(first, psn) < count;
}

// Responder view of an arriving request PSN (rxe check_psn, IBA 9.7.5.1.1).
enum class PsnClass : std::uint8_t {
    kExpected,       // == ePSN: execute
    kDuplicate,      // behind ePSN: re-ACK (SEND/WRITE) or replay (READ/atomic)
    kOutOfSequence,  // ahead of ePSN: one NAK PSN-sequence-error carrying ePSN
};

constexpr PsnClass classify_request_psn(std::uint32_t expected, std::uint32_t received) noexcept {
    const std::int32_t d = psn_diff(received, expected);
    return d == 0 ? PsnClass::kExpected : (d < 0 ? PsnClass::kDuplicate : PsnClass::kOutOfSequence);
}

// Requester window (go-back-N): may a packet with PSN `next` be sent while `oldest_unacked`
// is the completer's oldest unacknowledged PSN and at most `window` PSNs may be in flight?
constexpr bool psn_window_open(std::uint32_t next, std::uint32_t oldest_unacked,
                               std::uint32_t window) noexcept {
    return psn_diff(next, oldest_unacked) < static_cast<std::int32_t>(window);
}

// Completer: does a cumulative ACK for `acked_psn` cover the packet `psn`?
// (An ACK/NAK-sequence for PSN p acknowledges every PSN <= p; a NAK-sequence
// carrying ePSN acknowledges every PSN < ePSN.)
constexpr bool psn_covered_by_ack(std::uint32_t psn, std::uint32_t acked_psn) noexcept {
    return psn_diff(psn, acked_psn) <= 0;
}

// Value type for code that wants the arithmetic attached to the number. Deliberately
// has no operator< : modular order is not a strict weak ordering, so a Psn must never
// be a std::map key or go through std::sort.
class Psn {
  public:
    constexpr Psn() noexcept = default;
    constexpr explicit Psn(std::uint32_t v) noexcept : value_(v & kPsnMask) {}

    constexpr std::uint32_t value() const noexcept { return value_; }

    constexpr Psn operator+(std::uint32_t n) const noexcept { return Psn(psn_add(value_, n)); }
    constexpr Psn operator-(std::uint32_t n) const noexcept { return Psn(psn_sub(value_, n)); }
    constexpr Psn &operator+=(std::uint32_t n) noexcept {
        value_ = psn_add(value_, n);
        return *this;
    }
    constexpr Psn &operator++() noexcept { return *this += 1; }
    // Signed modular difference, as psn_diff().
    constexpr std::int32_t operator-(Psn other) const noexcept {
        return psn_diff(value_, other.value_);
    }
    constexpr bool before(Psn other) const noexcept { return psn_before(value_, other.value_); }
    constexpr bool after(Psn other) const noexcept { return psn_after(value_, other.value_); }
    friend constexpr bool operator==(Psn, Psn) noexcept = default;

  private:
    std::uint32_t value_ = 0;
};

}  // namespace softndk::wire
