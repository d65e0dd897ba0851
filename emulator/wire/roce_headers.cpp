// roce_headers.cpp - printable names and compile-time consistency checks of the opcode table.
#include "wire/roce_headers.hpp"

namespace softndk::wire {
namespace {

// The table is hand-written; these checks catch a transposed column at compile time.
constexpr bool table_is_consistent() {
    for (std::size_t i = 0; i < kOpcodeTable.size(); ++i) {
        const OpcodeInfo &e = kOpcodeTable[i];
        if (!e.valid) continue;
        const bool starts = e.position == MsgPosition::kFirst || e.position == MsgPosition::kOnly;
        const bool ends = e.position == MsgPosition::kLast || e.position == MsgPosition::kOnly;
        // RETH only where a message starts (WRITE FIRST/ONLY, READ REQUEST).
        if ((e.ext & kExtReth) && !(starts && e.is_request)) return false;
        // Immediate and invalidate only on the packet that ends the message.
        if ((e.ext & (kExtImmDt | kExtIeth)) && !ends) return false;
        // Requests never carry an AETH; responses never carry a RETH.
        if (e.is_request && (e.ext & (kExtAeth | kExtAtomicAckEth))) return false;
        if (!e.is_request && (e.ext & (kExtReth | kExtAtomicEth))) return false;
        // A request needs an acknowledgement exactly when it ends a message.
        if (e.is_request && e.requires_ack != ends) return false;
        if (e.carries_ack != ((e.ext & kExtAeth) != 0)) return false;
        if (e.header_len != kBthSize + ext_headers_size(e.ext)) return false;
        if (e.header_len > kMaxIbHeaderSize) return false;
        if (e.consumes_rwqe && !(e.family == OpFamily::kSend || (e.ext & kExtImmDt))) return false;
    }
    return true;
}
static_assert(table_is_consistent(), "kOpcodeTable has an inconsistent row");
static_assert(opcode_info(Opcode::kSendOnlyWithInvalidate).name == "SEND_ONLY_WITH_INVALIDATE");
static_assert(opcode_info(Opcode::kRdmaWriteOnlyWithImmediate).header_len == 32);
static_assert(opcode_info(std::uint8_t{0x64}).valid == false, "UD opcodes are not RC opcodes");
static_assert(opcode_info(kCnpOpcode).valid == false);

constexpr std::array<std::string_view, 4> kAethTypeNames = {"ACK", "RNR_NAK", "RESERVED", "NAK"};
constexpr std::array<std::string_view, 5> kNakCodeNames = {
    "PSN_SEQUENCE_ERROR", "INVALID_REQUEST", "REMOTE_ACCESS_ERROR", "REMOTE_OPERATIONAL_ERROR",
    "INVALID_RD_REQUEST"};

}  // namespace

std::string_view to_string(AethType t) noexcept {
    const auto i = static_cast<std::size_t>(t);
    return i < kAethTypeNames.size() ? kAethTypeNames[i] : "UNKNOWN";
}

std::string_view to_string(NakCode c) noexcept {
    const auto i = static_cast<std::size_t>(c);
    return i < kNakCodeNames.size() ? kNakCodeNames[i] : "UNKNOWN";
}

}  // namespace softndk::wire
