// conversation.hpp - test captures built with softndk_wire: the wire oracle's 26-frame RC
// conversation (same addresses, ports, PSNs, payloads and headers, so every byte from the
// IP header on must equal the oracle's rocev2_rc.pcap) and one packet of every RC opcode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wire/packet.hpp"

namespace softndk::wire::test {

struct CapturedFrame {
    std::vector<std::uint8_t> bytes;  // Ethernet frame incl. ICRC
    Opcode opcode;
    std::uint32_t psn;
    std::uint32_t dest_qp;
};

// The oracle's rc_conversation() (wire_oracle.py), IPv4: A 192.0.2.1 QP 0x11 -> B 192.0.2.2
// QP 0x12, requests from UDP port 0xC011, responses from 0xC012, path MTU 256.
std::vector<CapturedFrame> oracle_rc_conversation();

// Every valid RC opcode once (payload opcodes with a payload that needs padding where the
// position allows it), over IPv6 (2001:db8::1 <-> 2001:db8::2) or IPv4.
std::vector<CapturedFrame> every_opcode_conversation(bool ipv6);

// Writes frames to a pcap file, 1 us apart. Returns false on I/O error.
bool write_capture(const std::string &path, const std::vector<CapturedFrame> &frames,
                   bool nanosecond_timestamps);

// Wireshark's (packet-infiniband.c) spelling of an opcode name, derived from our table's
// name: "RDMA_WRITE_ONLY_WITH_IMMEDIATE" -> "RDMA Write Only Immediate".
std::string wireshark_opcode_name(Opcode op);

}  // namespace softndk::wire::test
