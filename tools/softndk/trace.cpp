// trace.cpp - `softndk trace` (contract in trace.hpp, the format in docs/trace.md).
//
// The converters share one pass over the records in seq order (link()) that ties each
// posted WQE to its fetch, its PSNs, its packets, its completion and the remote CQE it
// caused; the outputs only read the result.
#include "trace.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "report.hpp"
#include "softndk/hw_interface.hpp"
#include "softndk/trace.hpp"
#include "wire/frame.hpp"
#include "wire/icrc.hpp"
#include "wire/packet.hpp"
#include "wire/pcap_writer.hpp"
#include "wire/psn.hpp"

namespace softndk::tool {
namespace {

namespace tr = softndk::trace;
using tr::Record;
using tr::Type;

constexpr size_t kNone = SIZE_MAX;

// ---- Reading.

struct Trace {
    tr::FileHeader header{};
    std::vector<Record> records;  // in seq order
};

Trace read_trace(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(file + ": cannot open it");
    Trace t;
    if (!in.read(reinterpret_cast<char *>(&t.header), sizeof t.header) ||
        std::memcmp(t.header.magic, tr::kMagic, sizeof tr::kMagic) != 0)
        throw std::runtime_error(file + ": not a SoftNDK trace (bad magic)");
    if (t.header.version != tr::kFormatVersion || t.header.record_bytes != tr::kRecordBytes)
        throw std::runtime_error(fmt::format(
            "{}: trace format {} with {}-byte records; this tool "
            "reads format {} with {}-byte records",
            file, t.header.version, t.header.record_bytes, tr::kFormatVersion, tr::kRecordBytes));
    Record r;
    while (in.read(reinterpret_cast<char *>(&r), sizeof r))
        t.records.push_back(r);
    if (in.gcount() != 0)
        std::fprintf(stderr, "softndk trace: %s: a partial record at the end is ignored\n",
                     file.c_str());
    std::stable_sort(t.records.begin(), t.records.end(),
                     [](const Record &a, const Record &b) { return a.seq < b.seq; });
    return t;
}

// Several traces of one run (daemon mode: the daemon's file with the device's records,
// each consumer's FILE.consumer-<pid> with its provider's) as one: a k-way merge on the
// wall clock, which every process reads alike, that keeps each file's own order (a
// record's wall time may lag its seq within a file by a few ns across threads, so the
// files are merged, never sorted). The merged records are numbered again.
Trace merge_traces(std::vector<Trace> parts, const std::vector<std::string> &files) {
    Trace out = parts.front();
    out.records.clear();
    out.header.pid = 0;
    std::vector<size_t> next(parts.size(), 0);
    size_t total = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].header.flags & tr::kFileSimulated)
            throw std::runtime_error(files[i] +
                                     ": written in simulated time, it has no wall clock to "
                                     "merge on (simulated time runs in one process)");
        out.header.flags |= parts[i].header.flags;
        total += parts[i].records.size();
    }
    out.records.reserve(total);
    while (out.records.size() < total) {
        size_t pick = SIZE_MAX;
        for (size_t i = 0; i < parts.size(); ++i) {
            if (next[i] == parts[i].records.size()) continue;
            if (pick == SIZE_MAX ||
                parts[i].records[next[i]].wall_ns < parts[pick].records[next[pick]].wall_ns)
                pick = i;
        }
        Record r = parts[pick].records[next[pick]++];
        r.seq = static_cast<uint32_t>(out.records.size());
        out.records.push_back(r);
    }
    return out;
}

// ---- Names.

std::string wqe_opcode_name(uint8_t op, bool receive = false) {
    if (receive) return "RECV";
    switch (static_cast<hw::WqeOpcode>(op)) {
        case hw::WqeOpcode::kNop:
            return "NOP";
        case hw::WqeOpcode::kSendInvalidate:
            return "SEND_INV";
        case hw::WqeOpcode::kRdmaWrite:
            return "WRITE";
        case hw::WqeOpcode::kSend:
            return "SEND";
        case hw::WqeOpcode::kRdmaRead:
            return "READ";
        case hw::WqeOpcode::kLocalInvalidate:
            return "LOCAL_INV";
        case hw::WqeOpcode::kFastRegister:
            return "FAST_REG";
        case hw::WqeOpcode::kBindWindow:
            return "BIND";
    }
    return fmt::format("op_{:#x}", op);
}

const char *state_name(uint8_t s) {
    static constexpr const char *kNames[] = {"RESET", "INIT", "RTR", "RTS", "ERROR"};
    return s < 5 ? kNames[s] : "?";
}

const char *cm_name(uint8_t t) {
    static constexpr const char *kNames[] = {"?", "REQ", "REP", "RTU", "REJ", "DREQ", "DREP"};
    return t < 7 ? kNames[t] : "?";
}

const char *eqe_name(uint32_t t) {
    switch (static_cast<hw::EqeType>(t)) {
        case hw::EqeType::kCompletion:
            return "completion";
        case hw::EqeType::kCqError:
            return "cq_error";
        case hw::EqeType::kQpFatal:
            return "qp_fatal";
        case hw::EqeType::kSrqLimit:
            return "srq_limit";
        case hw::EqeType::kConnectRequest:
            return "connect_request";
        case hw::EqeType::kConnectReply:
            return "connect_reply";
        case hw::EqeType::kEstablished:
            return "established";
        case hw::EqeType::kDisconnected:
            return "disconnected";
        case hw::EqeType::kDisconnectDone:
            return "disconnect_done";
        case hw::EqeType::kConnectAborted:
            return "connect_aborted";
    }
    return "?";
}

const char *retry_name(uint8_t k) {
    switch (static_cast<tr::RetryKind>(k)) {
        case tr::RetryKind::kSequence:
            return "go-back-N";
        case tr::RetryKind::kTimeout:
            return "ACK timeout";
        case tr::RetryKind::kRnr:
            return "RNR";
    }
    return "?";
}

std::string bth_name(uint8_t opcode) {
    return std::string(wire::opcode_info(opcode).name);
}

std::string ip_text(const uint8_t (&bytes)[16]) {
    wire::IpAddr ip;
    std::memcpy(ip.bytes.data(), bytes, 16);
    char text[INET6_ADDRSTRLEN] = {};
    if (ip.is_v4()) {
        ::inet_ntop(AF_INET, bytes + 12, text, sizeof text);
    } else {
        ::inet_ntop(AF_INET6, bytes, text, sizeof text);
    }
    return text;
}

// JSON string contents (no quotes).
std::string escape_json(const std::string &s) {
    const std::string quoted = json_string(s);
    return quoted.substr(1, quoted.size() - 2);
}

// ---- Linking: which records belong to which WQE.

using QpKey = std::tuple<uint16_t, uint32_t>;  // device, QP

struct Links {
    std::vector<size_t> wqe_of;        // record -> its post record (post, fetch, start,
                                       // request packets, completion), or kNone
    std::vector<size_t> span_end;      // post -> the CQE that retired it, or kNone
    std::vector<size_t> first_packet;  // post -> its first transmitted packet
    std::vector<size_t> flow_end;      // post -> remote receive CQE, else last packet's RX
    std::vector<size_t> rx_of;         // TX packet -> its arrival (RX or drop record)
    std::map<QpKey, std::pair<wire::IpAddr, wire::IpAddr>> paths;  // filled as met
    std::vector<std::pair<wire::IpAddr, wire::IpAddr>> path_of;    // TX -> local, remote
    std::vector<std::vector<std::string>> comments;                // TX/CM -> pcap comments
};

