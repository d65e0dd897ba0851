// queue_memory.hpp - memory the device allocates for queues and hands to the
// provider (hw_interface.hpp §9: "like ICM").
//
// A QueueMemory is one zero-filled, page-aligned allocation that stays at a
// fixed address and size for its whole life; the object that owns it (a QP,
// CQ or context) frees it on destruction. handle() describes it to the
// provider. Embedded mode uses HeapMemoryAllocator (plain heap memory,
// fd_index = kNoFd, embedded_address = the pointer). Daemon mode will plug in
// an allocator returning sealed memfds mapped into the device (fd_index set
// per response); nothing above this interface changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "softndk/hw_interface.hpp"

namespace softndk::emu {

class QueueMemory {
  public:
    virtual ~QueueMemory() = default;
    virtual std::byte *data() const = 0;
    virtual size_t size() const = 0;
    virtual hw::MemoryHandle handle() const = 0;
};

// Registered memory (kRegisterMr): the device-side address of the first byte a
// RegisterMrRequest's MemoryHandle names, and what keeps it reachable. The MR's
// Translation holds `keepalive` for as long as any transfer may use the range
// (daemon mode: the mapping of the consumer's memfd; embedded: nothing).
struct RegisteredMemory {
    std::byte *address = nullptr;
    std::shared_ptr<const void> keepalive;
};

class MemoryAllocator {
  public:
    virtual ~MemoryAllocator() = default;
    // nullptr if the memory cannot be had. `bytes` is rounded up to whole pages.
    virtual std::unique_ptr<QueueMemory> allocate(size_t bytes) = 0;
    // Resolves the MemoryHandle of a registration of `length` bytes. Returns an NTSTATUS.
    // Default (embedded): fd_index must be kNoFd (else STATUS_NOT_SUPPORTED) and
    // embedded_address non-null with bytes >= length (else STATUS_INVALID_PARAMETER).
    virtual int32_t map_registration(const hw::MemoryHandle &handle, uint64_t length,
                                     RegisteredMemory &out);
};

class HeapMemoryAllocator final : public MemoryAllocator {
  public:
    std::unique_ptr<QueueMemory> allocate(size_t bytes) override;
};

constexpr uint64_t round_up(uint64_t v, uint64_t align) {
    return (v + align - 1) / align * align;
}

}  // namespace softndk::emu
