// provider.hpp - the provider's objects and how they reach the device.
//
// One adapter = one device context (kAttach): its control page (doorbell
// bitmaps, wake words), its event queue and one event thread. Every other
// object is a device object of that context (PD, CQ, QP, MPT entry,
// listener, connection) plus the provider-side state the device must not
// hold: consumer contexts, callbacks, shadow arrays of RequestContexts.
//
// Threads:
//   - consumer threads call dispatch slots. Posts to one queue are serialised
//     by the consumer (ndkpi-api.md 7.2), CQ polls and arms too (7.3); nothing
//     else is, so everything shared is atomic or under a named mutex;
//   - the adapter's event thread reads the EQ and runs EVERY consumer
//     callback other than create completions (which are always inline):
//     CQ notifications, connect/disconnect events, request completions and
//     close completions. One thread per adapter, so two notifications of one
//     CQ never overlap, and no provider lock is held while consumer code runs.
//
// Lifetime: object.hpp.
#pragma once

#include <ndkpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "log.hpp"
#include "object.hpp"
#include "receive_queue.hpp"
#include "softndk/device_client.hpp"
#include "softndk/hw_interface.hpp"
#include "softndk/ring.hpp"
#include "softndk/sim.hpp"
#include "softndk/wake.hpp"

#include "model_time.hpp"

namespace softndk::provider {

// ---------------------------------------------------------------------------
// Versions (ndkpi-api.md 1.6): per major version, the highest minor the
// provider implements. The adapter runs at min(this, device's highest) for the
// requested major. A version is listed only when its additions are built,
// because consumers gate features on the version they get (ndkpi-api.md 1.6):
// every slot of every table is built, with 1.2's additions (NdkSendAndInvalidate,
// GetCqResultsEx, DEFER, READ with local invalidate) and 2.1's (NdkCompleteConnectEx,
// NdkAcceptEx, the extended disconnect callback, NDK_RESULT_EX.ProviderErrorCode).
// 2.0 is not documented; what its era's headers show (the WSK NDK extension,
// RdmaTechnology) is built, so major 2 runs at 2.1.
// ---------------------------------------------------------------------------
struct VersionSupport {
    uint16_t major;
    uint16_t max_minor;
};
inline constexpr VersionSupport kProviderVersions[] = {{1, 2}, {2, 1}};

// The version the adapter runs at when a consumer asks for `requested`
// (major + lowest acceptable minor) of a device whose highest is `device`;
// nullopt = STATUS_NDIS_BAD_VERSION.
std::optional<NDK_VERSION> negotiate_version(NDK_VERSION requested, NDK_VERSION device);

// ---------------------------------------------------------------------------
// Completion tables (docs/prm.md section 4)
// ---------------------------------------------------------------------------
NTSTATUS syndrome_status(hw::Syndrome s);
NDK_OPERATION_TYPE operation_type(hw::WqeOpcode op);

class Adapter;
class Cq;
class Qp;
class Pd;
class Mr;
class Mw;
class Srq;
class SharedEndpoint;
class Listener;
class Connector;

// ---------------------------------------------------------------------------
// Adapter
// ---------------------------------------------------------------------------
class Adapter : public Embedded<NDK_ADAPTER>, public Object {
  public:
    using Public = NDK_ADAPTER;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeAdapter;

    // WskOpenNdkAdapter: attach to device `if_index`, negotiate, start the
    // event thread. Returns the NTSTATUS for the consumer.
    static NTSTATUS open(NDK_VERSION requested, uint32_t if_index, Adapter **out);
    // WskCloseNdkAdapter: blocks until every child is closed and every
    // callback has returned, then detaches and frees the adapter.
    static void close_blocking(Adapter *adapter);

    ~Adapter() override;

    NDK_VERSION version() const { return version_; }
    uint32_t if_index() const { return if_index_; }
    // Handles of one interface (WskOpenNdkAdapter called several times on the same
    // if_index) reach one device port, so their objects work together: a QP of one
    // handle accepted on another handle's connector, CQs of one handle under a QP of
    // another, as real providers allow. The device checks that both handles belong to
    // the same consumer process.
    bool same_interface(const Adapter *other) const {
        return other != nullptr && other->if_index_ == if_index_;
    }
    const hw::DeviceLimits &limits() const { return limits_; }
    const NDK_ADAPTER_INFO &info() const { return info_; }
    // The consumer's clock in model time, shared by the process's handles on this
    // interface (model_time.hpp). Set by open() before anything can use it.
    HostClock &clock() { return *clock_; }
    uint32_t next_id() { return next_id_.fetch_add(1, std::memory_order_relaxed); }

