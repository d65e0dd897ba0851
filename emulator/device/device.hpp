// device.hpp - one virtual RNIC (adapter): contexts, object tables, commands,
// doorbell service, timers, and the glue between the engine blocks.
//
// Who calls what:
//   provider --execute()--> command handlers (commands.cpp)   any thread
//   provider --service()--> doorbell service (doorbell.cpp)   the posting thread (embedded)
//   fabric   --Port::receive()--> responder / completer        the draining thread
//   progress thread --> RC timers (RNR, ACK timeout), CM timeouts
// Every entry point from outside drains the calling thread's fabric outbox before
// returning (fabric.hpp, "run to completion"), so in embedded mode a post returns
// after the whole exchange it started - packets, ACKs, CQEs - has happened.
//
// Locks, in order (never take an earlier one while holding a later one):
//   cm mutex (cm.hpp) -> Qp::mutex -> (SRQ) -> Cq -> Eq
// Never two QP locks at once. objects_mutex_ (the object tables) is a leaf with
// respect to QP locks: it is never held while a QP lock is taken (lookups copy the
// shared_ptr and drop the table lock; destroy removes the QP from the table, drops
// the table lock, then locks the QP), so code holding a QP lock may look things up.
//
// Contexts: one per attached provider instance (kAttach). A context owns a
// control page (ContextControlPage: wake words + doorbell bitmaps), an event
// queue and every object it creates. Object numbers are per device; every
// command checks that the objects it names belong to the calling context, so
// one context can neither see nor touch another's objects (an unknown number and
// another context's number both give STATUS_INVALID_PARAMETER). Detach (or
// destroying the Device) frees everything the context owned and disconnects its
// connections: the peers get a kDisconnected EQE.
//
// Queue numbers double as doorbell-bitmap bits, so QPs, CQs and SRQs are numbered
// 1..kMaxQueues-1 (QP numbers start at 2: QPN 0 and 1 are IB's special QPs).
//
// Commands (hw_interface.hpp §11; request -> response; errors besides
// STATUS_INVALID_PARAMETER for malformed/unknown/foreign arguments):
//   kAttach          AttachRequest -> AttachResponse. STATUS_BAD_VERSION (NDIS) on an
//                    ABI mismatch or an NDK version above the one reported.
//   kDetach          ObjectRequest (object ignored) -> ObjectResponse.
//   kCreatePd        ObjectRequest -> ObjectResponse{object = pd}.
//   kDestroyPd       ObjectRequest{pd}. STATUS_INVALID_DEVICE_STATE while QPs/MRs use it.
//   kCreateCq        CreateCqRequest{depth 1..max_cq_depth} -> CreateCqResponse.
//   kDestroyCq       ObjectRequest{cq}. STATUS_INVALID_DEVICE_STATE while QPs use it.
//   kResizeCq        CreateCqRequest{cq, depth 1..max_cq_depth} -> CreateCqResponse with
//                    the NEW allocation (cq.hpp, "Resize": queued CQEs carried over at the
//                    same counts). STATUS_BUFFER_OVERFLOW if depth < CQEs queued (nothing
//                    changes); STATUS_INVALID_DEVICE_STATE on an overflowed CQ;
//                    STATUS_INVALID_PARAMETER for a consumer count out of range.
//   kModerateCq      ModerateCqRequest{cq, count, interval_us} -> ObjectResponse
//                    (cq.hpp, "Moderation"; 0/0 = a notification per CQE).
//   kCreateQp        CreateQpRequest -> CreateQpResponse. With srq != kNoObject the QP
//                    draws receives from that SRQ; its recv_queue layout has 0 entries.
//   kCreateSrq       CreateSrqRequest{pd, depth, max_sge, limit} -> CreateSrqResponse.
//   kModifySrq       CreateSrqRequest{srq, depth, limit}: re-arms the limit event;
//                    a depth above the capacity (a resize) is STATUS_NOT_SUPPORTED.
//   kDestroySrq      ObjectRequest{srq}. STATUS_INVALID_DEVICE_STATE while QPs use it.
//   kDestroyQp       ObjectRequest{qp}. The QP's connection (if any) is disconnected.
//                    Writes no CQEs: flush first (kFlushQp) to get pending WQEs back.
//   kFlushQp         ObjectRequest{qp}: QP to ERROR, every pending WQE flushed.
//   kAllocMr         ObjectRequest{pd, reserved = 1 for a fast-register MR}
//                    -> ObjectResponse{object = MPT index, token}.
//   kInitFastRegMr   InitFastRegMrRequest -> ObjectResponse (STATUS_IMPLEMENTATION_LIMIT
//                    for more pages than max_fast_register_pages).
//   kAllocMw/kFreeMw ObjectRequest{pd, reserved = window type 1 or 2} / {MPT index}.
//   kRegisterMr      RegisterMrRequest -> ObjectResponse{object = MPT index, token = NEW
//                    token}. The allocator resolves `memory` (MemoryAllocator::map_registration):
//                    embedded, embedded_address is the first byte; daemon, a sealed memfd.
//   kDeregisterMr    ObjectRequest{MPT index}.   kFreeMr  ObjectRequest{MPT index}.
//   kListen          ListenRequest -> ListenResponse.
//   kCloseListener   ObjectRequest{listener}.
//   kPauseListener   ObjectRequest{listener, reserved = 1 pause / 0 resume}.
//   kConnect         ConnectRequest -> ObjectResponse{object = connection id}; the
//                    answer comes as a kConnectReply EQE (status SUCCESS = accepted).
//   kAccept          AcceptRequest -> ObjectResponse; kEstablished EQE when the peer's
//                    CompleteConnect (RTU) arrives, kConnectAborted if it rejects/dies.
//   kReject          AcceptRequest (connection, private data; qp ignored).
//   kCompleteConnect, kDisconnect, kCloseConnection: ObjectRequest{connection}.
//   kQueryConnection ObjectRequest{connection} -> QueryConnectionResponse.
//   kInjectFault     FaultRequest -> ObjectResponse{object = fault id} (faults.hpp,
//                    docs/faults.md). The QP (or CQ) named must belong to the consumer
//                    (kNoObject = any QP, for the armed kinds only). The immediate kinds
//                    act before the answer: kQpError (QP to ERROR, flushed CQEs carry
//                    `status` as the cause), kKillConnection (both ends get
//                    kDisconnected; STATUS_CONNECTION_INVALID without a connection),
//                    kPeerVanish (the QP's peer address goes silent for this device),
//                    kCqOverrun (kCqError EQE, the CQ's QPs to ERROR), kEqStorm (`count`
//                    kCompletion EQEs for the CQ, 1..1024). STATUS_INVALID_PARAMETER
//                    for a bad spec.
//   kRemoveFault     ObjectRequest{fault id, 0 = all of the context's}. Faults also go
//                    when their context detaches.
//   kQueryCounters   ObjectRequest -> CountersResponse: the whole device's counters.
//   kQueryResources  ResourcesRequest{kind, start} -> ResourcesResponse: a page of the
//                    whole device's QPs, CQs, PDs or MPT entries, EVERY context's (monitoring,
//                    hw_interface.hpp section 13); STATUS_INVALID_PARAMETER for another kind.
//   Every create (kCreatePd/Cq/Qp/Srq, kAllocMr/Mw, kListen, kCreateSharedEndpoint)
//   returns STATUS_INSUFFICIENT_RESOURCES once the context's consumer process (all its
//   contexts together) holds its AdapterConfig::quota of that kind.
//   Any command but kAttach, kDetach and the two above may be failed by a
//   kFailCommand spec: it then answers the spec's NTSTATUS and does nothing.
//   anything else    STATUS_NOT_SUPPORTED.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "device/counters.hpp"
#include "device/cq.hpp"
#include "device/faults.hpp"
#include "device/profile.hpp"
#include "device/queue_memory.hpp"
#include "fabric/fabric.hpp"
#include "memory/lam.hpp"
#include "memory/mpt.hpp"
#include "rc/qp.hpp"
#include "softndk/hw_interface.hpp"
#include "softndk/sim.hpp"