struct Started {
    size_t post;
    uint32_t first_psn;
    uint32_t count;
};

Links link(const std::vector<Record> &records) {
    const size_t n = records.size();
    Links l;
    l.wqe_of.assign(n, kNone);
    l.span_end.assign(n, kNone);
    l.first_packet.assign(n, kNone);
    l.flow_end.assign(n, kNone);
    l.rx_of.assign(n, kNone);
    l.path_of.resize(n);
    l.comments.resize(n);
    std::map<QpKey, std::deque<size_t>> sends, receives;  // posts not yet completed
    std::map<QpKey, std::deque<size_t>> fetched;          // posts fetched, not started
    std::map<QpKey, std::vector<Started>> started;
    std::map<std::tuple<uint32_t, uint32_t, uint8_t>, std::deque<size_t>> in_flight;
    std::map<QpKey, std::deque<size_t>> awaiting_receive_cqe;  // posts of SENDs arrived
    std::map<size_t, size_t> last_packet;                      // post -> last TX of it
    std::vector<std::pair<std::tuple<uint16_t, uint32_t, uint32_t>, std::string>> faults;

    for (size_t i = 0; i < n; ++i) {
        const Record &r = records[i];
        switch (r.type) {
            case Type::kPost: {
                const QpKey k{r.device, r.body.wqe.qp};
                l.wqe_of[i] = i;
                (r.flags & tr::kFlagRecv ? receives : sends)[k].push_back(i);
                if (!(r.flags & tr::kFlagRecv)) fetched[k].push_back(i);
                break;
            }
            case Type::kWqeFetch: {
                const QpKey k{r.device, r.body.wqe.qp};
                for (size_t p : sends[k]) {
                    if ((records[p].body.wqe.wqe_index & 0xFFFF) == r.body.wqe.wqe_index) {
                        l.wqe_of[i] = p;
                        break;
                    }
                }
                break;
            }
            case Type::kWqeStart: {
                const QpKey k{r.device, r.body.wqe.qp};
                auto &q = fetched[k];
                for (auto it = q.begin(); it != q.end(); ++it) {
                    if ((records[*it].body.wqe.wqe_index & 0xFFFF) == r.body.wqe.wqe_index) {
                        l.wqe_of[i] = *it;
                        if (r.body.wqe.psn_count != 0)
                            started[k].push_back({*it, r.body.wqe.psn, r.body.wqe.psn_count});
                        q.erase(it);
                        break;
                    }
                }
                break;
            }
            case Type::kQpState: {
                wire::IpAddr local, remote;
                std::memcpy(local.bytes.data(), r.body.qp_state.local_ip, 16);
                std::memcpy(remote.bytes.data(), r.body.qp_state.remote_ip, 16);
                if (r.body.qp_state.to == 2 || r.body.qp_state.to == 3)  // RTR, RTS
                    l.paths[{r.device, r.body.qp_state.qp}] = {local, remote};
                break;
            }
            case Type::kPacketTx: {
                const auto &p = r.body.packet;
                const QpKey k{r.device, p.qp};
                if (auto it = l.paths.find(k); it != l.paths.end()) l.path_of[i] = it->second;
                in_flight[{p.dest_qp, p.psn, p.opcode}].push_back(i);
                if (!wire::opcode_info(p.opcode).is_request) break;
                auto &s = started[k];
                for (auto it = s.rbegin(); it != s.rend(); ++it) {
                    const uint32_t offset = (p.psn - it->first_psn) & wire::kPsnMask;
                    if (offset < it->count || (offset == 0 && it->count == 0)) {
                        l.wqe_of[i] = it->post;
                        if (l.first_packet[it->post] == kNone) l.first_packet[it->post] = i;
                        last_packet[it->post] = i;
                        break;
                    }
                }
                for (auto &[key, what] : faults) {
                    if (key == std::tuple<uint16_t, uint32_t, uint32_t>{r.device, p.qp, p.psn})
                        l.comments[i].push_back(what);
                }
                break;
            }
            case Type::kPacketRx:
            case Type::kPacketDrop: {
                const auto &p = r.body.packet;
                auto &q = in_flight[{p.dest_qp, p.psn, p.opcode}];
                if (r.type == Type::kPacketDrop) {
                    // The RX record of the same packet came just before; it is the drop.
                    for (size_t tx = 0; tx < i; ++tx) {
                        const size_t j = i - 1 - tx;
                        const Record &t = records[j];
                        if (t.type == Type::kPacketTx && t.body.packet.dest_qp == p.dest_qp &&
                            t.body.packet.psn == p.psn && t.body.packet.opcode == p.opcode) {
                            l.rx_of[j] = i;
                            l.comments[j].push_back(fmt::format(
                                "dropped by the receiver (device {}): no QP {} or it does not "
                                "accept packets",
                                r.device, p.dest_qp));
                            break;
                        }
                    }
                    break;
                }
                // The latest send of this packet that has not arrived yet: after a loss,
                // the resend is the one that arrives.
                if (q.empty()) break;
                const size_t tx = q.back();
                q.pop_back();
                l.rx_of[tx] = i;
                l.wqe_of[i] = l.wqe_of[tx];
                const size_t post = l.wqe_of[tx];
                if (post == kNone) break;
                const auto &info = wire::opcode_info(p.opcode);
                const bool ends = info.position == wire::MsgPosition::kLast ||
                                  info.position == wire::MsgPosition::kOnly;
                if (ends && info.consumes_rwqe)
                    awaiting_receive_cqe[{r.device, p.dest_qp}].push_back(post);
                if (ends && l.flow_end[post] == kNone && !info.consumes_rwqe &&
                    last_packet[post] == tx)
                    l.flow_end[post] = i;
                break;
            }
            case Type::kCqe: {
                const auto &c = r.body.cqe;
                const QpKey k{r.device, c.qp};
                if (r.flags & tr::kFlagRecv) {
                    auto &q = receives[k];
                    if (!q.empty()) {
                        l.span_end[q.front()] = i;
                        l.wqe_of[i] = q.front();
                        q.pop_front();
                    }
                    auto &w = awaiting_receive_cqe[k];
                    if (!w.empty()) {
                        l.flow_end[w.front()] = i;
                        w.pop_front();
                    }
                    break;
                }
                // Send CQEs retire every WQE up to theirs (unsignaled ones silently).
                auto &q = sends[k];
                auto match = std::find_if(q.begin(), q.end(), [&](size_t p) {
                    return (records[p].body.wqe.wqe_index & 0xFFFF) == c.wqe_index;
                });
                if (match == q.end()) break;
                l.wqe_of[i] = *match;
                for (auto it = q.begin(); it != std::next(match); ++it)
                    l.span_end[*it] = i;
                q.erase(q.begin(), std::next(match));
                break;
            }
            case Type::kFault: {
                const auto &f = r.body.fault;
                const std::string what = fmt::format(
                    "fault injected: {}", std::string(f.what, strnlen(f.what, sizeof f.what)));
                // The fault injector names the QP only: its packet is the latest one that QP
                // sent (a transmit-side fault) or was sent (receive-side: on the peer).
                bool attached = false;
                for (size_t back = 0; back < i && back < 64; ++back) {
                    const size_t j = i - 1 - back;
                    const Record &t = records[j];
                    if (t.type != Type::kPacketTx) continue;
                    const bool sender = t.device == r.device && t.body.packet.qp == f.qp;
                    const bool receiver = t.body.packet.dest_qp == f.qp;
                    if (f.psn == 0 ? (sender || receiver)
                                   : (sender && t.body.packet.psn == f.psn)) {
                        l.comments[j].push_back(what);
                        attached = true;
                        break;
                    }
                }
                if (!attached) faults.push_back({{r.device, f.qp, f.psn}, what});
                break;
            }
            default:
                break;
        }
    }
    // A packet with no arrival, to a QP that later received others, was lost on the way
    // (the in-process fabric's drop filter, an injected loss). Packets still in flight at
    // the end of the trace, or to QPs of another process, are not marked.
    std::map<uint32_t, size_t> last_arrival;  // destination QP -> its last RX record
    for (size_t i = 0; i < n; ++i) {
        if (records[i].type == Type::kPacketRx) last_arrival[records[i].body.packet.dest_qp] = i;
    }
    for (size_t i = 0; i < n; ++i) {
        const Record &r = records[i];
        if (r.type != Type::kPacketTx || l.rx_of[i] != kNone) continue;
        auto it = last_arrival.find(r.body.packet.dest_qp);
        if (it != last_arrival.end() && it->second > i)
            l.comments[i].push_back("lost: never arrived (later packets to its QP did)");
    }
    return l;
}

