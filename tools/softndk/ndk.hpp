// ndk.hpp - the NDK objects `softndk` uses, reached the way a kernel consumer
// reaches them (WskRegister -> WskCaptureProviderNPI -> WskControlClient ->
// WskOpenNdkAdapter) and used only through the public dispatch tables of
// ndkpi.h. Every asynchronous call is made synchronous with a KEVENT (the
// completion may come inline or after STATUS_PENDING); a failure throws
// NdkError, which carries the call and the NTSTATUS.
//
// Threads: an Endpoint is used by one thread at a time (the perf driver runs
// both ends of a connection on one thread). Consumer callbacks run on the
// provider's event thread and only set events.
//
// Model time: an Endpoint asks its CQ for SoftNDK's model-time extension
// (softndk_ext.h). A provider without it (a real one answers
// STATUS_NOT_SUPPORTED) leaves model_time() null; the wall-clock path never
// needs it.
#pragma once

#include <ndkpi.h>
#include <ntddk.h>
#include <softndk_ext.h>
#include <ws2ipdef.h>
#include <wsk.h>
#include <wskndk.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "softndk_adapters.h"

namespace softndk::tool {

// "<call> failed: STATUS_NAME (0x........)".
class NdkError : public std::runtime_error {
  public:
    NdkError(const std::string &call, NTSTATUS status);
    NTSTATUS status() const { return status_; }

  private:
    NTSTATUS status_;
};

// "STATUS_NAME (0x........)".
std::string status_text(NTSTATUS status);

// "RoCEv2", "iWARP", ... ("Unknown" outside the enum).
const char *technology_name(NDK_RDMA_TECHNOLOGY technology);

// Throws NdkError unless NT_SUCCESS(status).
void check(NTSTATUS status, const char *call);

// The length NDK calls take with an address of a's family (sockaddr_in or sockaddr_in6).
ULONG sockaddr_length(const sockaddr_storage &a);
// Sets a's port (host order in, network order stored).
void set_port(sockaddr_storage &a, uint16_t port);

// One WSK client registration with the NDK extension's dispatch table copied
// out of WskControlClient.
class WskClient {
  public:
    WskClient();  // throws NdkError
    ~WskClient();
    WskClient(const WskClient &) = delete;
    WskClient &operator=(const WskClient &) = delete;

    // WskOpenNdkAdapter at the highest version the provider and the adapter
    // offer: {2, 0} (the provider runs it at 2.1), else {1, 0} (1.2). The
    // version negotiated is NDK_ADAPTER_INFO.Version. Throws.
    NDK_ADAPTER *open(NET_IFINDEX if_index) const;
    // WskCloseNdkAdapter: blocks until every callback of the adapter returned.
    void close(NDK_ADAPTER *adapter) const;

  private:
    WSK_CLIENT_DISPATCH client_dispatch_{};
    WSK_CLIENT_NPI client_npi_{};
    WSK_REGISTRATION registration_{};
    WSK_PROVIDER_NPI provider_npi_{};
    WSK_PROVIDER_NDK_DISPATCH ndk_{};
    bool captured_ = false;
};

// NdkQueryAdapterInfo. Throws.
NDK_ADAPTER_INFO query_adapter_info(NDK_ADAPTER *adapter);

// A one-shot completion the provider's thread signals and this thread waits
// for. Must outlive the request it was passed to; Endpoint keeps its own.
struct Completion {
    KEVENT event;
    NTSTATUS status = STATUS_PENDING;
    NDK_OBJECT_HEADER *object = nullptr;

    Completion();
    void reset();
    // The final status of a call that returned `inline_status`.
    NTSTATUS finish(NTSTATUS inline_status);