    // Slow path: fills the header, executes, returns the NTSTATUS.
    template <class Request, class Response>
    NTSTATUS execute(hw::CommandOpcode op, Request &request, Response &response) {
        request.header.opcode = op;
        request.header.request_bytes = static_cast<uint16_t>(sizeof(Request));
        request.header.sequence = sequence_.fetch_add(1, std::memory_order_relaxed);
        return client_->execute(request.header, response.header, sizeof(Response));
    }
    NTSTATUS execute_object(hw::CommandOpcode op, uint32_t object, uint32_t reserved = 0,
                            hw::ObjectResponse *out = nullptr);
    void *map(const hw::MemoryHandle &handle) { return client_->map(handle); }
    void unmap(void *address, size_t bytes) { client_->unmap(address, bytes); }

    // Doorbells: set the queue's bit in the context bitmap, then ring the device. A
    // receive queue's bit alone does not ring: the device reads a receive queue when a
    // SEND needs a WQE, so its doorbell matters only to a QP in error, whose device
    // flushes what was posted (rc::receive_doorbell), as an mlx5 RQ has a doorbell
    // record and no MMIO doorbell. The device services every pending bit, receive bits
    // included, on the next ring of any kind; ring_unrung_receives() rings for receive
    // bits no ring has covered yet, and Cq::poll calls it when it finds nothing while a
    // QP of this adapter is in error (some_qp_in_error()), so a flush completion is never
    // held from a consumer that polls or arms its CQ, and a healthy QP's receive never
    // wakes the device.
    enum class Bell { kSend, kReceive, kArm };
    void ring(Bell bell, uint32_t queue);
    // Rings if receive bits were set since the last ring; true if it rang.
    bool ring_unrung_receives();
    // True once the device has moved a QP of this adapter to ERROR
    // (hw::ContextControlPage::qps_in_error).
    bool some_qp_in_error() const {
        return control_ != nullptr &&
               std::atomic_ref<uint32_t>(control_->qps_in_error).load(std::memory_order_acquire) !=
                   0;
    }

    // Network input on the polling thread (DeviceClient::poll_network): Cq::poll calls
    // poll_network() when it finds nothing, Cq::arm stop_polling_network().
    bool poll_network() { return client_->poll_network(); }
    void stop_polling_network() { client_->stop_polling_network(); }

    // Runs `work` on the event thread (consumer callbacks, finalization).
    void defer(std::function<void()> work);

    // Event routing (object.hpp "Routing"). find_* take a hold on success.
    std::mutex route_mutex;  // also held across kListen/kConnect + insertion
    std::unordered_map<uint32_t, Cq *> cqs;
    std::unordered_map<uint32_t, Listener *> listeners;
    std::unordered_map<uint32_t, Connector *> connections;
    std::unordered_map<uint32_t, Srq *> srqs;
    template <class T>
    T *find_hold(std::unordered_map<uint32_t, T *> &map, uint32_t id) {
        std::lock_guard lock(route_mutex);
        auto it = map.find(id);
        if (it == map.end() || it->second->closing()) return nullptr;
        it->second->hold();
        return it->second;
    }
    template <class T>
    void unroute(std::unordered_map<uint32_t, T *> &map, uint32_t id, T *object) {
        std::lock_guard lock(route_mutex);
        auto it = map.find(id);
        if (it != map.end() && it->second == object) map.erase(it);
    }

    // Device removal (daemon mode: the daemon died or closed the session;
    // DeviceClient::watch_removal tells us at once). From then on: every command fails
    // STATUS_DEVICE_REMOVED (the client's doing), every post fails inline with it, a
    // poll returns what the device wrote before it died and then one STATUS_CANCELLED
    // completion per request still outstanding on the CQ's QPs (ProviderErrorCode
    // STATUS_DEVICE_REMOVED), every armed CQ and every later arm is notified with
    // STATUS_INTERNAL_ERROR (the catastrophic CQ error of ndkpi-api.md), and every
    // connector's pending request completes STATUS_DEVICE_REMOVED and its disconnect
    // callback runs. The event thread does the notifying (device_removed()).
    bool removed() const { return removed_.load(std::memory_order_acquire); }