uint64_t time_of(const Record &r, bool wall) {
    return wall ? r.wall_ns : r.model_ns;
}

// ---- Text.

std::string detail(const Record &r, size_t index, const Links &l) {
    switch (r.type) {
        case Type::kDevice: {
            const auto &d = r.body.device;
            return fmt::format("{} if_index {} address {}",
                               std::string(d.alias, strnlen(d.alias, sizeof d.alias)), d.if_index,
                               ip_text(d.ip));
        }
        case Type::kPost:
            return fmt::format("{} (provider) pi {}/{}",
                               wqe_opcode_name(r.body.wqe.opcode, r.flags & tr::kFlagRecv),
                               r.body.wqe.psn, r.body.wqe.psn_count);
        case Type::kDoorbell:
            return fmt::format("SQ doorbell pi {} ci {}", r.body.wqe.wqe_index, r.body.wqe.psn);
        case Type::kWqeFetch:
            return fmt::format("{} {} B, at the device", wqe_opcode_name(r.body.wqe.opcode),
                               r.body.wqe.length);
        case Type::kWqeStart:
            if (r.body.wqe.psn_count == 0)
                return fmt::format("{} executed locally", wqe_opcode_name(r.body.wqe.opcode));
            return fmt::format("{} psn {:#08x} x{} packets", wqe_opcode_name(r.body.wqe.opcode),
                               r.body.wqe.psn, r.body.wqe.psn_count);
        case Type::kDmaRead:
        case Type::kDmaWrite:
            return fmt::format("{} B, done at {:.3f} us", r.body.dma.bytes,
                               static_cast<double>(r.body.dma.end_ns) / 1000.0);
        case Type::kPacketTx:
        case Type::kPacketRx:
        case Type::kPacketDrop: {
            const auto &p = r.body.packet;
            std::string s =
                fmt::format("{} psn {:#08x} {} qp {} len {}", bth_name(p.opcode), p.psn,
                            r.type == Type::kPacketTx ? "->" : "at", p.dest_qp, p.payload_length);
            if (p.packet_flags & tr::kPacketAckReq) s += " ackreq";
            if (p.packet_flags & tr::kPacketSolicited) s += " se";
            if (r.type == Type::kPacketDrop) s += " DROPPED";
            if (r.type == Type::kPacketTx && !l.comments[index].empty())
                s += " [" + l.comments[index].front() + "]";
            return s;
        }
        case Type::kAck: {
            const auto syn = wire::decode_aeth_syndrome(r.body.packet.ext[0]);
            const char *kind = syn.is_ack() ? "ACK" : syn.is_rnr_nak() ? "RNR NAK" : "NAK";
            return fmt::format("{} syndrome {:#04x} psn {:#08x}", kind, r.body.packet.ext[0],
                               r.body.packet.psn);
        }
        case Type::kRetry:
            return fmt::format("{} retry from psn {:#08x} ({} left)", retry_name(r.body.retry.kind),
                               r.body.retry.psn, r.body.retry.retries_left);
        case Type::kCqe: {
            const auto &c = r.body.cqe;
            const bool receive = (r.flags & tr::kFlagRecv) != 0;
            return fmt::format(
                "cq {} {} {} {} B", c.cq,
                receive ? std::string("RECV") : wqe_opcode_name(c.wqe_opcode),
                c.syndrome == 0 ? std::string("ok") : fmt::format("syndrome {:#04x}", c.syndrome),
                c.byte_count);
        }
        case Type::kEqe:
            return fmt::format("{} object {} status {:#x}", eqe_name(r.body.eqe.eqe_type),
                               r.body.eqe.object, static_cast<uint32_t>(r.body.eqe.status));
        case Type::kCqArm:
            return fmt::format("cq {}", r.body.eqe.object);
        case Type::kCallbackEnter:
            return fmt::format("cq {} notification, status {:#x}", r.body.eqe.object,
                               static_cast<uint32_t>(r.body.eqe.status));
        case Type::kCallbackExit:
            return fmt::format("cq {} callback returned", r.body.eqe.object);
        case Type::kQpState: {
            const auto &s = r.body.qp_state;
            return fmt::format("{} -> {} ({} -> {})", state_name(s.from), state_name(s.to),
                               ip_text(s.local_ip), ip_text(s.remote_ip));
        }
        case Type::kCm: {
            const auto &c = r.body.cm;
            return fmt::format("{} {} id {} -> {} qp {} psn {:#08x} status {:#x}",
                               r.flags & tr::kFlagRx ? "received" : "sent", cm_name(c.message_type),
                               c.sender_id, c.receiver_id, c.qp, c.starting_psn,
                               static_cast<uint32_t>(c.status));
        }
        case Type::kFault:
            return std::string(r.body.fault.what,
                               strnlen(r.body.fault.what, sizeof r.body.fault.what));
        default:
            return "";
    }
}

uint32_t qp_of(const Record &r) {
    switch (r.type) {
        case Type::kPost:
        case Type::kDoorbell:
        case Type::kWqeFetch:
        case Type::kWqeStart:
            return r.body.wqe.qp;
        case Type::kPacketTx:
        case Type::kPacketRx:
        case Type::kPacketDrop:
        case Type::kAck:
            return r.body.packet.qp;
        case Type::kRetry:
            return r.body.retry.qp;
        case Type::kCqe:
            return r.body.cqe.qp;
        case Type::kQpState:
            return r.body.qp_state.qp;
        case Type::kCm:
            return r.body.cm.qp;
        case Type::kFault:
            return r.body.fault.qp;
        default:
            return 0;
    }
}

