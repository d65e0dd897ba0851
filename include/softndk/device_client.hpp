// device_client.hpp - how the provider reaches a virtual RNIC.
//
// The provider talks to the device through exactly two channels, as a driver
// talks to hardware:
//   - shared memory (rings, doorbell records, the control page, the event
//     queue), identical in both modes and described in hw_interface.hpp;
//   - this interface, for the three things that differ between modes:
//     issuing a slow-path command, mapping memory the device handed over, and
//     making the device notice a doorbell.
//
// Two implementations exist:
//   - embedded (the default): the device lives in this process. execute() is a
//     function call; ring() runs the device's doorbell service inline on the
//     calling thread, so a post completes its whole transfer before returning
//     (the fastest "NIC" this machine can offer: no thread hop);
//   - daemon (`softndk rnic`): execute() is a request/response over the
//     Unix-domain control socket with file descriptors passed alongside;
//     ring() follows the shadow-doorbell protocol and costs a system call only
//     when the device thread sleeps.
// SOFTNDK_MODE=embedded|daemon chooses; see open_device_client().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "softndk/hw_interface.hpp"

namespace softndk {

class DeviceClient {
  public:
    virtual ~DeviceClient() = default;

    // Sends one command (a request struct from hw_interface.hpp §11) and waits
    // for its response, which is written to `response` (response_bytes long).
    // `fds` are passed with the request in daemon mode and ignored embedded.
    // Returns the NTSTATUS from the response header, or STATUS_DEVICE_REMOVED if
    // the device is gone (daemon died). Thread-safe.
    virtual int32_t execute(const hw::CommandHeader &request, hw::ResponseHeader &response,
                            size_t response_bytes, std::span<const int> fds = {}) = 0;

    // Maps memory named by a MemoryHandle of the LAST response received on
    // this thread. Embedded: returns embedded_address. Returns nullptr on
    // failure. unmap() undoes it (a no-op embedded).
    virtual void *map(const hw::MemoryHandle &handle) = 0;
    virtual void unmap(void *address, size_t bytes) = 0;

    // Called after the provider published a producer count or an arm and set
    // the matching bit in the context's doorbell bitmap.
    virtual void ring() = 0;

    // True when ring() does the device's work on the caller's thread.
    virtual bool runs_inline() const = 0;

    // Network input driven by a polling consumer. The provider calls poll_network()
    // when a poll of a CQ finds nothing: embedded, with a RoCEv2/UDP link
    // (SOFTNDK_FABRIC=udp), it receives on the calling thread, without blocking, what
    // the link has queued and runs the device on it, so the packet that completes a
    // request is handled by the thread that waits for it, with no thread hand-off
    // (Fabric::poll_link); true if anything arrived. The provider calls
    // stop_polling_network() when the consumer is about to sleep instead (it arms a
    // CQ): the link's own thread receives again at once. Elsewhere (daemon mode, no
    // link) there is nothing to receive: false, and a no-op.
    virtual bool poll_network() { return false; }
    virtual void stop_polling_network() {}

    // Device removal: calls `on_removed` once, on a thread of the client's own, as soon
    // as the device is gone for good (daemon mode: the daemon died or closed the
    // session; from then on execute() returns STATUS_DEVICE_REMOVED). The callback must
    // not block: it hands the work to another thread. An empty function stops watching;
    // when that call returns no callback runs or will run. The embedded device lives as
    // long as the process and is never removed: the default does nothing.
    virtual void watch_removal(std::function<void()> on_removed) { (void)on_removed; }
};

// Opens a client for the adapter with interface index `if_index`, in the mode
// chosen by SOFTNDK_MODE (default embedded). Returns nullptr with `error` set
// when the adapter does not exist or the daemon cannot be reached.
std::unique_ptr<DeviceClient> open_device_client(uint32_t if_index, std::string &error);

}  // namespace softndk
