// messages.hpp - connection-manager messages, modelled on IB CM MADs (IBA vol. 1
// ch. 12): REQ, REP, RTU, REJ, DREQ, DREP.
//
// In the host they travel through the fabric as this fixed-size POD (no
// pointers, fixed-width fields, explicit reserved bytes), so a UDP port can later
// send exactly these bytes. Connection ids play the role of IB CM's local and
// remote communication ids: each side names the connection by its own id and
// echoes the peer's.
#pragma once

#include <cstdint>
#include <type_traits>

#include "softndk/hw_interface.hpp"
#include "wire/packet.hpp"

namespace softndk::emu::cm {

enum class MessageType : uint8_t {
    kReq = 1,   // active -> passive: connect (QPN, starting PSN, IRD/ORD, MTU, private data)
    kRep = 2,   // passive -> active: accept (same fields for the passive QP)
    kRtu = 3,   // active -> passive: ready to use (CompleteConnect)
    kRej = 4,   // either way: refuse (status says why) with private data
    kDreq = 5,  // either way: disconnect request
    kDrep = 6,  // answer to DREQ
};

struct Message {
    MessageType type;
    uint8_t reserved0[3];
    int32_t status;                // kRej: NTSTATUS the active side reports
    uint32_t sender_id;            // sender's connection id (IB CM local comm id)
    uint32_t receiver_id;          // receiver's connection id, 0 in a REQ (remote comm id)
    uint32_t qp_number;            // REQ/REP: sender's QP
    uint32_t starting_psn;         // REQ/REP: first PSN the sender's requester uses
    uint32_t responder_resources;  // REQ/REP: sender's IRD
    uint32_t initiator_depth;      // REQ/REP: sender's ORD
    uint32_t path_mtu;             // REQ/REP: largest MTU the sender supports
    uint32_t private_data_bytes;
    uint64_t time_ns;        // sender's virtual clock
    wire::IpAddr source_ip;  // where to answer
    wire::IpAddr destination_ip;
    uint16_t source_port;  // REQ: the connection's port numbers (host order)
    uint16_t destination_port;
    uint8_t reserved1[4];
    uint8_t private_data[hw::kMaxPrivateData];
};
static_assert(std::is_trivially_copyable_v<Message> && std::is_standard_layout_v<Message>);

}  // namespace softndk::emu::cm