void write_text(const Trace &t, const Links &l, bool wall, std::FILE *out) {
    std::fprintf(out, "%14s  %-4s %-14s %-7s %-7s %s\n", "time (us)", "dev", "event", "qp", "wqe",
                 "detail");
    for (size_t i = 0; i < t.records.size(); ++i) {
        const Record &r = t.records[i];
        const uint32_t qp = qp_of(r);
        std::string wqe = "-";
        if (l.wqe_of[i] != kNone)
            wqe = fmt::format("#{}", t.records[l.wqe_of[i]].body.wqe.wqe_index & 0xFFFF);
        const std::string line = fmt::format(
            "{:>14.3f}  {:<4} {:<14} {:<7} {:<7} {}\n",
            static_cast<double>(time_of(r, wall)) / 1000.0, r.device, tr::type_name(r.type),
            qp != 0 ? fmt::format("qp {}", qp) : std::string("-"), wqe, detail(r, i, l));
        std::fputs(line.c_str(), out);
    }
}

// ---- Chrome trace-event JSON.

enum Track : uint32_t {
    kTrackEngine = 1,
    kTrackDmaRead = 2,
    kTrackDmaWrite = 3,
    kTrackPort = 4,
    kTrackEvents = 5,
    kTrackCm = 6,
    kTrackFaults = 8,
    kTrackQp = 100,            // + QP number
    kTrackCq = 100000,         // + CQ number
    kTrackCallbacks = 200000,  // + CQ number: the provider's calls of its callback
};

std::string track_name(uint32_t tid) {
    switch (tid) {
        case kTrackEngine:
            return "engine: doorbells, WQE fetch";
        case kTrackDmaRead:
            return "engine: DMA read";
        case kTrackDmaWrite:
            return "engine: DMA write";
        case kTrackPort:
            return "port";
        case kTrackEvents:
            return "event queue";
        case kTrackCm:
            return "CM";
        case kTrackFaults:
            return "faults";
        default:
            break;
    }
    if (tid >= kTrackCallbacks) return fmt::format("CQ {} callbacks", tid - kTrackCallbacks);
    if (tid >= kTrackCq) return fmt::format("CQ {}", tid - kTrackCq);
    return fmt::format("QP {}", tid - kTrackQp);
}

struct ChromeEvent {
    double ts;
    size_t order;
    std::string json;
};

class ChromeWriter {
  public:
    ChromeWriter(const Trace &t, const Links &l, bool wall) : t_(t), l_(l), wall_(wall) {}