namespace softndk::emu {

namespace cm {
class ConnectionManager;
}

inline constexpr uint32_t kNoContext = 0;
inline constexpr uint32_t kMaxQueues = hw::kDoorbellQueues;  // 16384
// MPT entries per device (MRs, windows and privileged keys; the two reserved indexes
// included): a million registrations fit. Token indexes have 24 bits (hw_interface.hpp
// section 2), so the table could grow to 2^24; its entries are built as they are used.
inline constexpr uint32_t kMptEntries = 1u << 20;

// How many objects ONE consumer process may hold at once on a device: the sum over
// every context it attached (AttachRequest::process_id; in daemon mode the kernel's
// SO_PEERCRED pid, so a process that opens several sessions shares one quota; a context
// whose process id is 0 counts alone). A create past its limit returns
// STATUS_INSUFFICIENT_RESOURCES and changes nothing, so one consumer cannot take every
// QP number, MPT entry or port of a device others share. Embedded mode leaves every
// limit at kUnlimited (the device-wide limits still apply); `softndk rnic` sets the
// daemon's (--quota KEY=N, docs/daemon.md "Quotas and limits").
struct ConsumerQuota {
    static constexpr uint32_t kUnlimited = UINT32_MAX;
    uint32_t pds = kUnlimited;
    uint32_t cqs = kUnlimited;
    uint32_t qps = kUnlimited;
    uint32_t srqs = kUnlimited;
    uint32_t mrs = kUnlimited;        // MPT entries that are MRs (a PD's privileged key too)
    uint32_t mws = kUnlimited;        // memory windows
    uint32_t listeners = kUnlimited;  // listeners and shared endpoints together
};

struct AdapterConfig {
    uint32_t if_index = 1;
    std::string alias = "rnic0";
    std::vector<wire::IpAddr> addresses;  // IPv4 as IPv4-mapped IPv6
    Profile profile;                      // find_profile("roce-default") if empty name
    // How model time relates to the wall clock (hw::TimeMode, docs/timing.md).
    // kSimulated: model time is the simulated time of softndk/sim.hpp; the constructor
    // throws unless this process runs in simulated time (SOFTNDK_TIME=simulated).
    hw::TimeMode time_mode = hw::TimeMode::kFunctional;
    // Per-process object limits (see ConsumerQuota).
    ConsumerQuota quota;
};

class Device final : public Port {
  public:
    // Attaches to `fabric` under the adapter's addresses; throws std::runtime_error
    // if an address is taken there. `allocator` defaults to HeapMemoryAllocator.
    explicit Device(AdapterConfig config, std::shared_ptr<Fabric> fabric = Fabric::process_fabric(),
                    std::unique_ptr<MemoryAllocator> allocator = nullptr);
    ~Device() override;
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    // ----- the provider's two channels -----------------------------------------------
    // One command: `request` holds a request struct (CommandHeader first), `response`
    // receives the response (ResponseHeader first; at least 8 bytes; a shorter buffer
    // than the full response gets a truncated copy). Returns the NTSTATUS also written
    // to the response header. kAttach is the only command valid with kNoContext; its
    // response carries the new context id. Thread-safe.
    int32_t execute(uint32_t context, std::span<const std::byte> request,
                    std::span<std::byte> response);
    // Doorbell service for one context: exchanges each bitmap word with zero and
    // services every set bit, then drains the fabric outbox (embedded: runs on the
    // posting thread). Unknown or foreign queue numbers are ignored.
    void service(uint32_t context);