    static VOID on_request(PVOID context, NTSTATUS status);
    static VOID on_create(PVOID context, NTSTATUS status, NDK_OBJECT_HEADER *object);
    static VOID on_close(PVOID context);
};

struct EndpointOptions {
    ULONG qp_count = 1;         // QPs (one connection each), all on the one CQ
    ULONG receive_depth = 1;    // receives each QP can hold
    ULONG initiator_depth = 1;  // send-queue work requests in flight, per QP
    ULONG inline_bytes = 0;     // QP InlineDataSize
    size_t buffer_bytes = 0;    // registered buffer (local write, remote read and write)
};

// What an end tells its peer in the connection's private data: where its
// buffer is and the token to reach it with.
// In two processes (`softndk ib_write_bw` and `softndk ib_write_bw HOST`) it
// also carries the test each end was started for, so that a mismatch is an
// error at connection time rather than a hang.
struct BufferInfo {
    uint32_t magic = 0;
    uint32_t token = 0;
    uint64_t address = 0;
    uint64_t bytes = 0;
    uint32_t test = 0;  // the caller's: perf.cpp encodes verb, mode and flags
    uint32_t qp_count = 0;
    uint64_t max_size = 0;  // the largest message
    uint64_t iterations = 0;
};

// One end of `qp_count` connections: adapter, PD, one CQ for every queue (sized
// for all of them at once), the QPs, and one buffer from non-paged pool
// registered through an MDL that every QP uses.
class Endpoint {
  public:
    Endpoint(const WskClient &wsk, const softndk_adapter &adapter, const EndpointOptions &options);
    ~Endpoint();  // disconnects and closes everything, children first
    Endpoint(const Endpoint &) = delete;
    Endpoint &operator=(const Endpoint &) = delete;

    const softndk_adapter &adapter() const { return adapter_; }
    const NDK_ADAPTER_INFO &info() const { return info_; }
    uint8_t *buffer() const { return buffer_; }
    size_t buffer_bytes() const { return options_.buffer_bytes; }
    uint32_t remote_token() const { return remote_token_; }
    uint64_t address(size_t offset) const { return reinterpret_cast<uintptr_t>(buffer_) + offset; }
    BufferInfo buffer_info() const;
    // What buffer_info() adds for the peer: the test this end runs (BufferInfo).
    void set_test(uint32_t test, uint64_t max_size, uint64_t iterations) {
        test_ = test;
        max_size_ = max_size;
        iterations_ = iterations;
    }

    size_t qp_count() const { return connections_.size(); }

    // Work requests on QP `qp` (< qp_count()). Return the provider's inline status.
    NTSTATUS post_receive(size_t qp, void *context, size_t offset, ULONG length);
    NTSTATUS post_send(size_t qp, void *context, size_t offset, ULONG length, ULONG flags);
    NTSTATUS post_write(size_t qp, void *context, size_t offset, ULONG length,
                        uint64_t remote_address, uint32_t remote_token, ULONG flags);
    NTSTATUS post_read(size_t qp, void *context, size_t offset, ULONG length,
                       uint64_t remote_address, uint32_t remote_token, ULONG flags);
    ULONG poll(NDK_RESULT *results, ULONG capacity) {
        return cq_->Dispatch->NdkGetCqResults(cq_, results, capacity);
    }

    // The model-time extension of the CQ, or nullptr if the provider has none.
    const SOFTNDK_MODEL_TIME_DISPATCH *model_time() const { return model_time_; }
    // NdkGetCqResults that also stores each result's model completion time (ns)
    // in times[i]. Requires model_time().
    ULONG poll_with_times(NDK_RESULT *results, ULONG64 *times, ULONG capacity) {
        return model_time_->SoftNdkGetCqResultsWithTime(cq_, results, times, capacity);
    }
    // The consumer's clock in model time (ns). Requires model_time().
    uint64_t model_now() const { return model_time_->SoftNdkGetModelTime(cq_); }
    // SOFTNDK_TIME_MODE_FUNCTIONAL or _PACED. Requires model_time().
    ULONG time_mode() const { return model_time_->SoftNdkGetTimeMode(cq_); }
    // The adapter's device counter `name` (SoftNdkQueryCounter), nullopt if the
    // device does not have it.
    std::optional<uint64_t> counter(const char *name) const;

    // The first connection (after connect_pair()); every connection joins the
    // same two adapters' addresses and buffers, only the ports differ.
    const sockaddr_storage &local_address() const { return connections_.front()->local; }
    const sockaddr_storage &peer_address() const { return connections_.front()->peer; }
    const BufferInfo &peer_buffer() const { return connections_.front()->peer_buffer; }