    void write(std::FILE *out) {
        build();
        std::stable_sort(events_.begin(), events_.end(),
                         [](const ChromeEvent &a, const ChromeEvent &b) { return a.ts < b.ts; });
        std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
        bool first = true;
        auto put = [&](const std::string &json) {
            if (!first) std::fputs(",\n", out);
            first = false;
            std::fputs(json.c_str(), out);
        };
        for (const auto &[pid, name] : processes_)
            put(
                fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"ts\":0,\"pid\":{},"
                            "\"tid\":0,\"args\":{{\"name\":\"{}\"}}}}",
                            pid, escape_json(name)));
        for (const auto &[pid, tid] : tracks_) {
            put(
                fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"ts\":0,\"pid\":{},"
                            "\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}",
                            pid, tid, escape_json(track_name(tid))));
            put(
                fmt::format("{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"ts\":0,\"pid\":{},"
                            "\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
                            pid, tid, tid));
        }
        for (const auto &e : events_)
            put(e.json);
        std::fputs("\n]}\n", out);
    }

  private:
    double us(uint64_t ns) const { return static_cast<double>(ns) / 1000.0; }
    double ts(size_t i) const { return us(time_of(t_.records[i], wall_)); }

    void add(double at, std::string json) {
        events_.push_back({at, events_.size(), std::move(json)});
    }
    void use(uint32_t pid, uint32_t tid) {
        tracks_.insert({pid, tid});
        if (!processes_.count(pid)) processes_[pid] = fmt::format("device {}", pid);
    }
    // A 1 ns slice: an instant that flow arrows can attach to.
    void slice(double at, uint32_t pid, uint32_t tid, const std::string &name,
               const std::string &args) {
        use(pid, tid);
        add(at, fmt::format("{{\"ph\":\"X\",\"name\":\"{}\",\"cat\":\"event\",\"ts\":{:.3f},"
                            "\"dur\":0.001,\"pid\":{},\"tid\":{},\"args\":{{{}}}}}",
                            escape_json(name), at, pid, tid, args));
    }
    void instant(double at, uint32_t pid, uint32_t tid, const std::string &name,
                 const std::string &args) {
        use(pid, tid);
        add(at, fmt::format("{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"{}\",\"cat\":\"event\","
                            "\"ts\":{:.3f},\"pid\":{},\"tid\":{},\"args\":{{{}}}}}",
                            escape_json(name), at, pid, tid, args));
    }
    void flow(char ph, double at, uint32_t pid, uint32_t tid, uint64_t id) {
        use(pid, tid);
        add(at, fmt::format("{{\"ph\":\"{}\",\"name\":\"wqe\",\"cat\":\"flow\",\"id\":{},"
                            "\"ts\":{:.3f},\"pid\":{},\"tid\":{}{}}}",
                            ph, id, at, pid, tid, ph == 'f' ? ",\"bp\":\"e\"" : ""));
    }
    void counter(double at, uint32_t pid, const std::string &name, uint64_t value) {
        add(at, fmt::format("{{\"ph\":\"C\",\"name\":\"{}\",\"ts\":{:.3f},\"pid\":{},\"tid\":0,"
                            "\"args\":{{\"value\":{}}}}}",
                            escape_json(name), at, pid, value));
    }

    void build() {
        const auto &rs = t_.records;
        // Display times: a WQE's packet is never drawn before its post, its remote CQE
        // never before its packet (clocks of two sides may disagree by a little).
        std::vector<double> at(rs.size());
        for (size_t i = 0; i < rs.size(); ++i)
            at[i] = ts(i);
        double last = 0;
        for (size_t i = 0; i < rs.size(); ++i)
            last = std::max(last, at[i]);
        std::vector<uint64_t> retired_by(rs.size(), 0);  // CQE -> WQEs it retired
        for (size_t i = 0; i < rs.size(); ++i) {
            if (l_.span_end[i] != kNone) ++retired_by[l_.span_end[i]];
        }
        std::map<QpKey, uint64_t> outstanding;
        std::map<uint16_t, uint64_t> sent, cqes;
        uint64_t next_flow = 1;
        for (size_t i = 0; i < rs.size(); ++i) {
            const Record &r = rs[i];
            const uint32_t pid = r.device;
            const std::string wqe_arg =
                l_.wqe_of[i] != kNone
                    ? fmt::format("\"wqe\":{},", rs[l_.wqe_of[i]].body.wqe.wqe_index & 0xFFFF)
                    : std::string();
            switch (r.type) {
                case Type::kDevice: {
                    const auto &d = r.body.device;
                    processes_[pid] =
                        fmt::format("{} (if_index {}, {})",
                                    std::string(d.alias, strnlen(d.alias, sizeof d.alias)),
                                    d.if_index, ip_text(d.ip));
                    break;
                }
                case Type::kPost: {
                    const auto &w = r.body.wqe;
                    const bool receive = r.flags & tr::kFlagRecv;
                    const std::string op = wqe_opcode_name(w.opcode, receive);
                    const uint32_t tid = kTrackQp + w.qp;
                    const uint32_t index = w.wqe_index & 0xFFFF;
                    slice(at[i], pid, tid, "post " + op,
                          fmt::format("\"wqe\":{},\"queue\":\"{}\"", index, receive ? "RQ" : "SQ"));
                    // The WQE's span: post -> the CQE that retired it.
                    const std::string id =
                        fmt::format("\"d{}q{}{}{}\"", pid, w.qp, receive ? 'r' : 's', i);
                    const std::string name = fmt::format("{} qp {} #{}", op, w.qp, index);
                    add(at[i], fmt::format("{{\"ph\":\"b\",\"cat\":\"wqe\",\"id\":{},"
                                           "\"name\":\"{}\",\"ts\":{:.3f},\"pid\":{},\"tid\":{}}}",
                                           id, name, at[i], pid, tid));
                    const size_t end = l_.span_end[i];
                    const double end_at = end != kNone ? std::max(at[end], at[i]) : last;
                    add(end_at,
                        fmt::format("{{\"ph\":\"e\",\"cat\":\"wqe\",\"id\":{},\"name\":\"{}\","
                                    "\"ts\":{:.3f},\"pid\":{},\"tid\":{},\"args\":{{{}}}}}",
                                    id, name, end_at, pid, tid,
                                    end != kNone ? "" : "\"incomplete\":true"));
                    ++outstanding[{r.device, w.qp}];
                    counter(at[i], pid, fmt::format("QP {} outstanding WQEs", w.qp),
                            outstanding[{r.device, w.qp}]);
                    // The flow: post -> first packet -> remote CQE (or the arrival).
                    const size_t packet = l_.first_packet[i];
                    const size_t finish = l_.flow_end[i];
                    if (packet != kNone && finish != kNone) {
                        const uint64_t fid = next_flow++;
                        at[packet] = std::max(at[packet], at[i]);
                        at[finish] = std::max(at[finish], at[packet]);
                        flow('s', at[i], pid, tid, fid);
                        flow_steps_[packet].push_back(fid);
                        flow_ends_[finish].push_back(fid);
                    }
                    break;
                }
                case Type::kDoorbell:
                    instant(at[i], pid, kTrackEngine, fmt::format("doorbell qp {}", r.body.wqe.qp),
                            "");
                    break;
                case Type::kWqeFetch:
                case Type::kWqeStart:
                    instant(
                        at[i], pid, kTrackEngine,
                        fmt::format("{} {} qp {}", r.type == Type::kWqeFetch ? "fetch" : "start",
                                    wqe_opcode_name(r.body.wqe.opcode), r.body.wqe.qp),
                        wqe_arg + fmt::format("\"length\":{},\"psn\":{},\"packets\":{}",
                                              r.body.wqe.length, r.body.wqe.psn,
                                              r.body.wqe.psn_count));
                    break;
                case Type::kDmaRead:
                case Type::kDmaWrite:
                    instant(at[i], pid, r.type == Type::kDmaRead ? kTrackDmaRead : kTrackDmaWrite,
                            fmt::format("DMA {} {} B", r.type == Type::kDmaRead ? "read" : "write",
                                        r.body.dma.bytes),
                            fmt::format("\"bytes\":{},\"done_us\":{:.3f}", r.body.dma.bytes,
                                        us(r.body.dma.end_ns)));
                    break;
                case Type::kPacketTx:
                case Type::kPacketRx:
                case Type::kPacketDrop: {
                    const auto &p = r.body.packet;
                    const char *dir = r.type == Type::kPacketTx   ? "TX"
                                      : r.type == Type::kPacketRx ? "RX"
                                                                  : "DROP";
                    slice(at[i], pid, kTrackPort,
                          fmt::format("{} {} psn {:#x}", dir, bth_name(p.opcode), p.psn),
                          wqe_arg + fmt::format("\"qp\":{},\"dest_qp\":{},\"psn\":{},\"length\":{},"
                                                "\"dropped\":{}",
                                                p.qp, p.dest_qp, p.psn, p.payload_length,
                                                r.type == Type::kPacketDrop ? "true" : "false"));
                    if (auto it = flow_steps_.find(i); it != flow_steps_.end()) {
                        for (uint64_t fid : it->second)
                            flow('t', at[i], pid, kTrackPort, fid);
                    }
                    if (auto it = flow_ends_.find(i); it != flow_ends_.end()) {
                        for (uint64_t fid : it->second)
                            flow('f', at[i], pid, kTrackPort, fid);
                    }
                    if (r.type == Type::kPacketTx)
                        counter(at[i], pid, "packets sent", ++sent[r.device]);
                    break;
                }
                case Type::kAck:
                    instant(at[i], pid, kTrackQp + r.body.packet.qp,
                            fmt::format("ACK/NAK {:#04x}", r.body.packet.ext[0]),
                            fmt::format("\"psn\":{}", r.body.packet.psn));
                    break;
                case Type::kRetry:
                    instant(at[i], pid, kTrackQp + r.body.retry.qp,
                            fmt::format("retry ({})", retry_name(r.body.retry.kind)),
                            fmt::format("\"psn\":{},\"left\":{}", r.body.retry.psn,
                                        r.body.retry.retries_left));
                    break;
                case Type::kCqe: {
                    const auto &c = r.body.cqe;
                    slice(at[i], pid, kTrackCq + c.cq,
                          fmt::format("CQE qp {} {}", c.qp, c.syndrome == 0 ? "ok" : "error"),
                          wqe_arg + fmt::format("\"qp\":{},\"syndrome\":{},\"bytes\":{}", c.qp,
                                                c.syndrome, c.byte_count));
                    if (auto it = flow_ends_.find(i); it != flow_ends_.end()) {
                        for (uint64_t fid : it->second)
                            flow('f', at[i], pid, kTrackCq + c.cq, fid);
                    }
                    counter(at[i], pid, "CQEs", ++cqes[r.device]);
                    if (l_.wqe_of[i] != kNone) {
                        const Record &post = rs[l_.wqe_of[i]];
                        auto &o = outstanding[{post.device, post.body.wqe.qp}];
                        // Every WQE this CQE retired (unsignaled ones with it).
                        const uint64_t retired = retired_by[i];
                        o = o >= retired ? o - retired : 0;
                        counter(at[i], post.device,
                                fmt::format("QP {} outstanding WQEs", post.body.wqe.qp), o);
                    }
                    break;
                }
                case Type::kEqe:
                    instant(
                        at[i], pid, kTrackEvents,
                        fmt::format("EQE {} {}", eqe_name(r.body.eqe.eqe_type), r.body.eqe.object),
                        fmt::format("\"status\":{}", r.body.eqe.status));
                    break;
                case Type::kCqArm:
                    instant(at[i], pid, kTrackCq + r.body.eqe.object, "arm", "");
                    break;
                case Type::kCallbackEnter:
                case Type::kCallbackExit: {
                    // B/E on the CQ's callbacks track (a CQ's notifications do not
                    // overlap; two CQs' callbacks may, on two threads or nested).
                    const bool enter = r.type == Type::kCallbackEnter;
                    const uint32_t tid = kTrackCallbacks + r.body.eqe.object;
                    use(pid, tid);
                    add(at[i], fmt::format("{{\"ph\":\"{}\",\"name\":\"CQ {} callback\","
                                           "\"ts\":{:.3f},\"pid\":{},\"tid\":{}}}",
                                           enter ? 'B' : 'E', r.body.eqe.object, at[i], pid, tid));
                    break;
                }
                case Type::kQpState:
                    instant(at[i], pid, kTrackQp + r.body.qp_state.qp,
                            fmt::format("{} -> {}", state_name(r.body.qp_state.from),
                                        state_name(r.body.qp_state.to)),
                            "");
                    break;
                case Type::kCm:
                    instant(at[i], pid, kTrackCm,
                            fmt::format("CM {} {}", r.flags & tr::kFlagRx ? "received" : "sent",
                                        cm_name(r.body.cm.message_type)),
                            fmt::format("\"sender_id\":{},\"receiver_id\":{},\"qp\":{}",
                                        r.body.cm.sender_id, r.body.cm.receiver_id, r.body.cm.qp));
                    break;
                case Type::kFault:
                    instant(at[i], pid, kTrackFaults,
                            "fault: " +
                                std::string(r.body.fault.what,
                                            strnlen(r.body.fault.what, sizeof r.body.fault.what)),
                            fmt::format("\"qp\":{},\"psn\":{}", r.body.fault.qp, r.body.fault.psn));
                    break;
                default:
                    break;
            }
        }
    }

    const Trace &t_;
    const Links &l_;
    bool wall_;
    std::vector<ChromeEvent> events_;
    std::map<uint32_t, std::string> processes_;
    std::set<std::pair<uint32_t, uint32_t>> tracks_;
    std::map<size_t, std::vector<uint64_t>> flow_steps_, flow_ends_;
};