    // ----- identity and blocks ------------------------------------------------------
    const AdapterConfig &config() const { return config_; }
    const hw::DeviceLimits &limits() const { return config_.profile.limits; }
    const CostModel &cost() const { return config_.profile.cost; }
    const TransportDefaults &transport() const { return config_.profile.transport; }
    Counters &counters() { return counters_; }
    VirtualClock &clock() { return clock_; }
    time::TimingModel &timing() { return timing_; }
    hw::TimeMode time_mode() const { return config_.time_mode; }
    MemoryProtectionTable &mpt() { return mpt_; }
    Fabric &fabric() { return *fabric_; }
    cm::ConnectionManager &cm() { return *cm_; }
    FaultInjector &faults() { return *faults_; }
    bool owns_address(const wire::IpAddr &ip) const;
    // Number of live contexts (tests).
    size_t context_count() const;

    // ----- services for the engine blocks (callable with a QP lock held) -------------
    std::shared_ptr<Qp> find_qp(uint32_t number) const;
    // A QP of `context` entered ERROR: ContextControlPage::qps_in_error counts it, so the
    // provider rings for receives it posted without a ring (any thread; takes the table
    // lock, so callable with a QP lock held).
    void count_qp_in_error(uint32_t context);
    // QP owned by `context` or nullptr.
    std::shared_ptr<Qp> find_qp(uint32_t context, uint32_t number) const;
    // find_qp(number) for a packet's delivery: within a drain, the QP found for an earlier
    // packet of the drain without the table lock or a reference count
    // (Fabric::drain_memo holds it until the drain ends); the caller checks `destroyed`
    // under the QP's lock as after any lookup. `hold` owns the QP outside a drain.
    Qp *find_qp_for_delivery(uint32_t number, std::shared_ptr<Qp> &hold) const;
    // Contexts attached by one consumer process (AttachRequest::process_id: getpid() in
    // embedded mode, the kernel's SO_PEERCRED pid in daemon mode) are handles of one
    // interface opened by one driver (WskOpenNdkAdapter called several times). Their
    // objects may be used together - a QP of one handle accepted on another's connector,
    // CQs of one handle under another's QP - as on real hardware, where every handle
    // reaches the same port. Objects of another process never. A context whose process
    // id is 0 (unknown) shares with no other context.
    bool same_consumer(uint32_t context_a, uint32_t context_b) const;
    // QP owned by `context` or by another context of the same consumer, or nullptr.
    std::shared_ptr<Qp> find_consumer_qp(uint32_t context, uint32_t number) const;
    // Fills meta (IPs, UDP source port), counts, queues on the outbox. The packet is
    // ready to leave at model time `ready_ns`; it is stamped with its arrival at the
    // far port (TX pipeline, link), never before the QP's previous packet.
    void transmit(Qp &qp, Packet &&packet, uint64_t ready_ns);
    // Packet coalescing (fabric.hpp, Packet::run): whether the engine may build runs now.
    // Functional time only (paced and simulated time act on each packet), and nothing
    // that watches single packets at this device: no trace, no armed fault.
    bool coalescing() const;
    // transmit() for a run whose run[k].time_ns is the time packet k is ready to leave:
    // each packet is priced on its own, in order, exactly as transmit() would, and
    // run[k].time_ns becomes its arrival at the far port.
    void transmit_run(Qp &qp, Packet &&run);
    // Writes a CQE (a DMA write issued at model time `ready_ns`, which dates it); on
    // overflow defers "QPs of this CQ to error". Returns the CQE's time.
    uint64_t push_cqe(Cq &cq, const hw::Cqe &cqe, hw::CqeOpcode opcode, uint64_t ready_ns);
    // Posts an EQE to a context's event queue (no-op if the context is gone).
    void post_event(uint32_t context, hw::Eqe eqe);
    // Runs `fn` on the progress thread at `when` (no lock held; the outbox is drained).
    void schedule(SteadyTime when, std::function<void()> fn);
    // When the timer queue should fire a timer whose deadline is `deadline_ns` in model
    // time, set at model time `now_ns`. Paced: model time is the monotonic clock, so the
    // deadline itself. Functional: model time does not advance by itself, so the timer
    // runs the same span of host time (a consumer waiting for an RNR retry waits as
    // long as the hardware would have; a span of 16 coarse-clock ticks or more reads the
    // coarse clock: up to two ticks longer, device.cpp); what it does is dated `deadline_ns`.
    SteadyTime wall_deadline(uint64_t now_ns, uint64_t deadline_ns) const;
    // Paced mode: returns once model time `t` has come (the monotonic clock reached
    // it); functional: at once. The data path calls it before it makes data visible
    // in host memory, which a consumer may poll without any completion. Paced mode
    // also counts the placement, and a placement the host reached only after `t` (its
    // own work took longer than the model's): paced_placements, paced_late and
    // paced_late_ns say how far the host kept up with the model (docs/timing.md §2).
    void pace(uint64_t t);
    // Starting PSN for a new connection.
    uint32_t next_start_psn(uint32_t qp_number);
    // The logical address space (NdkBuildLAM) of a context, or nullptr if it is gone.
    std::shared_ptr<LamSpace> lam_space(uint32_t context) const;