  private:
    Adapter();
    void on_last_release() override;
    void event_loop();
    bool run_work();
    bool poll_events();
    void dispatch(const hw::Eqe &eqe);
    void wake_event_thread();
    void device_removed();  // event thread: see removed()

    std::unique_ptr<DeviceClient> client_;
    // Receive bits set since a ring last covered them (ring(), ring_unrung_receives()).
    std::atomic<bool> receives_unrung_{false};
    // Clears receives_unrung_; true if it was set. A plain load first, so that the
    // locked exchange is paid only when there is something to take (most rings find
    // the flag clear). Acquire: the ring that follows sees the bits set before it.
    bool take_unrung_receives() {
        return receives_unrung_.load(std::memory_order_relaxed) &&
               receives_unrung_.exchange(false, std::memory_order_acquire);
    }
    NDK_VERSION version_{};
    uint32_t if_index_ = 0;
    hw::DeviceLimits limits_{};
    std::shared_ptr<HostClock> clock_;
    NDK_ADAPTER_INFO info_{};
    uint32_t context_id_ = 0;
    hw::ContextControlPage *control_ = nullptr;
    std::optional<EqConsumer> eq_;
    std::optional<hw::Eqe> peeked_;  // event thread only
    std::atomic<uint32_t> sequence_{1};
    std::atomic<uint32_t> next_id_{1};

    sim::Thread event_thread_;
    std::atomic<bool> stop_{false};
    std::mutex work_mutex_;
    std::deque<std::function<void()>> work_;
    std::atomic<bool> work_pending_{false};
    std::atomic<bool> removed_{false};
    std::atomic<bool> removal_pending_{false};  // device_removed() not run yet

    std::mutex drained_mutex_;
    sim::ConditionVariable drained_cv_{"NdkCloseAdapter (objects still open)"};
    bool drained_ = false;
};

// ---------------------------------------------------------------------------
// PD
// ---------------------------------------------------------------------------
class Pd : public Embedded<NDK_PD>, public Object {
  public:
    using Public = NDK_PD;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypePd;
    Pd(Adapter *a, uint32_t number);
    uint32_t number() const { return number_; }

  protected:
    void on_final() override;

  private:
    uint32_t number_;
};

// ---------------------------------------------------------------------------
// CQ
// ---------------------------------------------------------------------------
class Cq : public Embedded<NDK_CQ>, public Object {
  public:
    using Public = NDK_CQ;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeCq;

    // `ring` and `doorbell` live in `memory` (the kCreateCq allocation); `depth` is
    // the consumer's CqDepth.
    Cq(Adapter *a, uint32_t number, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void *ctx, void *memory,
       size_t bytes, CqConsumer ring, hw::CqDoorbell *doorbell, ULONG depth);
    uint32_t number() const { return number_; }

    // QPs whose completions land here (poll looks them up by number).
    void bind_qp(uint32_t qp_number, Qp *qp);
    void unbind_qp(uint32_t qp_number);

    void arm(ULONG type);
    template <class Result>
    // Up to n completions; with `times`, times[i] = the model time of results[i]
    // (SoftNDK's model-time extension). Paced mode returns none before its time.
    ULONG poll(Result *results, ULONG n, uint64_t *times = nullptr);
    // poll()'s work on the ring; `held_until` is the completion time of a CQE it left
    // because it was not due (0: none).
    template <class Result>
    ULONG poll_ring(Result *results, ULONG n, uint64_t *times, uint64_t &held_until);
    // After a device removal, with the ring drained: up to n results for the requests
    // still outstanding on the bound QPs (sends, then receives, QP by QP), each
    // STATUS_CANCELLED. Caller holds poll_mutex_.
    template <class Result>
    ULONG flush_removed(Result *results, ULONG n, uint64_t *times);

    // NdkResizeCq, synchronous (hw_interface.hpp kResizeCq for the contract). The
    // consumer serialises GetCqResults/ArmCq per CQ but not with ResizeCq
    // (ndkpi-api.md 7.3), so this holds poll_mutex_ from publishing the consumer count
    // until the switch to the new ring: no poll or arm can touch the old ring or
    // doorbell record after the device took its copy, and none is lost meanwhile.
    NTSTATUS resize(ULONG depth);
    // NdkControlCqInterruptModeration: NDK's conventions mapped onto kModerateCq.
    NTSTATUS moderate(ULONG interval_us, ULONG count);