// ---- pcapng.

class PcapngWriter {
  public:
    explicit PcapngWriter(std::FILE *out) : out_(out) {
        // Section Header Block: byte-order magic, version 1.0, section length unknown.
        std::vector<uint8_t> shb;
        put32(shb, 0x1A2B3C4D);
        put16(shb, 1);
        put16(shb, 0);
        put32(shb, 0xFFFFFFFF);
        put32(shb, 0xFFFFFFFF);
        block(0x0A0D0D0A, shb);
        // Interface Description Block: Ethernet, if_tsresol = 9 (nanoseconds).
        std::vector<uint8_t> idb;
        put16(idb, static_cast<uint16_t>(wire::kLinktypeEthernet));
        put16(idb, 0);
        put32(idb, 65535);
        option(idb, 9, std::vector<uint8_t>{9});
        option(idb, 0, {});
        block(1, idb);
    }

    void packet(uint64_t time_ns, const std::vector<uint8_t> &frame,
                const std::vector<std::string> &comments) {
        std::vector<uint8_t> epb;
        put32(epb, 0);  // interface 0
        put32(epb, static_cast<uint32_t>(time_ns >> 32));
        put32(epb, static_cast<uint32_t>(time_ns));
        put32(epb, static_cast<uint32_t>(frame.size()));
        put32(epb, static_cast<uint32_t>(frame.size()));
        epb.insert(epb.end(), frame.begin(), frame.end());
        while (epb.size() % 4 != 0)
            epb.push_back(0);
        if (!comments.empty()) {
            for (const auto &c : comments)
                option(epb, 1, std::vector<uint8_t>(c.begin(), c.end()));
            option(epb, 0, {});
        }
        block(6, epb);
    }

