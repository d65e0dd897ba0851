// memfd_allocator.hpp - the daemon's MemoryAllocator (queue_memory.hpp).
//
// Queue memory (rings, doorbell records, control pages, event queues): every
// allocation is its own memfd, sized and sealed (F_SEAL_SHRINK | F_SEAL_GROW |
// F_SEAL_SEAL) at creation and mapped MAP_SHARED here. handle() still reports the
// daemon address in embedded_address (nothing in the device changes); the session
// translates it before the response leaves: export_fd() finds the memfd behind that
// address, the handle gets fd_index = that fd's position and embedded_address = 0.
//
// Registered memory: the session checks the consumer's memfd (seals, size), maps the
// registered range and stages the mapping under its daemon address, then passes the
// request on with embedded_address = that address. map_registration() accepts only a
// staged address (so a consumer can never make the device touch daemon memory it names
// itself) and hands the mapping to the MR's Translation as its keepalive: the range
// stays mapped until the last transfer that passed a key check is done with it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "daemon/memfd.hpp"
#include "device/queue_memory.hpp"

namespace softndk::emu::daemon {

class MemfdAllocator final : public MemoryAllocator {
  public:
    MemfdAllocator();
    std::unique_ptr<QueueMemory> allocate(size_t bytes) override;
    int32_t map_registration(const hw::MemoryHandle &handle, uint64_t length,
                             RegisteredMemory &out) override;

    // A dup of the memfd behind the queue memory mapped at daemon address `address`.
    UniqueFd export_fd(uint64_t address) const;
    // Makes `mapping` available to the next map_registration() naming `address`.
    void stage_registration(uint64_t address, std::shared_ptr<const Mapping> mapping);
    // Drops a staged mapping that was not consumed (the command failed early).
    void unstage_registration(uint64_t address);
    // Live queue-memory allocations (tests, status).
    size_t allocations() const;

    struct Registry {
        mutable std::mutex mutex;
        std::map<uint64_t, int> fds;  // daemon address -> memfd (owned by the QueueMemory)
        std::map<uint64_t, std::shared_ptr<const Mapping>> staged;
    };

  private:
    std::shared_ptr<Registry> registry_;
};

}  // namespace softndk::emu::daemon
