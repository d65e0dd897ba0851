// hw_interface.hpp - the SoftNDK virtual RNIC's hardware interface.
//
// This header IS the contract between the provider (the "driver") and the
// emulator (the "device"). docs/prm.md is its programmer's reference manual and
// follows it section by section. Everything here either lives in memory shared
// by the two sides or travels over the command channel, so every struct is:
//   - fixed-size, built from fixed-width types, with explicit reserved fields;
//   - trivially copyable and standard layout, with size and every polled
//     offset pinned by static_assert;
//   - free of pointers: shared memory is mapped at different addresses in the
//     provider and in a daemon-mode device, so references are offsets/indices.
//
// The device trusts NOTHING it reads from shared memory: every index, length,
// opcode and token read from a ring is validated, and a bad value becomes an
// error completion (or is ignored), never a crash. The provider, in turn, does
// not trust a CQE/EQE beyond the owner-bit protocol below.
//
// Ownership summary (who writes which word; the other side only reads):
//
//   word                         written by   read by    ordering
//   ---------------------------  -----------  ---------  ---------------------------------
//   WQE ring slots               provider     device     release store of the producer
//   QueueDoorbell::producer      provider     device     after the WQE bytes (release)
//   QueueDoorbell::consumer      device       provider   after the device copied the WQE
//   CQE slots (incl. owner)      device       provider   owner byte stored last (release)
//   CqDoorbell::consumer         provider     device     overflow detection; kResizeCq
//   CqDoorbell::arm_*            provider     device     arm_sequence stored last (release)
//   EQE slots (incl. owner)      device       provider   owner byte stored last (release)
//   EqDoorbell::consumer         provider     device     overflow detection only
//   WakeWord::device_sleeping    device       provider   see "Doorbell and wake protocol"
//   WakeWord::host_sleeping      provider     device     same protocol, other direction
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace softndk::hw {

// Bumped on any incompatible change to a struct in this file. The device
// reports it in the attach response and the provider refuses a mismatch.
inline constexpr uint32_t kAbiVersion = 11;  // 2: doorbell summary words; 3: LAM commands;
                                             // 4: DeviceLimits::quirks; 5: model time
                                             // (ProducerRecord, blueflame_bytes, time_mode);
                                             // 6: fault injection (kInjectFault, FaultRequest)
                                             // 7: kQueryResources (section 13)
                                             // 8: 16 resource values; SRQ and CM kinds
                                             // 9: 16,384 queues per doorbell kind, three
                                             //    bitmap levels, 3-page control block
                                             // 10: ContextControlPage::qps_in_error
                                             // 11: ContextControlPage::command (slot)

// ---------------------------------------------------------------------------
// 1. Units
// ---------------------------------------------------------------------------
inline constexpr uint32_t kSegmentBytes = 16;   // every WQE segment is 16 B
inline constexpr uint32_t kWqeBasicBlock = 64;  // send WQEs occupy whole 64 B blocks
inline constexpr uint32_t kCqeBytes = 64;
inline constexpr uint32_t kEqeBytes = 64;
inline constexpr uint32_t kPageBytes = 4096;
inline constexpr uint32_t kMaxWqeSegments = 255;  // CtrlSegment::segment_count is 8 bits

// ---------------------------------------------------------------------------
// 2. Keys (tokens)
//
// token = MPT index << 8 | variant. The index selects an MPT entry; the variant
// byte changes on every fast registration, bind and invalidation, so a token
// that was valid before such a change fails its check afterwards.
// ---------------------------------------------------------------------------
constexpr uint32_t make_token(uint32_t mpt_index, uint8_t variant) {
    return (mpt_index << 8) | variant;
}
constexpr uint32_t token_index(uint32_t token) {
    return token >> 8;
}
constexpr uint8_t token_variant(uint32_t token) {
    return static_cast<uint8_t>(token & 0xff);
}

// Reserved MPT indexes: the device never allocates them, so no token it hands out
// (an MR's, a window's or a PD's privileged token) can equal a reserved value.
//   index 0  token 0 is never valid;
//   index 1  holds kRecvListEnd (0x100, mlx5's reserved lkey), the end marker of
//            receive segment lists (section 3). mlx5 never hands that key out
//            either; a consumer SGE carrying it would end the list early.
// Every variant of a reserved index is reserved, so variant rotation cannot
// reach a reserved value.
inline constexpr uint32_t kFirstMptIndex = 2;
constexpr bool is_reserved_token(uint32_t token) {
    return token_index(token) < kFirstMptIndex;
}

// Access rights stored in an MPT entry.
enum AccessFlags : uint8_t {
    kAccessLocalRead = 0x01,  // implicit for every MR
    kAccessLocalWrite = 0x02,
    kAccessRemoteRead = 0x04,
    kAccessRemoteWrite = 0x08,
    kAccessMwBind = 0x10,
    kAccessReadSink = 0x20,
};

// ---------------------------------------------------------------------------
// 3. Send WQEs
//
// A send WQE is a sequence of 16-byte segments, always starting with a
// CtrlSegment, padded to whole 64-byte basic blocks (WQEBBs). Segment order
// follows mlx5: control, [remote address], then data segments or one inline
// segment. The SQ producer counter counts WQEBBs, not WQEs; a WQE may wrap
// around the end of the ring (the device masks every segment index).
// ---------------------------------------------------------------------------
enum class WqeOpcode : uint8_t {
    kNop = 0x00,
    kSendInvalidate = 0x01,  // SEND carrying an IETH token the responder invalidates
    kRdmaWrite = 0x08,
    kSend = 0x0a,
    kRdmaRead = 0x10,
    kLocalInvalidate = 0x1b,
    kFastRegister = 0x20,  // followed by FastRegisterSegment + page addresses
    kBindWindow = 0x21,    // followed by BindSegment
};

// CtrlSegment::flags
enum CtrlFlags : uint8_t {
    kCtrlSignaled = 0x01,             // write a CQE on success (errors always write one)
    kCtrlSolicited = 0x02,            // set SE on the last packet (SEND_AND_SOLICIT_EVENT)
    kCtrlReadFence = 0x04,            // wait until every earlier READ on this SQ completed
    kCtrlInline = 0x08,               // payload is in an InlineSegment, not data segments
    kCtrlReadLocalInvalidate = 0x10,  // READ: invalidate the first SGE's token on success
};

struct CtrlSegment {
    WqeOpcode opcode;
    uint8_t flags;          // CtrlFlags
    uint16_t wqe_index;     // low 16 bits of the SQ producer (WQEBB units) at this WQE
    uint8_t segment_count;  // 16-byte segments in this WQE, this one included
    uint8_t reserved0[3];
    uint32_t invalidate_token;  // kSendInvalidate: remote token; kLocalInvalidate: local token
    uint32_t reserved1;
};
static_assert(sizeof(CtrlSegment) == kSegmentBytes);

// For READ and WRITE. Addresses are the consumer's registration VAs (IOVAs).
struct RemoteAddressSegment {
    uint64_t remote_address;
    uint32_t remote_token;
    uint32_t reserved;
};
static_assert(sizeof(RemoteAddressSegment) == kSegmentBytes);

// Gather (send/write) or scatter (read sink, receive) element.
struct DataSegment {
    uint32_t byte_count;
    uint32_t local_token;
    uint64_t address;
};
static_assert(sizeof(DataSegment) == kSegmentBytes);

// Inline payload: a 4-byte header (byte count with bit 31 set) followed by the
// bytes, padded to 16 B. It replaces all data segments of the WQE.
inline constexpr uint32_t kInlineMarker = 0x80000000u;
struct InlineHeader {
    uint32_t byte_count_and_marker;
};

// kFastRegister: this segment, then ceil(page_count / 2) segments holding the
// 8-byte adapter page addresses (NDK_LOGICAL_ADDRESS values).
struct FastRegisterSegment {
    uint32_t mr_token;  // the MR's token with the NEW variant byte
    uint8_t access;     // AccessFlags
    uint8_t reserved0;
    uint16_t first_byte_offset_low;  // FBO & 0xffff (FBO < kPageBytes)
    uint32_t page_count;
    uint32_t reserved1;
    // second 16-byte segment
    uint64_t base_iova;
    uint64_t length;
};
static_assert(sizeof(FastRegisterSegment) == 2 * kSegmentBytes);

// kBindWindow: binds window `mw_token` (new variant) over part of `mr_token`.
struct BindSegment {
    uint32_t mw_token;  // with the NEW variant byte
    uint32_t mr_token;
    uint8_t access;  // AccessFlags (remote read/write)
    uint8_t reserved0[7];
    // second 16-byte segment
    uint64_t iova;
    uint64_t length;
};
static_assert(sizeof(BindSegment) == 2 * kSegmentBytes);

// Receive WQEs (RQ and SRQ) are arrays of DataSegments in fixed-size slots of
// RecvQueueLayout::wqe_bytes. A slot with fewer segments than fit ends with a
// segment whose local_token is kRecvListEnd (mlx5's reserved lkey; section 2: a
// reserved index, so it is never a real token).
inline constexpr uint32_t kRecvListEnd = 0x100;
static_assert(is_reserved_token(kRecvListEnd) && is_reserved_token(0));

// ---------------------------------------------------------------------------
// 4. Completion queue entries
// ---------------------------------------------------------------------------
enum class CqeOpcode : uint8_t {
    kRequester = 0x0,                // send-queue WQE finished successfully
    kResponderSend = 0x2,            // receive consumed by a SEND
    kResponderSendInvalidate = 0x4,  // ... by a SEND with invalidate (token below)
    kRequesterError = 0xd,
    kResponderError = 0xe,
    kInvalid = 0xf,
};

// Completion syndromes, numbered as mlx5's so a trace reads like hardware.
// The provider maps each to an NTSTATUS (docs/prm.md "Completion statuses").
enum class Syndrome : uint8_t {
    kSuccess = 0x00,
    kLocalLength = 0x01,
    kLocalQpOperation = 0x02,
    kLocalProtection = 0x04,
    kWorkRequestFlushed = 0x05,
    kMemoryWindowBind = 0x06,
    kBadResponse = 0x10,
    kLocalAccess = 0x11,
    kRemoteInvalidRequest = 0x12,
    kRemoteAccess = 0x13,
    kRemoteOperation = 0x14,
    kTransportRetryExceeded = 0x15,
    kRnrRetryExceeded = 0x16,
    kRemoteAborted = 0x22,
    kReceiveOverflow = 0x30,  // SoftNDK: incoming SEND larger than the posted receive
};

struct Cqe {
    uint64_t completion_time_ns;  // virtual-clock time at which the device wrote it
    uint32_t byte_count;          // bytes placed (receive CQEs)
    uint32_t qp_number;
    uint32_t invalidated_token;  // kResponderSendInvalidate
    uint32_t vendor_syndrome;    // detail for errors; becomes NDK ProviderErrorCode
    uint16_t wqe_counter;        // SQ: wqe_index of the WQE; RQ/SRQ: slot index
    WqeOpcode wqe_opcode;        // requester CQEs: the WQE's opcode
    Syndrome syndrome;
    uint8_t flags;  // CqeFlags
    uint8_t reserved[34];
    uint8_t op_own;  // bits 7..4 CqeOpcode, bit 0 owner
};
static_assert(sizeof(Cqe) == kCqeBytes);
static_assert(offsetof(Cqe, op_own) == 63);

enum CqeFlags : uint8_t {
    kCqeSolicited = 0x01,  // receive of a SEND with SE set
    kCqeSrq = 0x02,        // wqe_counter indexes the QP's SRQ
};

// ---------------------------------------------------------------------------
// 5. Owner-bit rings (CQ and EQ)
//
// No producer index is shared. Entry slot (n mod depth) written on pass
// p = n / depth carries owner bit (p & 1) ^ 1. Slots start zeroed, so on the
// first pass a valid entry has owner 1, on the second 0, and so on: the
// consumer at count c expects owner ((c / depth) & 1) ^ 1 and stops at the
// first slot that does not match.
// ---------------------------------------------------------------------------
constexpr uint8_t expected_owner(uint64_t count, uint32_t log2_depth) {
    return static_cast<uint8_t>(((count >> log2_depth) & 1) ^ 1);
}

// ---------------------------------------------------------------------------
// 6. Event queue entries
// ---------------------------------------------------------------------------
enum class EqeType : uint8_t {
    kCompletion = 0x00,      // object = CQ number; the CQ's arm was satisfied
    kCqError = 0x04,         // object = CQ number; status = overflow or internal error
    kQpFatal = 0x05,         // object = QP number; data0 = Syndrome (the responder failed)
    kSrqLimit = 0x14,        // object = SRQ number
    kConnectRequest = 0x40,  // object = listener id; data0 = new connection id
    kConnectReply = 0x41,    // object = connection id; status = accepted or why not
    kEstablished = 0x42,     // object = connection id (accept side: peer completed)
    kDisconnected = 0x43,    // object = connection id; the peer disconnected or died
    kDisconnectDone = 0x44,  // object = connection id; our own disconnect finished
    kConnectAborted = 0x45,  // object = connection id; peer abandoned establishment
};

struct Eqe {
    uint64_t event_time_ns;
    uint32_t object;  // CQ/QP/SRQ number, listener or connection id (see EqeType)
    int32_t status;   // NTSTATUS carried by the event (0 = success)
    uint64_t data0;
    uint64_t data1;
    uint8_t type;  // EqeType
    uint8_t reserved[30];
    uint8_t owner;  // bit 0
};
static_assert(sizeof(Eqe) == kEqeBytes);
static_assert(offsetof(Eqe, owner) == 63);

// ---------------------------------------------------------------------------
// 7. Doorbell records and the wake protocol
//
// Each word sits on its own cache line so producer and consumer never share
// one. Counters are free-running 32-bit values masked by (depth - 1) on use.
// ---------------------------------------------------------------------------
struct alignas(64) CacheLineU32 {
    uint32_t value;
    uint8_t pad[60];
};
static_assert(sizeof(CacheLineU32) == 64);

// The provider's side of a queue doorbell. post_time_ns and blueflame are written
// before `value` is published (release) and describe the latest doorbell: the model
// time at which the host rang it (the consumer's clock as the provider knows it:
// the latest completion it returned, or the wall clock in paced mode), and whether
// its last WQE was pushed with the doorbell write (BlueFlame: the device need not
// fetch it). Both are untrusted timing hints: a wrong value only misplaces the
// consumer's own requests in model time (the device clamps it).
struct alignas(64) ProducerRecord {
    uint32_t value;         // WQEBBs (SQ) or WQEs (RQ/SRQ) posted
    uint32_t blueflame;     // SQ: 1 = the last WQE came with the doorbell
    uint64_t post_time_ns;  // model time of the doorbell
    uint8_t pad[48];
};
static_assert(sizeof(ProducerRecord) == 64);

// Send queue, receive queue and SRQ share this record shape.
struct QueueDoorbell {
    ProducerRecord producer;  // provider: WQEBBs (SQ) or WQEs (RQ/SRQ) posted
    CacheLineU32 consumer;    // device: WQEBBs/WQEs copied out of the ring
};
static_assert(sizeof(QueueDoorbell) == 128);

enum class ArmType : uint32_t { kErrors = 0, kAny = 1, kSolicited = 2 };  // = NDK_CQ_NOTIFY_*
// Or'ed into CqDoorbell::arm_type: the provider holds back CQEs of the ring that are
// not due yet in model time (functional mode: the consumer's clock has not reached
// them), so the consumer has not seen them although the device wrote them before the
// last notification. The arm counts them as new arrivals: it fires at once if the
// ring is not empty, as hardware would fire when they came.
inline constexpr uint32_t kArmPendingAreNew = 0x100;

struct CqDoorbell {
    CacheLineU32 consumer;      // provider: CQEs consumed (free-running)
    CacheLineU32 arm_type;      // provider: ArmType of the latest arm
    CacheLineU32 arm_sequence;  // provider: bumped by each arm, stored after arm_type
};
static_assert(sizeof(CqDoorbell) == 192);

struct EqDoorbell {
    CacheLineU32 consumer;  // provider: EQEs consumed
};

// Doorbell and wake protocol ("shadow doorbell + event index", as SPDK/siw):
// the side that goes to sleep first publishes `*_sleeping = 1`, then re-checks
// for work, then waits on the futex word. The other side publishes its work
// (release), issues a full fence, and only if it sees `*_sleeping == 1` does it
// clear the flag and FUTEX_WAKE. A device that is awake polls, so a doorbell
// costs a few stores; only a sleeping device costs a system call.
struct WakeWord {
    CacheLineU32 device_sleeping;       // device -> provider: wake me (futex word)
    CacheLineU32 host_sleeping;         // provider event thread -> device: wake me
    CacheLineU32 pending_bitmap_epoch;  // device: bumped when it drained doorbells
};

// Per-context doorbell bitmaps, three levels. A provider that advanced a producer or
// armed a CQ calls set_doorbell(): it sets bit (queue % 64) in word (queue / 64) of the
// matching kind, THEN bit (word % 64) in that kind's summary word (word / 64), THEN the
// summary word's bit in `pending` (bit kind * kDoorbellSummaryWords + word / 64), each
// with fetch_or (release). The device takes the levels top down: it exchanges `pending`
// with zero (acquire), then each summary word it names, then each bitmap word a summary
// names, and services every set bit. Every level is set after the one below it and taken
// before it, so a doorbell set while the device is between two steps is either taken
// now or found by the next pass through `pending`, never lost. `pending` is the one word
// a device (or the daemon's doorbell thread) reads to learn that a context has work, so
// a scan of an idle context costs one load however many queues exist. Spurious bits are
// harmless (the device re-reads the producer), so a misbehaving consumer can only waste
// the device's time.
inline constexpr uint32_t kDoorbellBitmapWords = 256;                   // words per kind
inline constexpr uint32_t kDoorbellQueues = kDoorbellBitmapWords * 64;  // 16384 per kind
inline constexpr uint32_t kDoorbellSummaryWords = kDoorbellBitmapWords / 64;
enum class DoorbellKind : uint32_t {
    kSendQueue = 0,
    kReceiveQueue = 1,
    kCompletionQueue = 2,  // arm doorbells
    kSharedReceiveQueue = 3,
};
inline constexpr uint32_t kDoorbellKinds = 4;
static_assert(kDoorbellKinds * kDoorbellSummaryWords <= 64, "pending has one bit per summary");
struct DoorbellBitmaps {
    uint64_t send_queue[kDoorbellBitmapWords];
    uint64_t receive_queue[kDoorbellBitmapWords];
    uint64_t completion_queue[kDoorbellBitmapWords];  // arm doorbells
    uint64_t shared_receive_queue[kDoorbellBitmapWords];
    // [kind][s] bit b: word s * 64 + b of that kind may be non-zero.
    uint64_t summary[kDoorbellKinds][kDoorbellSummaryWords];
    // bit kind * kDoorbellSummaryWords + s: summary[kind][s] may be non-zero.
    uint64_t pending;

    uint64_t *words(DoorbellKind kind) {
        return send_queue + static_cast<uint32_t>(kind) * kDoorbellBitmapWords;
    }
};
static_assert(offsetof(DoorbellBitmaps, receive_queue) == 2048);
static_assert(offsetof(DoorbellBitmaps, shared_receive_queue) == 6144);
static_assert(offsetof(DoorbellBitmaps, summary) == 8192);
static_assert(offsetof(DoorbellBitmaps, pending) == 8320);

// The provider's half of the protocol above. `queue` < kDoorbellQueues.
inline void set_doorbell(DoorbellBitmaps &bitmaps, DoorbellKind kind, uint32_t queue) {
    const uint32_t word = queue / 64;
    const uint32_t k = static_cast<uint32_t>(kind);
    std::atomic_ref(bitmaps.words(kind)[word])
        .fetch_or(uint64_t{1} << (queue % 64), std::memory_order_release);
    std::atomic_ref(bitmaps.summary[k][word / 64])
        .fetch_or(uint64_t{1} << (word % 64), std::memory_order_release);
    std::atomic_ref(bitmaps.pending)
        .fetch_or(uint64_t{1} << (k * kDoorbellSummaryWords + word / 64),
                  std::memory_order_release);
}

// ---------------------------------------------------------------------------
// 8. Per-context control block (kControlPageBytes: the wake words and the doorbell
// bitmaps, in one allocation of whole pages)
// ---------------------------------------------------------------------------
inline constexpr uint32_t kControlPageMagic = 0x4b444e53;  // "SNDK"

// The command slot (daemon mode): one control command at a time from the provider to
// the device thread that serves this page's doorbells, through shared memory instead of
// the control socket - no system call while both sides spin. Only commands that pass
// no file descriptor either way use it (command_slot_serves()); the socket carries the
// rest, and the provider issues one command at a time over either path, so they stay
// in order.
//
//   provider: writes `request` (a whole request struct, header first), then bumps
//             request_sequence (release), then rings as for a doorbell (the page's
//             wake.device_sleeping). It waits for response_sequence to reach the new
//             value: spinning, then announce_sleep(host_waiting) and FUTEX_WAIT on
//             response_sequence.
//   device:   sees request_sequence differ from the last one it served (which it
//             keeps in its own memory, not here), copies the request out before it
//             reads a byte of it, executes it, writes `response` (a ResponseHeader
//             first), stores response_sequence = request_sequence (release), and
//             wakes the provider if claim_sleeper(host_waiting).
// Whatever the provider writes here only ever reaches the device as a request it
// validates like any other; a provider that scribbles on the slot confuses only itself.
inline constexpr uint32_t kCommandSlotBytes = 1024;  // the largest request or response

struct CommandSlot {
    CacheLineU32 request_sequence;   // provider -> device
    CacheLineU32 response_sequence;  // device -> provider (futex word)
    CacheLineU32 host_waiting;       // provider: 1 = waiting in FUTEX_WAIT, wake me
    uint8_t request[kCommandSlotBytes];
    uint8_t response[kCommandSlotBytes];
};
static_assert(sizeof(CommandSlot) == 3 * 64 + 2 * kCommandSlotBytes);

struct ContextControlPage {
    uint32_t magic;
    uint32_t abi_version;
    uint32_t context_id;
    // Device -> provider: how many of this context's QPs have entered ERROR (counts up,
    // never down; read and written as std::atomic_ref, release/acquire). A receive the
    // provider posts without a ring (the device reads a receive queue when a SEND needs
    // a WQE) needs one only on a QP in ERROR, whose receives the device flushes; while
    // this is 0 none does, so a CQ poll that finds nothing need not ring for them.
    uint32_t qps_in_error;
    uint8_t reserved1[48];
    WakeWord wake;              // @64
    DoorbellBitmaps doorbells;  // @256
    alignas(64) CommandSlot command;
};
static_assert(offsetof(ContextControlPage, wake) == 64);
static_assert(offsetof(ContextControlPage, doorbells) == 256);
static_assert(offsetof(ContextControlPage, command) == 8640);
// The control block's allocation: the device allocates, the provider maps, this many bytes.
inline constexpr uint32_t kControlPageBytes = 3 * kPageBytes;
static_assert(sizeof(ContextControlPage) <= kControlPageBytes);

// ---------------------------------------------------------------------------
// 9. Queue memory layouts (returned by the create commands)
//
// Every queue's memory is allocated BY THE DEVICE (like ICM) and handed to the
// provider: in daemon mode as a sealed memfd (size cannot change, so the
// device can never fault on it), embedded as plain memory. Offsets are from
// the start of that allocation.
// ---------------------------------------------------------------------------
struct QueueLayout {
    uint64_t bytes;            // total size of the allocation
    uint32_t doorbell_offset;  // QueueDoorbell / CqDoorbell / EqDoorbell
    uint32_t ring_offset;      // first slot
    uint32_t entries;          // slots (power of two)
    uint32_t entry_bytes;      // 64 for SQ/CQ/EQ; per-slot size for RQ/SRQ
};
static_assert(sizeof(QueueLayout) == 24);

// ---------------------------------------------------------------------------
// 10. Device limits ("device profile"), as reported by kQueryDevice
// ---------------------------------------------------------------------------
struct DeviceLimits {
    uint32_t vendor_id;
    uint32_t device_id;
    uint64_t max_registration_bytes;
    uint64_t max_window_bytes;
    uint32_t max_fast_register_pages;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_read_sge;
    uint32_t max_transfer_bytes;
    uint32_t max_inline_bytes;
    uint32_t max_inbound_reads;   // IRD
    uint32_t max_outbound_reads;  // ORD
    uint32_t max_recv_queue_depth;
    uint32_t max_send_queue_depth;
    uint32_t max_srq_depth;
    uint32_t max_cq_depth;
    uint32_t large_request_threshold;
    uint32_t max_caller_data;
    uint32_t max_callee_data;
    uint32_t adapter_flags;      // NDK_ADAPTER_FLAG_* the device honours
    uint32_t rdma_technology;    // NDK_RDMA_TECHNOLOGY
    uint32_t path_mtu;           // IB MTU used for packetisation
    uint16_t ndk_version_major;  // highest NDKPI version fully implemented
    uint16_t ndk_version_minor;
    uint32_t quirks;  // DeviceQuirk bits: behaviours a profile opts in to
    // Largest WQE (bytes) the provider may push with the doorbell (BlueFlame); 0: none.
    uint32_t blueflame_bytes;
    uint32_t time_mode;  // TimeMode: how model time relates to the wall clock
    uint32_t reserved[2];
};
static_assert(sizeof(DeviceLimits) == 120);

// DeviceLimits::time_mode (docs/timing.md). Model time is in nanoseconds.
enum class TimeMode : uint32_t {
    // Runs as fast as the host allows; model time is recorded (CQE and EQE times) but
    // starts at 0 and has no fixed relation to the wall clock.
    kFunctional = 0,
    // Model time is CLOCK_MONOTONIC: the provider returns no CQE (and raises no
    // notification) before its completion time, so the consumer's clock sees the model.
    kPaced = 1,
    // Model time is simulated time (softndk/sim.hpp): paced mode's rules on the clock of
    // the process's discrete-event scheduler. Embedded devices only.
    kSimulated = 2,
};

// Opt-in behaviours of a profile, reported in DeviceLimits::quirks so that the device
// and the provider agree on them.
enum DeviceQuirk : uint32_t {
    // Every NdkFastRegister gives the MR a new token (the next variant) and every
    // invalidation retires the old one: the stale-key protection verbs consumers get
    // from ibv_inc_rkey. Off by default: NDK drivers read NdkGetRemoteTokenFromMr once
    // after NdkInitializeFastRegisterMr and reuse it, so the default token is stable.
    kQuirkRotateFastRegisterKeys = 1u << 0,
};

// ---------------------------------------------------------------------------
// 11. Commands (slow path)
//
// Every command is a fixed-size request struct beginning with CommandHeader,
// answered by a fixed-size response beginning with ResponseHeader. Embedded,
// a command is a function call taking the request and filling the response;
// in daemon mode the same bytes travel over the Unix-domain control socket,
// with file descriptors (queue memory, registered memory) passed alongside as
// SCM_RIGHTS. Object numbers are per device; the device checks that every
// number named in a request belongs to the requesting context.
// ---------------------------------------------------------------------------
enum class CommandOpcode : uint16_t {
    kAttach = 0x01,  // -> context id, limits, control page (fd out in daemon mode)
    kDetach = 0x02,
    kCreatePd = 0x10,
    kDestroyPd = 0x11,
    kCreateCq = 0x20,  // -> cq number, QueueLayout (fd out)
    kDestroyCq = 0x21,
    kResizeCq = 0x22,
    kModerateCq = 0x23,
    kCreateQp = 0x30,  // -> qp number, SQ + RQ layouts (fd out)
    kDestroyQp = 0x31,
    kFlushQp = 0x32,
    kCreateSrq = 0x38,
    kDestroySrq = 0x39,
    kModifySrq = 0x3a,
    kAllocMr = 0x40,     // -> MPT index (token with variant)
    kRegisterMr = 0x41,  // contiguous range (fd in, daemon mode)
    kDeregisterMr = 0x42,
    kInitFastRegMr = 0x43,
    kFreeMr = 0x44,
    kBuildLam = 0x45,         // map pages into the context's logical address space (fd in)
    kReleaseLam = 0x46,       // unmap them (ObjectRequest: the LAM id)
    kPrivilegedToken = 0x47,  // the PD's privileged token, created on first use
    kAllocMw = 0x48,
    kFreeMw = 0x49,
    kListen = 0x60,  // -> listener id
    kCloseListener = 0x61,
    kPauseListener = 0x62,
    kConnect = 0x63,  // -> connection id; result later as kConnectReply EQE
    kAccept = 0x64,
    kReject = 0x65,
    kCompleteConnect = 0x66,
    kDisconnect = 0x67,
    kCloseConnection = 0x68,
    kQueryConnection = 0x69,
    kCreateSharedEndpoint = 0x6a,  // ListenRequest -> ListenResponse (listener = endpoint id)
    kCloseSharedEndpoint = 0x6b,
    kInjectFault = 0x70,     // FaultRequest -> ObjectResponse{object = fault id}
    kRemoveFault = 0x71,     // ObjectRequest{fault id, 0 = every fault of the context}
    kQueryCounters = 0x72,   // ObjectRequest -> CountersResponse (section 12)
    kQueryResources = 0x73,  // ResourcesRequest -> ResourcesResponse (section 13)
};

struct CommandHeader {
    CommandOpcode opcode;
    uint16_t request_bytes;  // sizeof the whole request struct
    uint32_t sequence;       // echoed in the response
};
static_assert(sizeof(CommandHeader) == 8);

// Whether the command slot carries `op`: a command whose request and response hold no
// file descriptor or MemoryHandle, and that needs nothing from the daemon's session
// (attach, detach and registrations go by the socket). Today: the connection manager's
// commands, which a connect makes eight of, and kQueryCounters.
constexpr bool command_slot_serves(CommandOpcode op) {
    switch (op) {
        case CommandOpcode::kConnect:
        case CommandOpcode::kAccept:
        case CommandOpcode::kReject:
        case CommandOpcode::kCompleteConnect:
        case CommandOpcode::kDisconnect:
        case CommandOpcode::kCloseConnection:
        case CommandOpcode::kQueryConnection:
        case CommandOpcode::kQueryCounters:
            return true;
        default:
            return false;
    }
}

struct ResponseHeader {
    uint32_t sequence;
    int32_t status;  // NTSTATUS
};
static_assert(sizeof(ResponseHeader) == 8);

inline constexpr uint32_t kMaxPrivateData = 196;  // IB CM REP private data size

// Socket addresses travel as sockaddr_in6-sized blobs in Linux AF_* numbering.
struct WireSockaddr {
    uint8_t bytes[28];
    uint32_t length;
};
static_assert(sizeof(WireSockaddr) == 32);

// Memory handed between the sides travels as a MemoryHandle: in daemon mode
// `fd_index` names one of the file descriptors passed with the message (the
// memory is a sealed memfd, mapped at `offset`); embedded, fd_index is
// kNoFd and `embedded_address` is the address in the shared address space.
inline constexpr uint32_t kNoFd = 0xffffffffu;
struct MemoryHandle {
    uint32_t fd_index;
    uint32_t reserved;
    uint64_t offset;
    uint64_t bytes;
    uint64_t embedded_address;
};
static_assert(sizeof(MemoryHandle) == 32);

// ---- kAttach
struct AttachRequest {
    CommandHeader header;
    uint32_t abi_version;  // must equal kAbiVersion
    uint32_t if_index;     // which virtual adapter
    uint16_t ndk_major;    // NDK version the consumer asked for (major, lowest minor)
    uint16_t ndk_minor;
    uint32_t process_id;
};
struct AttachResponse {
    ResponseHeader header;
    uint32_t context_id;
    uint32_t abi_version;
    DeviceLimits limits;
    MemoryHandle control_page;  // ContextControlPage
    MemoryHandle event_queue;   // EqDoorbell + EQE ring (QueueLayout below)
    QueueLayout event_queue_layout;
};

// ---- Simple object commands: create returns a number, destroy takes one.
struct ObjectRequest {
    CommandHeader header;
    uint32_t object;  // PD/CQ/QP/SRQ number, MPT index, listener or connection id
    uint32_t reserved;
};
struct ObjectResponse {
    ResponseHeader header;
    uint32_t object;
    uint32_t token;  // kAllocMr/kAllocMw: the token (index << 8 | variant)
};

// ---- kCreateCq / kResizeCq
//
// kResizeCq hands the CQ a NEW allocation (doorbell record + ring, as for kCreateCq) and
// carries every queued CQE over. Contract:
//   - before sending it, the provider stops polling and arming the CQ and publishes its
//     exact consumer count in the old CqDoorbell::consumer; it keeps both stopped until
//     it has switched to the new allocation;
//   - the device, with CQE writes to this CQ stopped, services an arm still pending in
//     the old record, takes C = old consumer and its own producer P, and writes CQEs
//     C .. P-1 into the new ring at the SAME free-running counts (slot = count mod new
//     entries, owner bit of the new depth; every other slot holds the stale owner bit
//     for its next count). The new record starts with consumer = C and the old
//     arm_type / arm_sequence, so counts and the arm sequence simply continue;
//   - the response carries the new allocation; the old one is gone once the device
//     answers (the provider unmaps its view and never touches it again);
//   - depth < P - C: STATUS_BUFFER_OVERFLOW and nothing changes; a C outside
//     [P - old entries, P]: STATUS_INVALID_PARAMETER, nothing changes.
struct CreateCqRequest {
    CommandHeader header;
    uint32_t depth;
    uint32_t cq;  // kResizeCq: which CQ
};
struct CreateCqResponse {
    ResponseHeader header;
    uint32_t cq;
    uint32_t reserved;
    MemoryHandle memory;
    QueueLayout layout;
};

// ---- kModerateCq (NdkControlCqInterruptModeration) -> ObjectResponse
// Event moderation of an armed CQ, as mlx5's cq_max_count / cq_period: an ANY arm's
// kCompletion EQE is written once `count` successful CQEs arrived since arming, or
// `interval_us` after the first of them, whichever comes first. count 0 = no count
// trigger, interval_us 0 = no timer; 0/0 (the default) or count 1 = one EQE per CQE.
// Error CQEs, SOLICITED arms and an arm that fires at once are never delayed. The
// provider maps NDK's MAXULONG / "count > depth" conventions onto these values.
struct ModerateCqRequest {
    CommandHeader header;
    uint32_t cq;
    uint32_t interval_us;
    uint32_t count;
    uint32_t reserved;  // 0
};

// ---- kCreateQp
struct CreateQpRequest {
    CommandHeader header;
    uint32_t pd;
    uint32_t send_cq;
    uint32_t recv_cq;
    uint32_t srq;         // kNoObject if the QP has its own RQ
    uint32_t send_depth;  // WQEs
    uint32_t recv_depth;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_bytes;
    uint32_t reserved;
};
inline constexpr uint32_t kNoObject = 0xffffffffu;
struct CreateQpResponse {
    ResponseHeader header;
    uint32_t qp;
    uint32_t reserved;
    MemoryHandle memory;  // one allocation holding both queues
    QueueLayout send_queue;
    QueueLayout recv_queue;  // entries == 0 when the QP uses an SRQ
};

// ---- kCreateSrq / kModifySrq
struct CreateSrqRequest {
    CommandHeader header;
    uint32_t pd;
    uint32_t depth;
    uint32_t max_sge;
    uint32_t limit;  // notify threshold (0 = not armed)
    uint32_t srq;    // kModifySrq: which SRQ
    uint32_t reserved;
};
struct CreateSrqResponse {
    ResponseHeader header;
    uint32_t srq;
    uint32_t queued;  // kModifySrq: receives currently queued
    MemoryHandle memory;
    QueueLayout layout;
};

// ---- kAllocMr / kAllocMw: ObjectRequest with object = PD; kAllocMw puts the
// window type (1 or 2) in ObjectRequest::reserved.

// ---- kRegisterMr
struct RegisterMrRequest {
    CommandHeader header;
    uint32_t mpt_index;
    uint8_t access;  // AccessFlags
    uint8_t reserved[3];
    uint64_t iova;  // the consumer's VA of the first byte
    uint64_t length;
    MemoryHandle memory;  // where the device finds the bytes
};

// ---- kInitFastRegMr
struct InitFastRegMrRequest {
    CommandHeader header;
    uint32_t mpt_index;
    uint32_t max_pages;
    uint8_t remote_access;
    uint8_t reserved[7];
};

// ---- kBuildLam / kReleaseLam (NdkBuildLAM / NdkReleaseLAM)
// Maps the whole pages of [address, address + length) into the context's logical
// address space. `address` and `length` are multiples of kPageBytes (the provider rounds
// the MDL's range out to pages). Logical page i of the answer is first_logical_page +
// i * kPageBytes: the device promises consecutive logical pages for one LAM. FAST_REGISTER
// page addresses and the privileged token's IOVAs are resolved through this space; a
// page not mapped here completes with kLocalProtection.
struct BuildLamRequest {
    CommandHeader header;
    uint64_t address;
    uint64_t length;
    MemoryHandle memory;  // where the device finds the bytes, as for kRegisterMr
};
struct BuildLamResponse {
    ResponseHeader header;
    uint32_t lam;  // id for kReleaseLam (never 0)
    uint32_t page_count;
    uint64_t first_logical_page;
};

// ---- Connection management
struct ListenRequest {
    CommandHeader header;
    WireSockaddr address;  // port 0 = device picks an ephemeral port
};
struct ListenResponse {
    ResponseHeader header;
    uint32_t listener;
    uint32_t reserved;
    WireSockaddr bound;  // the address actually bound
};

struct ConnectRequest {
    CommandHeader header;
    uint32_t qp;
    uint32_t inbound_read_limit;
    uint32_t outbound_read_limit;
    uint32_t private_data_bytes;
    // Non-zero: connect from this shared endpoint's address (source is ignored);
    // several connections may share it, each to a different peer address.
    uint32_t shared_endpoint;
    uint32_t reserved;
    WireSockaddr source;
    WireSockaddr destination;
    uint8_t private_data[kMaxPrivateData];
};

// kAccept / kReject / kCompleteConnect: which connection, and for kAccept the
// QP that takes it over.
struct AcceptRequest {
    CommandHeader header;
    uint32_t connection;
    uint32_t qp;
    uint32_t inbound_read_limit;
    uint32_t outbound_read_limit;
    uint32_t private_data_bytes;
    uint32_t reserved;
    uint8_t private_data[kMaxPrivateData];
};

struct ConnectionInfo {
    WireSockaddr local;
    WireSockaddr peer;
    uint32_t inbound_read_limit;     // effective IRD
    uint32_t outbound_read_limit;    // effective ORD
    uint32_t private_data_bytes;     // what the peer sent
    uint32_t private_data_capacity;  // RDS: the provider's buffer size for this direction
    uint8_t private_data[kMaxPrivateData];
};
struct QueryConnectionResponse {
    ResponseHeader header;
    ConnectionInfo info;
};

// ---- kQueryCounters: ObjectRequest (object ignored) -> CountersResponse
// The device's statistics block (section 12), values in SOFTNDK_DEVICE_COUNTERS order.

// ---- kInjectFault / kRemoveFault (docs/faults.md)
//
// One fault spec, as SPDK's bdev_error_inject_error: a kind, what it matches, how often
// and with what status. The provider fills it from SOFTNDK_FAULT (softndk_faults.h);
// SOFTNDK_FAULTS files give the device the same specs. Every decision a spec takes with
// a probability draws from the device's fault PRNG (seeded by SOFTNDK_SEED).
enum class FaultKind : uint32_t {
    // Packets matching qp / direction / packet_class, each with probability_ppm.
    kPacketDrop = 1,
    kPacketDelay = 2,      // delivered time_ns (model time) later
    kPacketDuplicate = 3,  // delivered twice
    kPacketReorder = 4,    // held, delivered after the next packet
    kPacketCorrupt = 5,    // its ICRC fails at the receiver, which drops it (icrc_errors)
    // The next `count` send-queue WQEs of `operation` (FaultOperation; kReceive: receive
    // WQEs consumed by an arriving SEND) complete with the Syndrome in `status`.
    kFailOperation = 10,
    // The next `count` commands with opcode `operation` (CommandOpcode) answer the
    // NTSTATUS in `status` and do nothing.
    kFailCommand = 11,
    // The responder of `qp` answers arriving SENDs with RNR NAKs, as if no receive were
    // posted, from model time start_ns (0: now) for time_ns.
    kRnrStorm = 20,
    // `token` fails every remote access check from model time start_ns (0: now).
    kExpireToken = 21,
    // Immediate actions on `qp` (kNoObject: not allowed).
    kQpError = 30,         // QP to ERROR; its WQEs flush with ProviderErrorCode = status
    kKillConnection = 31,  // both ends see a disconnect (kDisconnected EQEs)
    kPeerVanish = 32,      // the peer's address goes silent: no packet or CM message either way
    // Immediate actions on CQ `qp` (the field holds the CQ number).
    kCqOverrun = 40,  // the CQ behaves as overrun (kCqError EQE, its QPs to ERROR)
    kEqStorm = 41,    // `count` spurious kCompletion EQEs for the CQ
};
enum class FaultDirection : uint32_t { kBoth = 0, kTransmit = 1, kReceive = 2 };
// FaultRequest::packet_class bits (0 = every packet).
enum FaultPacketClass : uint32_t {
    kFaultPacketSend = 1u << 0,
    kFaultPacketWrite = 1u << 1,
    kFaultPacketReadRequest = 1u << 2,
    kFaultPacketReadResponse = 1u << 3,
    kFaultPacketAck = 1u << 4,  // ACKs and NAKs
};
// kFailOperation: which work requests (0 = any send-queue WQE).
enum class FaultOperation : uint32_t {
    kAny = 0,
    kSend = 1,
    kReceive = 2,
    kRead = 3,
    kWrite = 4,
    kFastRegister = 5,
    kBind = 6,
    kInvalidate = 7,
};
inline constexpr uint32_t kFaultCertain = 1000000;  // probability_ppm of "always"

struct FaultRequest {
    CommandHeader header;
    uint32_t kind;             // FaultKind
    uint32_t qp;               // QP number (CQ number for the CQ kinds); kNoObject = any QP
    uint32_t count;            // injections before the spec retires; 0 = unlimited (packet kinds)
    uint32_t probability_ppm;  // packet and RNR kinds: chance per matching packet
    uint32_t direction;        // FaultDirection (packet kinds)
    uint32_t packet_class;     // FaultPacketClass bits (packet kinds)
    uint32_t operation;        // kFailOperation: FaultOperation; kFailCommand: CommandOpcode
    int32_t status;            // kFailOperation/kQpError: Syndrome; kFailCommand: NTSTATUS
    uint32_t token;            // kExpireToken
    uint32_t reserved0;
    uint64_t time_ns;   // kPacketDelay: the delay; kRnrStorm: its length
    uint64_t start_ns;  // kRnrStorm, kExpireToken: model time it starts (0: now)
    uint8_t name[32];   // for logs (NUL-terminated, may be empty)
    uint32_t reserved[4];
};
static_assert(sizeof(FaultRequest) == 8 + 40 + 16 + 32 + 16);

// ---------------------------------------------------------------------------
// 12. Statistics (kQueryCounters)
//
// The device's counters, Soft-RoCE's names where it has one. A snapshot: each value
// is read on its own (relaxed), not as a consistent cut. New counters are appended,
// so an index keeps its meaning. The *_cache_* counters are the timing model's
// (emulator/time/model.hpp Stats), read when the command runs.
// ---------------------------------------------------------------------------
// clang-format off
#define SOFTNDK_DEVICE_COUNTERS(X)                                                     \
    X(sent_pkts)            /* packets the requester/responder put on the fabric */  \
    X(rcvd_pkts)            /* packets delivered to this device                  */  \
    X(duplicate_request)    /* responder: request PSN behind ePSN                */  \
    X(out_of_seq_request)   /* responder: request PSN ahead of ePSN (NAK sent)   */  \
    X(ird_exceeded)         /* responder: a READ beyond IRD (NAK, QP to error)   */  \
    X(rcvd_rnr_err)         /* requester: RNR NAKs received                      */  \
    X(send_rnr_err)         /* responder: RNR NAKs sent                          */  \
    X(rcvd_seq_err)         /* requester: PSN-sequence NAKs received             */  \
    X(retry_exceeded_err)   /* requester: transport retries exhausted            */  \
    X(rnr_retry_exceeded_err) /* requester: RNR retries exhausted                */  \
    X(completer_retry_err)  /* requester: go-back-N retries started              */  \
    X(ack_timeouts)         /* requester: local ACK timer expired                */  \
    X(send_err)             /* requester: error completions written              */  \
    X(rdma_sends)           /* SEND WQEs executed                                */  \
    X(rdma_recvs)           /* receive WQEs consumed                             */  \
    X(rdma_writes)          /* WRITE WQEs executed                               */  \
    X(rdma_reads)           /* READ WQEs executed                                */  \
    X(dropped_pkts)         /* packets for no QP / a QP not accepting them       */  \
    X(doorbells)            /* service() calls                                   */  \
    X(cqes)                 /* CQEs written                                      */  \
    X(eqes)                 /* EQEs written                                      */  \
    X(cq_overflows)         /* CQ overruns                                       */  \
    X(eq_overflows)         /* EQEs lost because the EQ was full                 */  \
    X(malformed_wqes)       /* WQEs that failed validation                       */  \
    X(flushed_wqes)         /* WQEs completed with WR_FLUSH_ERR                  */  \
    X(icrc_errors)          /* packets dropped because their ICRC failed         */  \
    X(faults_injected)      /* every injected fault (faults.hpp record())        */  \
    X(fault_drops)          /* packets dropped by a fault                        */  \
    X(fault_delays)         /* packets delayed by a fault                        */  \
    X(fault_duplicates)     /* packets duplicated by a fault                     */  \
    X(fault_reorders)       /* packets held behind the next one by a fault       */  \
    X(fault_corruptions)    /* packets corrupted by a fault (ICRC then fails)    */  \
    X(fault_failed_ops)     /* work requests failed by a fault                   */  \
    X(fault_failed_cmds)    /* commands failed by a fault                        */  \
    X(fault_rnr_naks)       /* SENDs answered RNR by an RNR storm                */  \
    X(fault_expired_tokens) /* remote accesses refused for an expired token      */  \
    X(fault_qp_errors)      /* QPs moved to error by a fault                     */  \
    X(fault_killed_conns)   /* connections killed by a fault                     */  \
    X(fault_vanished)       /* packets/CM messages lost to a vanished peer       */  \
    X(fault_cq_overruns)    /* CQs overrun by a fault                            */  \
    X(fault_eq_events)      /* spurious EQEs posted by an EQ storm               */  \
    X(qpc_cache_hits)       /* timing model: QP context cache hits               */  \
    X(qpc_cache_misses)     /* timing model: QP context cache misses             */  \
    X(mpt_cache_hits)       /* timing model: MPT (key) cache hits                */  \
    X(mpt_cache_misses)     /* timing model: MPT (key) cache misses              */  \
    X(mtt_cache_hits)       /* timing model: MTT (translation) cache hits        */  \
    X(mtt_cache_misses)     /* timing model: MTT (translation) cache misses      */  \
    X(paced_placements)     /* paced mode: payloads placed (WRITE, SEND, READ)   */  \
    X(paced_late)           /* paced mode: of those, placed after their time     */  \
    X(paced_late_ns)        /* paced mode: how late they were, in total (ns)     */
// clang-format on

inline constexpr uint32_t kMaxCounters = 64;
struct CountersResponse {
    ResponseHeader header;
    uint32_t count;  // values filled (the list's length)
    uint32_t reserved;
    uint64_t values[kMaxCounters];
};
static_assert(sizeof(CountersResponse) == 16 + 8 * kMaxCounters);

// ---------------------------------------------------------------------------
// 13. Resources (kQueryResources)
//
// The live objects of one kind on the WHOLE device, every context's, for monitoring
// (`softndk res show`): the one command that is not confined to the calling
// context. It reads no memory and changes nothing. Each entry is a snapshot taken
// under that object's own lock; the list is no consistent cut.
//
// Paged: the request names the kind and the first object number to report
// (`start`, 0 = from the beginning); the response holds up to kResourcesPerPage
// entries in ascending object number and, in `next`, the number to ask for next
// (0 = no more). Kinds the device cannot list answer STATUS_NOT_SUPPORTED; an
// unknown kind STATUS_INVALID_PARAMETER.
// ---------------------------------------------------------------------------
enum class ResourceKind : uint32_t { kQp = 1, kCq = 2, kPd = 3, kMr = 4, kSrq = 5, kCm = 6 };

// Field use by kind ("-": 0):
//   number  QP / CQ / PD number
//   state   QP: QpState (0 RESET, 1 INIT, 2 RTR, 3 RTS, 4 ERROR); CQ: 1 armed, 2 dead
//           (bits); PD: 0; MR: see below
//   values  QP: pd, send_cq, recv_cq, srq (kNoObject: none), sq_entries,
//               sq_outstanding (WQEs fetched by the device, not yet completed),
//               rq_entries (0 with an SRQ), sq_psn (next new PSN), sq_una_psn
//               (oldest unacknowledged), rq_psn (expected PSN), remote_qpn,
//               connection (CM connection id, 0 = none), sq_unfetched (WQEBBs the
//               consumer published that the device has not fetched yet), rq_queued
//               (receives published, not yet consumed; 0 with an SRQ)
//           CQ: entries, queued (CQEs written, not yet consumed), arm_type (ArmType)
//           PD: users (QPs and memory keys in it)
//           MR (every MPT entry: MRs, windows, privileged tokens; number = MPT index):
//               pd, token, access (AccessFlags), iova low/high 32 bits, length
//               low/high 32 bits, type (1 MR, 2 fast-register MR, 3/4 window type
//               1/2, 5 privileged); state: 0 INVALID, 1 FREE, 2 VALID
//           SRQ: pd, entries, queued (receives posted, not yet taken by a QP),
//                limit (the armed limit event's threshold, 0 = not armed), max_sge
//           CM (number: a connection id; a listener is kCmListenerBase + its id, a
//               shared endpoint kCmSharedEndpointBase + its id, so one ascending
//               order pages through all three): local IP (16 bytes, IPv4-mapped for
//               IPv4, in values 0-3 as memory), local port, peer IP (values 5-8),
//               peer port, QP (0: none), peer's connection id;
//               state: CmRole << 8 | the connection's state (CmState)
inline constexpr uint32_t kCmListenerBase = 0x40000000;
inline constexpr uint32_t kCmSharedEndpointBase = 0x80000000;
enum class CmRole : uint32_t { kActive = 1, kPassive = 2, kListener = 3, kSharedEndpoint = 4 };
// A connection's state; a listener's is kListening or kPaused, a shared endpoint's kBound.
enum class CmState : uint32_t {
    kReqSent = 0,
    kReplied = 1,
    kRequested = 2,
    kAccepted = 3,
    kEstablished = 4,
    kDisconnecting = 5,
    kDisconnected = 6,
    kClosed = 7,
    kFailed = 8,
    kListening = 9,
    kPaused = 10,
    kBound = 11,
};
inline constexpr uint32_t kResourceValues = 16;
struct ResourceEntry {
    uint32_t number;
    uint32_t context;     // owning context
    uint32_t process_id;  // its AttachRequest::process_id (daemon: the kernel's peer pid)
    uint32_t state;
    uint32_t values[kResourceValues];
};
static_assert(sizeof(ResourceEntry) == 16 + 4 * kResourceValues);

// A page is small enough for one daemon message (emulator/daemon/protocol.hpp: 1 KiB).
inline constexpr uint32_t kResourcesPerPage = 12;
struct ResourcesRequest {
    CommandHeader header;
    uint32_t kind;   // ResourceKind
    uint32_t start;  // first object number to report
};
static_assert(sizeof(ResourcesRequest) == 16);
struct ResourcesResponse {
    ResponseHeader header;
    uint32_t count;  // entries filled
    uint32_t next;   // the start of the next page, 0 = the list is complete
    ResourceEntry entries[kResourcesPerPage];
};
static_assert(sizeof(ResourcesResponse) == 16 + sizeof(ResourceEntry) * kResourcesPerPage);

}  // namespace softndk::hw