  private:
    static void put16(std::vector<uint8_t> &b, uint16_t v) {
        b.push_back(static_cast<uint8_t>(v));
        b.push_back(static_cast<uint8_t>(v >> 8));
    }
    static void put32(std::vector<uint8_t> &b, uint32_t v) {
        for (int i = 0; i < 4; ++i)
            b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    static void option(std::vector<uint8_t> &b, uint16_t code, const std::vector<uint8_t> &value) {
        put16(b, code);
        put16(b, static_cast<uint16_t>(value.size()));
        b.insert(b.end(), value.begin(), value.end());
        while (b.size() % 4 != 0)
            b.push_back(0);
    }
    void block(uint32_t type, const std::vector<uint8_t> &body) {
        std::vector<uint8_t> b;
        const uint32_t total = static_cast<uint32_t>(body.size() + 12);
        put32(b, type);
        put32(b, total);
        b.insert(b.end(), body.begin(), body.end());
        put32(b, total);
        std::fwrite(b.data(), 1, b.size(), out_);
    }

    std::FILE *out_;
};

// An RC packet rebuilt from its record: the BTH from the fields, the extension headers as
// recorded, a zero payload of the recorded length. nullopt if it cannot be serialised.
std::optional<std::vector<uint8_t>> rc_frame(const Record &r, const wire::IpAddr &src,
                                             const wire::IpAddr &dst) {
    const auto &p = r.body.packet;
    const auto &info = wire::opcode_info(p.opcode);
    if (!info.valid) return std::nullopt;
    const size_t pad = (0u - p.payload_length) & 3u;
    std::vector<uint8_t> ib(info.header_len + p.payload_length + pad, 0);
    ib[0] = p.opcode;
    ib[1] = static_cast<uint8_t>(((p.packet_flags & tr::kPacketSolicited) ? 0x80 : 0) | (pad << 4));
    ib[2] = 0xFF;
    ib[3] = 0xFF;
    ib[5] = static_cast<uint8_t>(p.dest_qp >> 16);
    ib[6] = static_cast<uint8_t>(p.dest_qp >> 8);
    ib[7] = static_cast<uint8_t>(p.dest_qp);
    ib[8] = (p.packet_flags & tr::kPacketAckReq) ? 0x80 : 0;
    ib[9] = static_cast<uint8_t>(p.psn >> 16);
    ib[10] = static_cast<uint8_t>(p.psn >> 8);
    ib[11] = static_cast<uint8_t>(p.psn);
    const size_t ext = std::min<size_t>(p.ext_length, info.header_len - wire::kBthSize);
    std::memcpy(ib.data() + wire::kBthSize, p.ext, ext);
    wire::PacketDescriptor d;
    if (wire::parse_ib_packet(ib, d) != wire::WireStatus::kOk) return std::nullopt;
    d.meta.src_ip = src;
    d.meta.dst_ip = dst;
    d.meta.udp_src_port = p.udp_src_port;
    auto frame = wire::serialize_frame(d);
    if (frame.empty()) return std::nullopt;
    return frame;
}

uint16_t ip_checksum(const uint8_t *data, size_t n, uint32_t sum = 0) {
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t{data[i]} << 8) | data[i + 1];
    if (n & 1) sum += uint32_t{data[n - 1]} << 8;
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

void put_be16(uint8_t *p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
void put_be32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// A CM message as an IB CM MAD (class 0x07, version 2, method Send) in a UD SEND_ONLY to
// QP1, the way RoCE carries the CM (IBA 12.6, 16.7).
std::vector<uint8_t> cm_frame(const Record &r, const wire::IpAddr &src, const wire::IpAddr &dst,
                              uint32_t psn) {
    const auto &c = r.body.cm;
    constexpr size_t kMad = 256, kDeth = 8;
    std::vector<uint8_t> ib(wire::kBthSize + kDeth + kMad, 0);
    ib[0] = 0x64;  // UD SEND_ONLY
    ib[2] = 0xFF;
    ib[3] = 0xFF;
    ib[7] = 1;  // QP1
    ib[9] = static_cast<uint8_t>(psn >> 16);
    ib[10] = static_cast<uint8_t>(psn >> 8);
    ib[11] = static_cast<uint8_t>(psn);
    uint8_t *deth = ib.data() + wire::kBthSize;
    put_be32(deth, 0x80010000);  // the well-known GSI Q_Key
    deth[7] = 1;                 // source QP 1
    uint8_t *mad = deth + kDeth;
    mad[0] = 1;                      // base version
    mad[1] = 0x07;                   // class: communication management
    mad[2] = 2;                      // class version
    mad[3] = 0x03;                   // method: Send
    put_be32(mad + 8, c.sender_id);  // transaction id: the sender's communication id
    put_be32(mad + 12, c.message_type);
    static constexpr uint16_t kAttribute[] = {0, 0x0010, 0x0013, 0x0014, 0x0012, 0x0015, 0x0016};
    put_be16(mad + 16, c.message_type < 7 ? kAttribute[c.message_type] : 0);
    uint8_t *m = mad + 24;
    put_be32(m, c.sender_id);
    switch (c.message_type) {
        case 1:                                              // REQ
            put_be32(m + 28, 0);                             // local Q_Key (RC: unused)
            put_be32(m + 32, (c.qp << 8) & 0xFFFFFF00);      // local QPN | responder resources
            put_be32(m + 40, 0x00000002 << 1);               // transport service type RC
            put_be32(m + 44, (c.starting_psn << 8) | 0x07);  // starting PSN | retry count
            put_be16(m + 48, 0xFFFF);                        // P_Key
            m[50] = 0x37;                                    // path MTU 1024 | RNR retry 7
            m[51] = 0xF0;                                    // max CM retries 15
            std::memcpy(m + 56, src.bytes.data(), 16);       // primary path: local port GID
            std::memcpy(m + 72, dst.bytes.data(), 16);       // ... and remote port GID
            break;
        case 2:  // REP
            put_be32(m + 4, c.receiver_id);
            put_be32(m + 12, c.qp << 8);
            put_be32(m + 20, c.starting_psn << 8);
            break;
        case 4:  // REJ
            put_be32(m + 4, c.receiver_id);
            put_be16(m + 10, 28);  // reason: consumer reject
            break;
        case 5:  // DREQ
            put_be32(m + 4, c.receiver_id);
            put_be32(m + 8, c.qp << 8);
            break;
        default:  // RTU, DREP
            put_be32(m + 4, c.receiver_id);
            break;
    }
    const bool v4 = src.is_v4();
    const size_t ip_len = v4 ? wire::kIpv4HeaderSize : wire::kIpv6HeaderSize;
    const size_t udp_len = wire::kUdpHeaderSize + ib.size() + wire::kIcrcSize;
    std::vector<uint8_t> frame(wire::kEthernetHeaderSize + ip_len + udp_len, 0);
    const auto dmac = wire::mac_for_ip(dst), smac = wire::mac_for_ip(src);
    std::memcpy(frame.data(), dmac.data(), 6);
    std::memcpy(frame.data() + 6, smac.data(), 6);
    put_be16(frame.data() + 12, v4 ? wire::kEtherTypeIpv4 : wire::kEtherTypeIpv6);
    uint8_t *ip = frame.data() + wire::kEthernetHeaderSize;
    uint8_t *udp = ip + ip_len;
    if (v4) {
        ip[0] = 0x45;
        put_be16(ip + 2, static_cast<uint16_t>(ip_len + udp_len));
        put_be16(ip + 6, 0x4000);  // DF
        ip[8] = 64;
        ip[9] = 17;
        std::memcpy(ip + 12, src.bytes.data() + 12, 4);
        std::memcpy(ip + 16, dst.bytes.data() + 12, 4);
        put_be16(ip + 10, ip_checksum(ip, 20));
    } else {
        ip[0] = 0x60;
        put_be16(ip + 4, static_cast<uint16_t>(udp_len));
        ip[6] = 17;
        ip[7] = 64;
        std::memcpy(ip + 8, src.bytes.data(), 16);
        std::memcpy(ip + 24, dst.bytes.data(), 16);
    }
    put_be16(udp, 0xC000);
    put_be16(udp + 2, wire::kRoceV2UdpPort);
    put_be16(udp + 4, static_cast<uint16_t>(udp_len));
    std::memcpy(udp + wire::kUdpHeaderSize, ib.data(), ib.size());
    const auto icrc = wire::compute_icrc({ip, ip_len}, {udp, wire::kUdpHeaderSize}, ib);
    if (icrc) wire::store_icrc(udp + wire::kUdpHeaderSize + ib.size(), *icrc);
    if (!v4) {  // RFC 8200: a UDP checksum over IPv6 is mandatory
        uint32_t sum = 0;
        for (size_t i = 0; i < 32; i += 2)
            sum += (uint32_t{ip[8 + i]} << 8) | ip[9 + i];
        sum += static_cast<uint32_t>(udp_len) + 17;
        uint16_t check = ip_checksum(udp, udp_len, sum);
        if (check == 0) check = 0xFFFF;
        put_be16(udp + 6, check);
    }
    return frame;
}

int write_pcap(const Trace &t, const Links &l, bool wall, std::FILE *out) {
    PcapngWriter writer(out);
    // Addresses of the devices (for CM messages of IPv6 connections, whose record keeps
    // only the last 4 bytes).
    std::vector<wire::IpAddr> device_ips;
    for (const auto &r : t.records) {
        if (r.type != Type::kDevice) continue;
        wire::IpAddr ip;
        std::memcpy(ip.bytes.data(), r.body.device.ip, 16);
        device_ips.push_back(ip);
    }
    auto cm_address = [&](uint32_t low, bool v6) {
        wire::IpAddr ip;
        if (!v6) {
            ip = wire::IpAddr::v4(0, 0, 0, 0);
            std::memcpy(ip.bytes.data() + 12, &low, 4);
            return ip;
        }
        for (const auto &d : device_ips) {
            if (!d.is_v4() && std::memcmp(d.bytes.data() + 12, &low, 4) == 0) return d;
        }
        ip.bytes[0] = 0xFD;  // not one of the devices' first addresses: fd00::<low 32 bits>
        std::memcpy(ip.bytes.data() + 12, &low, 4);
        return ip;
    };
    size_t skipped = 0;
    uint32_t cm_psn = 0;
    for (size_t i = 0; i < t.records.size(); ++i) {
        const Record &r = t.records[i];
        if (r.type == Type::kPacketTx) {
            const auto &[src, dst] = l.path_of[i];
            auto frame = rc_frame(r, src, dst);
            if (!frame) {
                ++skipped;
                continue;
            }
            writer.packet(time_of(r, wall), *frame, l.comments[i]);
        } else if (r.type == Type::kCm && !(r.flags & tr::kFlagRx)) {
            const bool v6 = (r.flags & tr::kFlagIpv6) != 0;
            const auto frame = cm_frame(r, cm_address(r.body.cm.source_ip, v6),
                                        cm_address(r.body.cm.destination_ip, v6), cm_psn++);
            writer.packet(time_of(r, wall), frame, {});
        }
    }
    if (skipped != 0)
        std::fprintf(stderr, "softndk trace: %zu packets could not be rebuilt (left out)\n",
                     skipped);
    return 0;
}

// ---- The teaching viewer: one self-contained HTML page.

// The page's events: one JSON object per record, with the fields the viewer's replay needs
// (tools/softndk/trace_viewer.html names them) and the listing's text.
std::string viewer_events(const Trace &t, const Links &l, bool wall) {
    std::string out = "[";
    for (size_t i = 0; i < t.records.size(); ++i) {
        const Record &r = t.records[i];
        std::string fields;
        const bool receive = (r.flags & tr::kFlagRecv) != 0;
        switch (r.type) {
            case Type::kPost:
                fields = fmt::format(R"(,"slot":{},"pi":{},"entries":{},"op":"{}","recv":{})",
                                     r.body.wqe.wqe_index, r.body.wqe.psn, r.body.wqe.psn_count,
                                     wqe_opcode_name(r.body.wqe.opcode, receive), receive);
                break;
            case Type::kDoorbell:
                fields = fmt::format(R"(,"pi":{},"ci":{})", r.body.wqe.wqe_index, r.body.wqe.psn);
                break;
            case Type::kWqeFetch:
            case Type::kWqeStart:
                fields = fmt::format(R"(,"slot":{},"psn":{},"count":{})", r.body.wqe.wqe_index,
                                     r.body.wqe.psn, r.body.wqe.psn_count);
                break;
            case Type::kPacketTx:
            case Type::kPacketRx:
            case Type::kPacketDrop:
            case Type::kAck:
                fields = fmt::format(R"(,"op":"{}","psn":{},"dqp":{},"len":{},"rx":{})",
                                     bth_name(r.body.packet.opcode), r.body.packet.psn,
                                     r.body.packet.dest_qp, r.body.packet.payload_length,
                                     l.rx_of[i] == kNone ? -1 : static_cast<int64_t>(l.rx_of[i]));
                break;
            case Type::kCqe:
                fields = fmt::format(R"(,"cq":{},"slot":{},"ok":{},"recv":{})", r.body.cqe.cq,
                                     r.body.cqe.wqe_index, r.body.cqe.syndrome == 0, receive);
                break;
            case Type::kCqArm:
            case Type::kCallbackEnter:
            case Type::kCallbackExit:
                fields = fmt::format(R"(,"cq":{})", r.body.eqe.object);
                break;
            case Type::kQpState:
                fields = fmt::format(R"(,"to":"{}")", state_name(r.body.qp_state.to));
                break;
            default:
                break;
        }
        out += fmt::format(R"({}{{"t":{:.3f},"dev":{},"type":"{}","qp":{},"text":{}{}}})",
                           i == 0 ? "\n" : ",\n", static_cast<double>(time_of(r, wall)) / 1000.0,
                           r.device, tr::type_name(r.type), qp_of(r), json_string(detail(r, i, l)),
                           fields);
    }
    return out + "]";
}

int write_html(const Trace &t, const Links &l, bool wall, const std::string &file, std::FILE *out) {
    std::string devices = "[";
    for (const Record &r : t.records) {
        if (r.type != Type::kDevice) continue;
        const auto &d = r.body.device;
        devices += fmt::format(
            R"({}{{"id":{},"alias":{},"ip":"{}"}})", devices.size() > 1 ? "," : "", r.device,
            json_string(std::string(d.alias, strnlen(d.alias, sizeof d.alias))), ip_text(d.ip));
    }
    devices += "]";
    std::string data =
        fmt::format(R"({{"file":{},"clock":"{}","simulated":{},"devices":{},"events":{}}})",
                    json_string(file), wall ? "wall" : "model",
                    (t.header.flags & tr::kFileSimulated) != 0, devices, viewer_events(t, l, wall));
    // Inside <script>, "</" could end the element early; "<\/" is the same JSON string.
    for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 3))
        data.replace(at, 2, "<\\/");
    const std::string_view page = trace_viewer_page();
    constexpr std::string_view kPlaceholder = "/*SOFTNDK_TRACE_DATA*/";
    const size_t at = page.find(kPlaceholder);
    if (at == std::string_view::npos) return 1;  // the build embedded a page without the slot
    std::fwrite(page.data(), 1, at, out);
    std::fwrite(data.data(), 1, data.size(), out);
    const std::string_view rest = page.substr(at + kPlaceholder.size());
    std::fwrite(rest.data(), 1, rest.size(), out);
    return 0;
}

}  // namespace