    // Event thread: the device satisfied an arm (status SUCCESS) or reports a
    // CQ error (STATUS_BUFFER_OVERFLOW / STATUS_INTERNAL_ERROR).
    void notify(NTSTATUS status);
    // Event thread, after a device removal (Adapter::removed): an armed CQ is notified
    // STATUS_INTERNAL_ERROR, once per arm; an unarmed one is left alone.
    void notify_removed();

  protected:
    void on_close() override;
    void on_final() override;

  private:
    uint32_t number_;
    NDK_FN_CQ_NOTIFICATION_CALLBACK callback_;
    void *callback_context_;
    // The ring, its doorbell record and their mapping change on resize: under poll_mutex_.
    void *memory_;
    size_t memory_bytes_;
    CqConsumer ring_;
    hw::CqDoorbell *doorbell_;
    bool broken_ = false;       // a resize could not map the new ring: nothing to poll any more
    std::atomic<ULONG> depth_;  // CqDepth as last set (moderation: "count > depth")
    // Serialises poll with bind/unbind of QPs, and poll and arm with resize.
    std::mutex poll_mutex_;
    // HostClock::poll: polls in a row that found nothing due. Polls only (the consumer
    // serialises them), but atomic: the fast path below reads it without poll_mutex_.
    std::atomic<uint32_t> empty_polls_{0};
    bool held_back_ = false;  // the last poll left CQEs that were not due yet
    // The completion time of the CQE the last poll held back at the ring's head (0:
    // none), for poll()'s fast path: in a wait for a completion not due yet, most polls
    // only find that it still is not, which needs neither the lock nor the ring. Set
    // and cleared under poll_mutex_ (poll_ring, resize).
    std::atomic<uint64_t> held_until_{0};
    std::unordered_map<uint32_t, Qp *> qps_;
    // Arm merging (ndkpi-api.md 7.3): -1 = not armed.
    std::atomic<int> armed_{-1};
    // Atomic because arms come from any thread, the notification callback's re-arm
    // included; in daemon mode the device that orders an arm before its EQE runs in
    // another process, where ThreadSanitizer cannot follow the chain.
    std::atomic<uint32_t> arm_sequence_{0};
};

// ---------------------------------------------------------------------------
// QP
// ---------------------------------------------------------------------------
struct QpLimits {
    uint32_t receive_depth;
    uint32_t initiator_depth;
    uint32_t receive_sge;
    uint32_t initiator_sge;
    uint32_t inline_bytes;
};

class Qp : public Embedded<NDK_QP>, public Object {
  public:
    using Public = NDK_QP;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeQp;

    // `sq`/`rq` live in `memory` (the kCreateQp allocation); no RQ if the
    // QP was created with receive depth 0.
    // `srq`: the QP receives from it (NdkCreateQpWithSrq) and has no RQ of its own.
    Qp(Adapter *a, Pd *pd, Cq *receive_cq, Cq *initiator_cq, Srq *srq, void *context,
       QpLimits limits, uint32_t number, void *memory, size_t bytes, SqProducer sq,
       std::optional<RqProducer> rq);
    uint32_t number() const { return number_; }
    void *context() const { return context_; }
    Srq *srq() const { return srq_; }

    // Posting (qp.cpp). Arguments are already validated for NULL/flags.
    NTSTATUS post_send(hw::WqeOpcode op, void *request_context, const NDK_SGE *sgl, ULONG n,
                       ULONG flags, uint64_t remote_address, uint32_t remote_token,
                       uint32_t invalidate_token = 0);
    NTSTATUS post_fast_register(void *request_context, Mr *mr, ULONG page_count,
                                const NDK_LOGICAL_ADDRESS *pages, ULONG fbo, SIZE_T length,
                                void *base, ULONG flags);
    NTSTATUS post_bind(void *request_context, Mr *mr, Mw *mw, void *address, SIZE_T length,
                       ULONG flags);
    // LOCAL_INVALIDATE of `token` (a fast-register MR's or a window's).
    NTSTATUS post_invalidate(void *request_context, uint32_t token, ULONG flags);
    NTSTATUS post_receive(void *request_context, const NDK_SGE *sgl, ULONG n);
    void flush();

