// trace.hpp - the binary event trace: one fixed-size record per event the provider or the
// device sees (docs/trace.md), and the cheap switch in front of every hook.
//
// Enabling: SOFTNDK_TRACE=FILE in the environment (read once, at static initialisation),
// or trace::open(FILE) (the daemon's `softndk rnic --trace FILE`). In a consumer process
// with SOFTNDK_MODE=daemon the provider's records go to FILE.consumer-<pid> and the
// daemon writes the device's records to FILE (it must be started with SOFTNDK_TRACE or
// --trace itself). The file is created at the first flush; nothing is written when off.
//
// Cost when off: every hook is `if (trace::on()) ...`, one relaxed load of a global flag
// and one predictable branch. Configuring with -DSOFTNDK_TRACE_HOOKS=OFF makes on() a
// constant false, which compiles every hook out (the comparison in bench/RESULTS.md).
//
// Writing: each device (and the provider, per adapter) has a ring of kRingRecords records
// (a power of two). A producer claims a slot with fetch_add on the ring's write index,
// fills it and publishes it by storing the slot's sequence word (index + 1, release).
// Any number of producers per ring, on any threads. The file is written by flush(): at
// flush points (a producer that claims the slot at half of the ring, a producer that
// finds the ring full, trace::flush(), process exit) and, when simulated time is off, by
// a writer thread every 20 ms. flush() writes each ring's published prefix in ring order
// under one mutex, so a full ring never loses records (its producer waits for the flush).
// Records carry a process-wide sequence number (seq); readers order by it.
//
// Simulated time (softndk/sim.hpp enabled()): wall_ns is written as 0 and there is no
// writer thread (flushes happen at points the scheduler orders), so a seed replays to
// the same file byte for byte.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#ifndef SOFTNDK_TRACE_HOOKS
#define SOFTNDK_TRACE_HOOKS 1
#endif