void add_trace(CLI::App &app, TraceOptions &o) {
    auto *cmd =
        app.add_subcommand("trace",
                           "convert a SOFTNDK_TRACE event trace to Perfetto JSON, text or pcapng "
                           "(docs/trace.md)");
    cmd->footer(
        "Example: SOFTNDK_TRACE=run.trace ./kernel_driver && softndk trace run.trace -o "
        "run.json\n(open run.json at ui.perfetto.dev)");
    cmd->add_option("file", o.files,
                    "the binary trace; several files of one run (daemon mode: the daemon's "
                    "and each FILE.consumer-<pid>) are merged on the wall clock")
        ->required();
    cmd->add_option("--format", o.format, "chrome (default), text, pcap or html")
        ->check(CLI::IsMember({"chrome", "text", "pcap", "html"}));
    cmd->add_option("--html", o.html,
                    "write the teaching viewer to this file (the same as --format html -o FILE)");
    cmd->add_option("-o,--output", o.output, "output file (default stdout; required for pcap)");
    cmd->add_option("--clock", o.clock, "timestamps: model (default) or wall")
        ->check(CLI::IsMember({"model", "wall"}));
}

int run_trace(const TraceOptions &options) {
    TraceOptions o = options;
    if (!o.html.empty()) {
        if (!o.output.empty() || (o.format != "chrome" && o.format != "html")) {
            std::fprintf(stderr,
                         "softndk trace: --html FILE is its own output; drop -o/--format\n");
            return 2;
        }
        o.format = "html";
        o.output = o.html;
    }
    if ((o.format == "pcap" || o.format == "html") && o.output.empty()) {
        std::fprintf(stderr, "softndk trace: --format %s needs -o FILE\n", o.format.c_str());
        return 2;
    }
    Trace t;
    try {
        std::vector<Trace> parts;
        for (const std::string &file : o.files)
            parts.push_back(read_trace(file));
        t = parts.size() == 1 ? std::move(parts.front()) : merge_traces(std::move(parts), o.files);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "softndk trace: %s\n", e.what());
        return 1;
    }
    const bool wall = o.clock == "wall";
    if (wall && (t.header.flags & tr::kFileSimulated))
        std::fprintf(stderr,
                     "softndk trace: %s was written in simulated time: every wall time is 0\n",
                     o.files.front().c_str());
    const Links links = link(t.records);
    std::FILE *out = stdout;
    if (!o.output.empty()) {
        out = std::fopen(o.output.c_str(), "wb");
        if (out == nullptr) {
            std::fprintf(stderr, "softndk trace: cannot create %s\n", o.output.c_str());
            return 1;
        }
    }
    if (o.format == "text") {
        write_text(t, links, wall, out);
    } else if (o.format == "pcap") {
        write_pcap(t, links, wall, out);
    } else if (o.format == "html") {
        std::string names;
        for (const std::string &file : o.files)
            names += (names.empty() ? "" : " + ") + file;
        write_html(t, links, wall, names, out);
    } else {
        ChromeWriter(t, links, wall).write(out);
    }
    const bool ok = std::fflush(out) == 0 && !std::ferror(out);
    if (out != stdout) std::fclose(out);
    if (!ok) {
        std::fprintf(stderr, "softndk trace: writing %s failed\n",
                     o.output.empty() ? "stdout" : o.output.c_str());
        return 1;
    }
    return 0;
}

}  // namespace softndk::tool