    // Completion side (cq.cpp, under the CQ's poll mutex). Retires the SQ WQE
    // whose wqe_index is `counter` and every unsignaled one before it; returns
    // false if no outstanding WQE has that index (CQE dropped).
    bool retire_send(uint16_t counter, void **request_context, hw::WqeOpcode *op);
    bool retire_receive(uint16_t counter, void **request_context);
    // After a device removal (under the CQ's poll mutex): retire the oldest outstanding
    // SQ WQE / RQ receive, which no CQE will ever report; false when there is none.
    bool retire_oldest_send(void **request_context, hw::WqeOpcode *op);
    bool retire_oldest_receive(void **request_context);
    Cq *receive_cq() const { return receive_cq_; }
    Cq *initiator_cq() const { return initiator_cq_; }

    std::atomic<bool> connected{false};
    std::atomic<Connector *> connector{nullptr};
    const QpLimits &limits() const { return limits_; }

  protected:
    void on_close() override;
    void on_final() override;

  private:
    struct SendShadow {
        void *request_context;
        uint16_t wqebbs;
        hw::WqeOpcode opcode;
    };
    NTSTATUS fail_post(NTSTATUS status);
    NTSTATUS submit(hw::WqeOpcode op, ULONG flags, uint32_t invalidate_token, std::byte *wqe,
                    uint32_t segments, void *request_context);

    Pd *pd_;
    Cq *receive_cq_;
    Cq *initiator_cq_;
    Srq *srq_;
    void *context_;
    QpLimits limits_;
    uint32_t number_;
    void *memory_;
    size_t memory_bytes_;

    // SQ. The posting thread owns sq_ and writes the shadow slot of a WQE
    // before publishing it; the poller (under the CQ's poll mutex) reads
    // shadows in [sq_retired_, sq_published_) and advances sq_retired_.
    // Ring room is counted from sq_retired_ (completions), not from the
    // device's consumer, so a shadow slot is never reused before its CQE.
    SqProducer sq_;
    std::vector<SendShadow> sq_shadow_;
    std::atomic<uint32_t> sq_published_{0};     // WQEBB count
    std::atomic<uint32_t> sq_retired_{0};       // WQEBB count
    uint32_t sq_posted_wqes_ = 0;               // posting thread only
    std::atomic<uint32_t> sq_retired_wqes_{0};  // WQE count
    bool sq_unrung_ = false;                    // DEFERred WQEs not yet rung

    // RQ (none with an SRQ or a receive depth of 0): receive_queue.hpp.
    std::unique_ptr<ReceiveQueue> rq_;
};

// ---------------------------------------------------------------------------
// SRQ
// ---------------------------------------------------------------------------
class Srq : public Embedded<NDK_SRQ>, public Object {
  public:
    using Public = NDK_SRQ;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeSrq;
    Srq(Adapter *a, Pd *pd, uint32_t number, void *memory, size_t bytes, RqProducer ring,
        uint32_t depth, uint32_t max_sge, NDK_FN_SRQ_NOTIFICATION_CALLBACK callback,
        void *callback_context);
    uint32_t number() const { return number_; }
    Pd *pd() const { return pd_; }
    ReceiveQueue &queue() { return queue_; }
    uint32_t max_sge() const { return max_sge_; }
    // NdkModifySrq (srq.cpp).
    NTSTATUS modify(ULONG depth, ULONG threshold);
    // Event thread: the device reports fewer queued receives than the threshold.
    void limit_reached();

  protected:
    void on_close() override;
    void on_final() override;

  private:
    Pd *pd_;
    uint32_t number_;
    void *memory_;
    size_t memory_bytes_;
    uint32_t max_sge_;
    ReceiveQueue queue_;
    NDK_FN_SRQ_NOTIFICATION_CALLBACK callback_;
    void *callback_context_;
    std::mutex modify_mutex_;  // one kModifySrq at a time
};

// ---------------------------------------------------------------------------
// MR / MW
// ---------------------------------------------------------------------------
class Mr : public Embedded<NDK_MR>, public Object {
  public:
    using Public = NDK_MR;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeMr;
    Mr(Adapter *a, Pd *pd, uint32_t index, uint32_t token, bool fast_register);