    // Port: packets and CM messages from the fabric.
    void receive(Packet &packet) override;
    void receive_cm(const cm::Message &message) override;
    bool accepts_runs() const override { return coalescing(); }

  private:
    friend struct Commands;

    struct Context {
        uint32_t id = 0;
        uint32_t process_id = 0;
        std::unique_ptr<QueueMemory> control;
        hw::ContextControlPage *page = nullptr;
        std::shared_ptr<Eq> eq;
        std::shared_ptr<LamSpace> lam = std::make_shared<LamSpace>();
        std::set<uint32_t> pds, cqs, qps, srqs, mrs;
        std::set<uint32_t> mws;  // the members of `mrs` that are memory windows (quota)
    };
    struct Pd {
        uint32_t context = 0;
        uint32_t users = 0;       // QPs and MPT entries in this PD (not the privileged key)
        uint32_t privileged = 0;  // MPT index of the privileged key, 0 until asked for
    };
    struct MptOwner {
        uint32_t context = 0;
        uint32_t pd = 0;
    };

    std::shared_ptr<Context> find_context(uint32_t id) const;
    bool same_consumer_locked(uint32_t context_a, uint32_t context_b) const;  // objects_mutex_ held
    void destroy_context(Context &context);  // objects_mutex_ NOT held
    void destroy_qp(const std::shared_ptr<Qp> &qp);
    void fail_cq_qps(uint32_t cq);
    // Device::receive past the fault hooks: the packet goes to its QP's engine.
    void deliver_to_qp(Packet &packet);
    void deliver_run_to_qp(Packet &run);
    // Addresses a packet of `qp` to its peer: destination QP, ports, IPs, UDP source port.
    void address(const Qp &qp, wire::PacketDescriptor &d) const;
    // transmit()'s second half, for a packet whose time is set: trace, log, faults, fabric.
    void send_timed(Qp &qp, Packet &&packet);
    void progress_loop();