namespace softndk::trace {

// ---- File format. Little-endian; a 64-byte FileHeader, then Records to the end.

inline constexpr char kMagic[8] = {'S', 'N', 'D', 'K', 'T', 'R', 'C', '1'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kRecordBytes = 64;
inline constexpr uint32_t kRingRecords = 1u << 16;

struct FileHeader {
    char magic[8];
    uint32_t version;       // kFormatVersion
    uint32_t record_bytes;  // kRecordBytes
    uint32_t flags;         // kFileSimulated: written in simulated time (wall_ns all 0)
    uint32_t pid;           // writing process (0 in simulated time)
    uint8_t reserved[40];
};
inline constexpr uint32_t kFileSimulated = 1;
static_assert(sizeof(FileHeader) == 64);

enum class Type : uint8_t {
    kNone = 0,
    kDevice = 1,          // a device started: Body::device
    kPost = 2,            // provider: a WQE written to the SQ (or RQ, flag kRecv): Body::wqe
    kDoorbell = 3,        // device: an SQ doorbell serviced: Body::wqe (qp, psn = 0)
    kWqeFetch = 4,        // device: a send WQE read from the SQ: Body::wqe (model = ready_ns)
    kWqeStart = 5,        // device: the WQE's PSNs assigned: Body::wqe (psn, psn_count)
    kDmaRead = 6,         // device timing model: Body::dma (model = issue, end_ns = done)
    kDmaWrite = 7,        // same for a write
    kPacketTx = 8,        // device: a packet to the fabric: Body::packet (model = arrival)
    kPacketRx = 9,        // device: a packet from the fabric: Body::packet
    kPacketDrop = 10,     // device: an arrived packet dropped (no QP, QP not accepting)
    kAck = 11,            // device: an ACK/NAK received: Body::packet (ext[0] = syndrome)
    kRetry = 12,          // device: a retry: Body::retry
    kCqe = 13,            // device: a CQE written: Body::cqe
    kEqe = 14,            // device: an EQE written: Body::eqe
    kCqArm = 15,          // device: a CQ arm doorbell: Body::eqe (object = CQ)
    kCallbackEnter = 16,  // provider: a CQ notification callback starts: Body::eqe
    kCallbackExit = 17,   // ... and returns
    kQpState = 18,        // device: Body::qp_state
    kCm = 19,             // device: a CM message sent or received: Body::cm
    kFault = 20,          // fault injection: Body::fault
};
inline constexpr uint8_t kTypeCount = 21;
const char *type_name(Type type);

// Record::flags bits.
inline constexpr uint8_t kFlagProvider = 1;  // written by the provider (consumer side)
inline constexpr uint8_t kFlagRecv = 2;      // kPost/kCqe: receive queue
inline constexpr uint8_t kFlagRx = 4;        // kCm: received (else sent)
inline constexpr uint8_t kFlagIpv6 = 8;      // kCm: addresses are IPv6 (low 32 bits kept)

// Body::packet.packet_flags bits.
inline constexpr uint8_t kPacketAckReq = 1;
inline constexpr uint8_t kPacketSolicited = 2;
inline constexpr uint8_t kPacketDropped = 4;

enum class RetryKind : uint8_t { kSequence = 1, kTimeout = 2, kRnr = 3 };

struct DeviceBody {
    uint32_t if_index;
    uint8_t ip[16];  // first address (IPv4-mapped for IPv4)
    char alias[20];  // NUL-padded
};
struct WqeBody {
    uint32_t qp;
    uint32_t wqe_index;  // SQ: the WQE's first WQEBB position (low 16 bits); RQ: its slot.
                         // kDoorbell: the producer index the doorbell record held
    uint32_t length;     // message bytes
    uint32_t psn;        // kWqeStart: first PSN. kPost: the producer index after the post
                         // (SQ: WQEBBs, RQ: WQEs). kDoorbell: the device's consumer index
    uint32_t psn_count;  // kWqeStart: packets. kPost: the ring's entries (SQ: WQEBBs)
    uint8_t opcode;      // hw::WqeOpcode
    uint8_t reserved[3];
    uint64_t end_ns;  // kWqeStart: model time its unit finished; kDoorbell: doorbell_ns
    uint32_t context;
    uint32_t reserved2;
};
struct DmaBody {
    uint64_t bytes;
    uint64_t end_ns;
    uint8_t reserved[24];
};
struct PacketBody {
    uint32_t qp;       // the local QP (sender for TX; the BTH's destination for RX)
    uint32_t dest_qp;  // BTH DestQP
    uint32_t psn;
    uint8_t opcode;  // BTH opcode
    uint8_t packet_flags;
    uint16_t payload_length;
    uint16_t udp_src_port;
    uint8_t ext_length;  // extension-header bytes kept in ext (<= 18)
    uint8_t reserved;
    uint8_t ext[20];  // the extension headers as on the wire (RETH, AETH, ImmDt, IETH)
};
struct RetryBody {
    uint32_t qp;
    uint32_t psn;  // first PSN resent
    uint8_t kind;  // RetryKind
    uint8_t retries_left;
    uint8_t reserved[6];
    uint64_t deadline_ns;  // kRnr: when the resend is due
    uint8_t reserved2[16];
};
struct CqeBody {
    uint32_t cq;
    uint32_t qp;
    uint32_t wqe_index;
    uint32_t byte_count;
    uint32_t syndrome;  // hw::Syndrome (0 = success)
    uint8_t opcode;     // hw::CqeOpcode
    uint8_t wqe_opcode;
    uint8_t reserved[2];
    uint64_t ready_ns;  // when the engine issued the CQE write (model time = written)
    uint8_t reserved2[8];
};
struct EqeBody {
    uint32_t context;
    uint32_t object;
    uint32_t eqe_type;
    int32_t status;
    uint8_t reserved[24];
};
struct QpStateBody {
    uint32_t qp;
    uint8_t from;  // emu::QpState
    uint8_t to;
    uint16_t udp_src_port;
    uint8_t local_ip[16];
    uint8_t remote_ip[16];
};
struct CmBody {
    uint32_t sender_id;
    uint32_t receiver_id;
    uint32_t qp;  // the sender's QP (REQ/REP)
    uint32_t starting_psn;
    int32_t status;
    uint8_t message_type;  // cm::MessageType
    uint8_t reserved;
    uint16_t source_port;
    uint16_t destination_port;
    uint16_t reserved2;
    uint32_t source_ip;       // IPv4 (kFlagIpv6: the IPv6 address's last 4 bytes)
    uint32_t destination_ip;  // network byte order as bytes
    uint32_t private_data_bytes;
};
struct FaultBody {
    uint32_t qp;
    uint32_t psn;
    char what[32];  // the fault's kind and detail, NUL-padded, truncated
};

struct Record {
    Type type;
    uint8_t flags;
    uint16_t device;  // the adapter's if_index
    uint32_t seq;     // process-wide order of the records
    uint64_t model_ns;
    uint64_t wall_ns;  // CLOCK_REALTIME; 0 in simulated time
    union Body {
        DeviceBody device;
        WqeBody wqe;
        DmaBody dma;
        PacketBody packet;
        RetryBody retry;
        CqeBody cqe;
        EqeBody eqe;
        QpStateBody qp_state;
        CmBody cm;
        FaultBody fault;
        uint8_t raw[40];
    } body;
};
static_assert(sizeof(Record) == kRecordBytes);
static_assert(std::is_trivially_copyable_v<Record>);

// ---- Switch and writer.

namespace detail {
extern std::atomic<bool> g_on;
}

// The hooks' guard. Constant false when the hooks are compiled out.
inline bool on() {
#if SOFTNDK_TRACE_HOOKS
    return __builtin_expect(detail::g_on.load(std::memory_order_relaxed), 0);
#else
    return false;
#endif
}

// Starts tracing to `path` (replacing a trace already open: its records are flushed to
// its own file first). False, with an error logged, if the file cannot be created.
bool open(const std::string &path);
// Writes every published record to the file. No-op when off.
void flush();
// Flushes and stops tracing (the writer thread ends). Tracing can be opened again.
void close();
// The file records go to ("" when off).
std::string path();

// Fills seq and wall_ns and writes `record` into device `record.device`'s ring. Call only
// when on() (it checks again and drops the record otherwise).
void emit(Record &record);

// A record of `type` for `device` at model time `model_ns`, body zeroed.
inline Record make(Type type, uint32_t device, uint64_t model_ns, uint8_t flags = 0) {
    Record r;
    std::memset(&r, 0, sizeof r);
    r.type = type;
    r.flags = flags;
    r.device = static_cast<uint16_t>(device);
    r.model_ns = model_ns;
    return r;
}

// ---- Hooks written by the provider and by the fault injector (the device's are in
// emulator/trace/hooks.hpp, which knows its types). Each is one branch when off - but a
// call's arguments are evaluated before it: a call site whose arguments cost anything (a
// function call such as the provider's clock().now(), an atomic load) puts
// `if (trace::on())` in front of the call, so that nothing is computed when off.

// The provider wrote a WQE (send queue, or receive queue when `receive`) at `wqe_index`;
// the queue's producer index is now `producer`, of a ring of `entries` (WqeBody).
struct PostedWqe {
    uint32_t qp;
    uint32_t wqe_index;
    uint8_t opcode;
    uint32_t length;
    uint32_t producer;
    uint32_t entries;
    bool receive;
};
void post_slow(uint32_t device, const PostedWqe &wqe, uint64_t model_ns);
inline void post(uint32_t device, const PostedWqe &wqe, uint64_t model_ns) {
    if (on()) post_slow(device, wqe, model_ns);
}
// The provider calls a CQ's notification callback (enter) and it returned (exit).
void callback_slow(Type type, uint32_t device, uint32_t cq, int32_t status, uint64_t model_ns);
inline void callback_enter(uint32_t device, uint32_t cq, int32_t status, uint64_t model_ns) {
    if (on()) callback_slow(Type::kCallbackEnter, device, cq, status, model_ns);
}
inline void callback_exit(uint32_t device, uint32_t cq, uint64_t model_ns) {
    if (on()) callback_slow(Type::kCallbackExit, device, cq, 0, model_ns);
}
// An injected fault: `what` names the fault's kind and detail (e.g. "drop", "delay 50us",
// "corrupt icrc"; truncated to 31 bytes), on device `device`, at model time `model_ns`,
// affecting QP `qp` and PSN `psn` (0 when none).
void fault_slow(uint32_t device, uint64_t model_ns, const char *what, uint32_t qp, uint32_t psn);
inline void fault(uint32_t device, uint64_t model_ns, const char *what, uint32_t qp = 0,
                  uint32_t psn = 0) {
    if (on()) fault_slow(device, model_ns, what, qp, psn);
}

}  // namespace softndk::trace