    // CQ events (-e): arm_cq() asks for a notification on the next completion
    // (NdkArmCq ANY); wait_cq_event() waits at most `ms` for a notification of
    // ANY Endpoint's CQ (one process-wide event: an end waiting may be woken by
    // the other end's CQ, and then polls again) and clears it.
    void arm_cq() { cq_->Dispatch->NdkArmCq(cq_, NDK_CQ_NOTIFY_ANY); }
    static void wait_cq_event(int ms);

    // True once the peer of any connection disconnected (its disconnect event).
    bool peer_disconnected() const;

    // Two processes. The server's half: listens on `address` (its adapter's,
    // with the ND port) and accepts one connection request per QP, in order,
    // waiting as long as it takes; exchanges BufferInfo as private data.
    void accept_all(const sockaddr_storage &address, ULONG read_limit);
    // The client's half: connects QP i to the listener at `server` from this
    // adapter's first address of the same family. A request refused or not
    // answered (no listener yet: STATUS_CONNECTION_REFUSED, STATUS_IO_TIMEOUT)
    // is retried with a fresh connector until `retry_ms` have passed; then the
    // last failure is thrown.
    void connect_all(const sockaddr_storage &server, ULONG read_limit, int retry_ms);

    // Connects QP i of `client` to QP i of `server`, one connection after the
    // other: the server listens on its adapter's address at ND port `port`,
    // both exchange BufferInfo as private data and ask for `read_limit` reads
    // in flight each way (capped by the adapters). Both ends must have the same
    // qp_count(). All on this thread. Throws.
    friend void connect_pair(Endpoint &client, Endpoint &server, uint16_t port, ULONG read_limit);
    // Graceful disconnect of every connection from the client's side
    // (NdkDisconnect), then all connectors are closed. Failures are logged,
    // not thrown.
    friend void disconnect_pair(Endpoint &client, Endpoint &server);

  private:
    // One QP and its connection. Heap-allocated so that the events and
    // completions the provider signals never move.
    struct Connection {
        Connection();
        NDK_QP *qp = nullptr;
        NDK_CONNECTOR *connector = nullptr;
        bool connected = false;
        KEVENT peer_gone;  // the peer disconnected
        // Kept here, not on a stack, so that a request still pending when an
        // exception unwinds completes into live memory (closing waits for it).
        Completion connect_done, accept_done;
        sockaddr_storage local{}, peer{};
        BufferInfo peer_buffer{};
    };

    NDK_SGE sge(size_t offset, ULONG length) const;
    NDK_QP *qp(size_t index) const { return connections_.at(index)->qp; }
    void destroy() noexcept;
    static VOID on_cq_notification(PVOID context, NTSTATUS status);
    static VOID on_connect_event(PVOID context, NDK_CONNECTOR *connector);
    static VOID on_disconnect_event(PVOID context);
    static void read_connection(Connection &connection);
    static void disconnect_and_close(Connection &connection) noexcept;

    const WskClient &wsk_;
    softndk_adapter adapter_;
    EndpointOptions options_;
    NDK_ADAPTER *ndk_adapter_ = nullptr;
    NDK_ADAPTER_INFO info_{};
    NDK_PD *pd_ = nullptr;
    NDK_CQ *cq_ = nullptr;
    const SOFTNDK_MODEL_TIME_DISPATCH *model_time_ = nullptr;
    std::vector<std::unique_ptr<Connection>> connections_;
    NDK_MR *mr_ = nullptr;
    bool registered_ = false;
    PMDL mdl_ = nullptr;
    uint8_t *buffer_ = nullptr;
    uint32_t local_token_ = 0;
    uint32_t remote_token_ = 0;
    uint32_t test_ = 0;
    uint64_t max_size_ = 0;
    uint64_t iterations_ = 0;

    NDK_LISTENER *listener_ = nullptr;
    KEVENT connect_event_;               // listener: a connection request arrived
    NDK_CONNECTOR *incoming_ = nullptr;  // written before connect_event_ is set
};

void connect_pair(Endpoint &client, Endpoint &server, uint16_t port, ULONG read_limit);
void disconnect_pair(Endpoint &client, Endpoint &server);

}  // namespace softndk::tool