    AdapterConfig config_;
    std::shared_ptr<Fabric> fabric_;
    std::unique_ptr<MemoryAllocator> allocator_;
    Counters counters_;
    VirtualClock clock_;
    time::TimingModel timing_;
    MemoryProtectionTable mpt_;
    std::unique_ptr<cm::ConnectionManager> cm_;
    std::unique_ptr<FaultInjector> faults_;
    uint32_t vport_ = 0;

    mutable std::shared_mutex objects_mutex_;
    std::map<uint32_t, std::shared_ptr<Context>> contexts_;
    uint32_t next_context_ = 1;
    std::map<uint32_t, Pd> pds_;
    uint32_t next_pd_ = 1;
    std::vector<std::shared_ptr<Cq>> cqs_;    // index = CQ number
    std::vector<std::shared_ptr<Qp>> qps_;    // index = QP number
    std::vector<std::shared_ptr<Srq>> srqs_;  // index = SRQ number
    // Free queue numbers (objects_mutex_), so that a create takes one in O(log n) and
    // never scans the tables: a CQ or SRQ takes the lowest free number; a QP the number
    // freed longest ago (never-used numbers first, in ascending order), so a destroyed
    // QP's number is not reused at once: packets still in flight to it would otherwise
    // reach a new QP. A number returns to its list when its table slot is emptied.
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free_cqs_, free_srqs_;
    std::deque<uint32_t> free_qps_;
    std::unordered_map<uint32_t, MptOwner> mpt_owners_;  // MPT index -> owner
    std::atomic<uint32_t> psn_seed_{0x5a17};

    // Progress thread: timers only (embedded mode does doorbells inline).
    std::mutex timer_mutex_;
    sim::ConditionVariable timer_cv_{"device timers"};
    std::multimap<SteadyTime, std::function<void()>> timers_;
    bool stopping_ = false;
    sim::Thread progress_;
};

}  // namespace softndk::emu