    // Registration hands out a new token (the MPT variant changes). For a fast-register
    // MR the token is the one the last NdkFastRegister posted (qp.cpp picks the next
    // variant), so NdkGet*TokenFromMr reflect it as soon as that call returned.
    uint32_t token() const { return token_.load(std::memory_order_acquire); }
    void set_token(uint32_t t) { token_.store(t, std::memory_order_release); }
    bool fast_register() const { return fast_register_; }
    std::mutex mutex;
    bool registered = false;  // under mutex
    bool busy = false;        // register/deregister in progress, under mutex
    uint8_t access = 0;       // hw::AccessFlags of the registration, under mutex
    // NdkInitializeFastRegisterMr's limits (0 pages: not initialised), under mutex.
    ULONG fast_register_pages = 0;
    bool fast_register_remote = false;
    uint32_t index() const { return index_; }

  protected:
    void on_final() override;

  private:
    uint32_t index_;
    std::atomic<uint32_t> token_;
    bool fast_register_;
};

class Mw : public Embedded<NDK_MW>, public Object {
  public:
    using Public = NDK_MW;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeMw;
    Mw(Adapter *a, Pd *pd, uint32_t index, uint32_t token, uint8_t type);

    // 2: NdkCreateMw's (bound through one QP, invalidatable); 1: PD-wide, rebindable,
    // unbound by a zero-length NdkBind (softndk_ext.h).
    uint8_t window_type() const { return type_; }

    // The token the last NdkBind posted (qp.cpp picks the next variant).
    uint32_t token() const { return token_.load(std::memory_order_acquire); }
    void set_token(uint32_t t) { token_.store(t, std::memory_order_release); }
    // True once an NdkBind was posted: NdkGetRemoteTokenFromMw is valid from then on.
    std::atomic<bool> bound{false};

  protected:
    void on_final() override;

  private:
    uint32_t index_;
    std::atomic<uint32_t> token_;
    uint8_t type_;
};

// ---------------------------------------------------------------------------
// Listener / connector
// ---------------------------------------------------------------------------
// A local IP:port many outgoing connections share (NdkCreateSharedEndpoint). Each
// connector connected through it depends on it, so its close pends until they are
// closed (ndkpi-api.md 7.10); the device releases the port when the last goes.
class SharedEndpoint : public Embedded<NDK_SHARED_ENDPOINT>, public Object {
  public:
    using Public = NDK_SHARED_ENDPOINT;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeSharedEndpoint;
    SharedEndpoint(Adapter *a, uint32_t id, const hw::WireSockaddr &bound);
    uint32_t id() const { return id_; }
    const hw::WireSockaddr &bound() const { return bound_; }

  protected:
    void on_final() override;

  private:
    uint32_t id_;
    hw::WireSockaddr bound_;
};
NTSTATUS create_shared_endpoint(Adapter *a, const sockaddr *address, SharedEndpoint **out);

class Listener : public Embedded<NDK_LISTENER>, public Object {
  public:
    using Public = NDK_LISTENER;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeListener;
    Listener(Adapter *a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void *ctx);

    NTSTATUS listen(const sockaddr *address, ULONG length);
    NTSTATUS local_address(PSOCKADDR out, ULONG *length);
    // Event thread: a connection request arrived (already holding this).
    void connect_request(uint32_t connection);
    // NdkControlConnectEvents: while paused, the device refuses incoming requests as
    // if nobody listened. Remembered before NdkListen and applied by it.
    void pause(bool paused);

  protected:
    void on_close() override;

  private:
    NDK_FN_CONNECT_EVENT_CALLBACK callback_;
    void *callback_context_;
    std::mutex mutex_;
    std::mutex pause_mutex_;  // orders kPauseListener commands; taken before mutex_
    bool paused_ = false;     // under mutex_
    bool listening_ = false;  // under mutex_
    uint32_t id_ = hw::kNoObject;
    hw::WireSockaddr bound_{};
};

// The disconnect event callback a consumer gives NdkCompleteConnect/NdkAccept (the
// 1.x form) or NdkCompleteConnectEx/NdkAcceptEx (2.1: with a provider reason).
struct DisconnectNotify {
    NDK_FN_DISCONNECT_EVENT_CALLBACK callback = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK_EX callback_ex = nullptr;
    void *context = nullptr;
    bool empty() const { return callback == nullptr && callback_ex == nullptr; }
    void operator()(ULONG reason) const {
        if (callback_ex != nullptr) {
            callback_ex(context, reason);
        } else if (callback != nullptr) {
            callback(context);
        }
    }
};

// ProviderDisconnectReason of NDK_FN_DISCONNECT_EVENT_CALLBACK_EX (0 = none): the peer
// sent a disconnect request - its NdkDisconnect, its connector's close, or its process
// dying (the device disconnects a dead consumer's connections).
inline constexpr ULONG kDisconnectReasonPeerRequest = 1;

class Connector : public Embedded<NDK_CONNECTOR>, public Object {
  public:
    using Public = NDK_CONNECTOR;
    static constexpr NDK_OBJECT_TYPE kType = NdkObjectTypeConnector;

