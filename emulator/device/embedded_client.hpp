// embedded_client.hpp - DeviceClient over a Device in this process (embedded mode).
//
//   execute()      = Device::execute with this client's context (a function call);
//   map()          = MemoryHandle::embedded_address (same address space), unmap a no-op;
//   ring()         = Device::service(context) on the calling thread: the whole
//                    exchange the doorbell starts (packets, ACKs, CQEs, EQEs) has
//                    happened when it returns;
//   runs_inline()  = true;
//   poll_network() = Fabric::poll_link on the calling thread (the RoCEv2/UDP link's
//                    queued datagrams, received and delivered inline).
// One client holds at most one context (the kAttach it executes). Destroying a
// client that is still attached detaches it, i.e. the device treats it as a dead
// process: everything the context owned is freed and its peers see kDisconnected.
#pragma once

#include <atomic>
#include <memory>

#include "device/device.hpp"
#include "softndk/device_client.hpp"

namespace softndk::emu {

class EmbeddedClient final : public DeviceClient {
  public:
    explicit EmbeddedClient(std::shared_ptr<Device> device);
    ~EmbeddedClient() override;

    int32_t execute(const hw::CommandHeader &request, hw::ResponseHeader &response,
                    size_t response_bytes, std::span<const int> fds = {}) override;
    void *map(const hw::MemoryHandle &handle) override;
    void unmap(void *, size_t) override {}
    void ring() override;
    bool runs_inline() const override { return true; }
    // The device's fabric link, polled on the calling thread (Fabric::poll_link).
    bool poll_network() override { return device_->fabric().poll_link(); }
    void stop_polling_network() override { device_->fabric().stop_polling_link(); }

    uint32_t context() const { return context_.load(std::memory_order_acquire); }
    Device &device() const { return *device_; }

  private:
    std::shared_ptr<Device> device_;
    std::atomic<uint32_t> context_{kNoContext};
};

}  // namespace softndk::emu
