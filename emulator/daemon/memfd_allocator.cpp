#include "daemon/memfd_allocator.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "device/log.hpp"
#include "device/log_limit.hpp"
#include "device/status.hpp"

namespace softndk::emu::daemon {

namespace {

class MemfdMemory final : public QueueMemory {
  public:
    MemfdMemory(UniqueFd fd, std::unique_ptr<Mapping> mapping,
                std::shared_ptr<MemfdAllocator::Registry> registry)
        : fd_(std::move(fd)), mapping_(std::move(mapping)), registry_(std::move(registry)) {
        std::lock_guard lock(registry_->mutex);
        registry_->fds[address()] = fd_.get();
    }
    ~MemfdMemory() override {
        std::lock_guard lock(registry_->mutex);
        registry_->fds.erase(address());
    }
    std::byte *data() const override { return mapping_->data(); }
    size_t size() const override { return mapping_->size(); }
    hw::MemoryHandle handle() const override {
        return hw::MemoryHandle{hw::kNoFd, 0, 0, size(), address()};
    }

  private:
    uint64_t address() const { return reinterpret_cast<uint64_t>(mapping_->data()); }
    UniqueFd fd_;
    std::unique_ptr<Mapping> mapping_;
    std::shared_ptr<MemfdAllocator::Registry> registry_;
};

}  // namespace

MemfdAllocator::MemfdAllocator() : registry_(std::make_shared<Registry>()) {}

std::unique_ptr<QueueMemory> MemfdAllocator::allocate(size_t bytes) {
    const size_t n = round_up(bytes == 0 ? 1 : bytes, hw::kPageBytes);
    std::string error;
    UniqueFd fd = create_sealed_memfd("softndk-queue", n, kDaemonSeals, error);
    std::unique_ptr<Mapping> mapping;
    if (fd) mapping = Mapping::map(fd.get(), 0, n, error);
    if (!mapping) {
        static LogLimit limit;  // a consumer asking for queue after queue past our fds
        log_limited(logger(Component::kDevice), limit, spdlog::level::warn,
                    "queue memory of {} bytes: {}", n, error);
        return nullptr;
    }
    // ftruncate gave zero-filled pages: nothing to clear.
    return std::make_unique<MemfdMemory>(std::move(fd), std::move(mapping), registry_);
}

int32_t MemfdAllocator::map_registration(const hw::MemoryHandle &handle, uint64_t length,
                                         RegisteredMemory &out) {
    if (handle.fd_index == hw::kNoFd) return status::kInvalidParameter;  // no raw addresses
    std::shared_ptr<const Mapping> mapping;
    {
        std::lock_guard lock(registry_->mutex);
        auto it = registry_->staged.find(handle.embedded_address);
        if (it == registry_->staged.end()) return status::kInvalidParameter;
        mapping = std::move(it->second);
        registry_->staged.erase(it);
    }
    const uint64_t begin = reinterpret_cast<uint64_t>(mapping->data());
    const uint64_t offset = handle.embedded_address - begin;
    if (handle.embedded_address < begin || offset > mapping->size() ||
        length > mapping->size() - offset || handle.bytes < length) {
        return status::kInvalidParameter;
    }
    out.address = mapping->data() + offset;
    out.keepalive = std::move(mapping);
    return status::kSuccess;
}

UniqueFd MemfdAllocator::export_fd(uint64_t address) const {
    std::lock_guard lock(registry_->mutex);
    auto it = registry_->fds.find(address);
    if (it == registry_->fds.end()) return {};
    return UniqueFd(::fcntl(it->second, F_DUPFD_CLOEXEC, 0));
}

void MemfdAllocator::stage_registration(uint64_t address, std::shared_ptr<const Mapping> mapping) {
    std::lock_guard lock(registry_->mutex);
    registry_->staged[address] = std::move(mapping);
}

void MemfdAllocator::unstage_registration(uint64_t address) {
    std::lock_guard lock(registry_->mutex);
    registry_->staged.erase(address);
}

size_t MemfdAllocator::allocations() const {
    std::lock_guard lock(registry_->mutex);
    return registry_->fds.size();
}

}  // namespace softndk::emu::daemon