    enum class State {
        kIdle,        // created, nothing done
        kConnecting,  // NdkConnect pending
        kReplied,     // Connect completed: peer accepted, CompleteConnect/Reject next
        kCompleting,  // NdkCompleteConnect pending
        kRequested,   // passive: delivered by the connect event
        kAccepting,   // NdkAccept pending
        kConnected,
        kDisconnecting,  // NdkDisconnect pending
        kDone,           // rejected, failed, disconnected
    };
    static const char *to_string(State s);

    explicit Connector(Adapter *a);

    // Connection-manager calls (connector.cpp); arguments validated by the slots.
    // `shared`: NdkConnectWithSharedEndpoint (src is then ignored).
    NTSTATUS connect(Qp *qp, SharedEndpoint *shared, const sockaddr *src, const sockaddr *dst,
                     ULONG ird, ULONG ord, const void *pdata, ULONG pdata_len,
                     NDK_FN_REQUEST_COMPLETION cb, void *ctx);
    NTSTATUS complete_connect(DisconnectNotify disconnect, NDK_FN_REQUEST_COMPLETION cb, void *ctx);
    NTSTATUS accept(Qp *qp, ULONG ird, ULONG ord, const void *pdata, ULONG pdata_len,
                    DisconnectNotify disconnect, NDK_FN_REQUEST_COMPLETION cb, void *ctx);
    NTSTATUS reject(const void *pdata, ULONG pdata_len);
    NTSTATUS disconnect(NDK_FN_REQUEST_COMPLETION cb, void *ctx);
    NTSTATUS connection_data(ULONG *ird, ULONG *ord, void *pdata, ULONG *pdata_len);
    NTSTATUS address(bool local, PSOCKADDR out, ULONG *length);

    // Passive side: set up by the listener before the connect event.
    void adopt_incoming(uint32_t connection, Listener *listener);
    // Event thread, holding this: one EQE about our connection.
    void on_event(const hw::Eqe &eqe);
    // Event thread, holding this, after a device removal: every pending request
    // completes STATUS_DEVICE_REMOVED; a connection that was up runs its disconnect
    // callback (reason 0: no peer request, the local device is gone).
    void device_removed();

  protected:
    void on_close() override;
    void on_final() override;

  private:
    struct Pending {
        NDK_FN_REQUEST_COMPLETION callback = nullptr;
        void *context = nullptr;
    };
    // An async request that returned (or will return) STATUS_PENDING holds
    // the connector until its completion has run. start() arms the slot;
    // finish() completes it on the event thread, exactly once; drop() forgets
    // it when the request failed inline (no callback). All under mutex_.
    void start(Pending &slot, NDK_FN_REQUEST_COMPLETION cb, void *ctx);
    void finish(Pending &slot, NTSTATUS status);
    bool drop(Pending &slot);
    // The connection's addresses, IRD/ORD and peer private data (info_) are read from the
    // device with kQueryConnection when a getter asks for them, not when an event changes
    // them: an event only marks them stale (info_changed), so a consumer that never asks
    // costs no round trip. current_info() refreshes stale info; both under mutex_.
    NTSTATUS current_info();
    void info_changed();
    void set_qp(Qp *qp);  // caller holds mutex_

