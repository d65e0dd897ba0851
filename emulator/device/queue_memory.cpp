#include "device/queue_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "device/status.hpp"

namespace softndk::emu {
namespace {

class HeapMemory final : public QueueMemory {
  public:
    HeapMemory(std::byte *p, size_t n) : p_(p), n_(n) {}
    ~HeapMemory() override { std::free(p_); }
    std::byte *data() const override { return p_; }
    size_t size() const override { return n_; }
    hw::MemoryHandle handle() const override {
        return hw::MemoryHandle{hw::kNoFd, 0, 0, n_, reinterpret_cast<uint64_t>(p_)};
    }

  private:
    std::byte *p_;
    size_t n_;
};

}  // namespace

std::unique_ptr<QueueMemory> HeapMemoryAllocator::allocate(size_t bytes) {
    const size_t n = round_up(bytes == 0 ? 1 : bytes, hw::kPageBytes);
    auto *p = static_cast<std::byte *>(std::aligned_alloc(hw::kPageBytes, n));
    if (p == nullptr) return nullptr;
    std::memset(p, 0, n);
    return std::make_unique<HeapMemory>(p, n);
}

int32_t MemoryAllocator::map_registration(const hw::MemoryHandle &handle, uint64_t length,
                                          RegisteredMemory &out) {
    if (handle.fd_index != hw::kNoFd) return status::kNotSupported;  // daemon mode only
    if (handle.embedded_address == 0 || handle.bytes < length) return status::kInvalidParameter;
    out.address = reinterpret_cast<std::byte *>(handle.embedded_address);
    out.keepalive = nullptr;
    return status::kSuccess;
}

}  // namespace softndk::emu