    std::mutex mutex_;
    State state_ = State::kIdle;
    uint32_t connection_ = hw::kNoObject;
    Qp *qp_ = nullptr;
    hw::ConnectionInfo info_{};
    // kNone: no event has said the device has info for connection_ yet; kStale: one has,
    // since info_ was last read; kCurrent: info_ is what the device has.
    enum class InfoState : uint8_t { kNone, kStale, kCurrent };
    InfoState info_state_ = InfoState::kNone;
    Pending connect_, accept_, complete_, disconnect_;
    DisconnectNotify disconnect_event_;
    bool disconnect_event_fired_ = false;
    SharedEndpoint *shared_ = nullptr;  // NdkConnectWithSharedEndpoint; under mutex_
};

// ---------------------------------------------------------------------------
// Dispatch tables (one per object file) and shared slot helpers.
// ---------------------------------------------------------------------------
extern const NDK_ADAPTER_DISPATCH kAdapterDispatch;
extern const NDK_PD_DISPATCH kPdDispatch;
extern const NDK_CQ_DISPATCH kCqDispatch;
extern const NDK_QP_DISPATCH kQpDispatch;
extern const NDK_MR_DISPATCH kMrDispatch;
extern const NDK_MW_DISPATCH kMwDispatch;
extern const NDK_SRQ_DISPATCH kSrqDispatch;
extern const NDK_CONNECTOR_DISPATCH kConnectorDispatch;
extern const NDK_LISTENER_DISPATCH kListenerDispatch;
extern const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch;

// Creates called by the adapter's and PD's slots (in the object's own file).
// Arguments are validated by the slot; these talk to the device.
NTSTATUS create_cq(Adapter *a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void *ctx,
                   Cq **out);
NTSTATUS create_pd(Adapter *a, Pd **out);
// `srq` may be null (the QP gets its own RQ of limits.receive_depth).
NTSTATUS create_qp(Pd *pd, Cq *receive_cq, Cq *initiator_cq, Srq *srq, void *context,
                   const QpLimits &limits, Qp **out);
NTSTATUS create_srq(Pd *pd, ULONG depth, ULONG max_sge, ULONG threshold,
                    NDK_FN_SRQ_NOTIFICATION_CALLBACK cb, void *ctx, Srq **out);
NTSTATUS create_mr(Pd *pd, bool fast_register, Mr **out);
// `type`: 2 for NdkCreateMw, 1 for the SoftNDK extension (softndk_ext.h).
NTSTATUS create_mw(Pd *pd, uint8_t type, Mw **out);
// True if the first `length` bytes the MDL chain describes are virtually contiguous
// (each MDL starts where the previous one ended). mr.cpp.
bool mdl_contiguous(const MDL *mdl, SIZE_T length);
// NdkBuildLAM / NdkReleaseLAM (lam.cpp).
NTSTATUS build_lam(NDK_ADAPTER *adapter, MDL *mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION, PVOID,
                   NDK_LOGICAL_ADDRESS_MAPPING *lam, ULONG *lam_size, ULONG *fbo);
void release_lam(NDK_ADAPTER *adapter, NDK_LOGICAL_ADDRESS_MAPPING *lam);

// NdkQueryExtension for every table: the common answer, no extension (the PD and the
// CQ offer theirs through offer_extension first).
NTSTATUS query_extension(NDK_OBJECT_HEADER *object, GUID *id, NDK_VERSION version,
                         NDK_EXTENSION_INTERFACE *out);
// One of SoftNDK's extensions (softndk_ext.h), offered by an object's NdkQueryExtension:
// its dispatch table for `id` at version major.minor or an older minor; the common
// answer (query_extension) for anything else.
struct ExtensionOffer {
    GUID id;
    USHORT major;
    USHORT minor;
    const void *dispatch;
};
NTSTATUS offer_extension(const ExtensionOffer &offer, NDK_OBJECT_HEADER *object, GUID *id,
                         NDK_VERSION version, NDK_EXTENSION_INTERFACE *out);

// Socket addresses (Linux AF_* numbering, ws2def.h): STATUS_SUCCESS,
// STATUS_INVALID_PARAMETER (NULL, length too short for the family or longer
// than SOCKADDR_STORAGE) or STATUS_INVALID_ADDRESS (family not AF_INET/6).
NTSTATUS check_address(const sockaddr *address, ULONG length);
hw::WireSockaddr to_wire(const sockaddr *address);
// Copies `wire` into (out, *length) with the BUFFER_TOO_SMALL protocol.
NTSTATUS copy_address(const hw::WireSockaddr &wire, PSOCKADDR out, ULONG *length);

}  // namespace softndk::provider
