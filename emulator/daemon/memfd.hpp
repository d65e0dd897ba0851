// memfd.hpp - sealed shared memory for daemon mode (hw_interface.hpp §9, §11).
//
// Everything the daemon and a consumer process both touch is a memfd:
//   - queue memory, control pages and event queues are created BY THE DAEMON
//     (MemfdAllocator), sized once and sealed F_SEAL_SHRINK | F_SEAL_GROW |
//     F_SEAL_SEAL before the fd leaves the process;
//   - registered memory is created by the CONSUMER (registration_mirror.hpp) and
//     sealed at least against shrinking.
// A process that maps a file it did not create first checks its seals
// (require_seals): a peer that could shrink the file could make every access
// to a mapped page past the new end raise SIGBUS. A hole punched into the file
// (fallocate) is harmless: shmem fills it with a zero page on the next touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace softndk::emu::daemon {

inline constexpr unsigned kRequiredSeals = 0x0002;  // F_SEAL_SHRINK (fcntl.h)
inline constexpr unsigned kDaemonSeals = 0x0001 | 0x0002 | 0x0004;  // SEAL | SHRINK | GROW

// Owns one file descriptor (-1 = none). Move-only.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd &&o) noexcept : fd_(o.release()) {}
    UniqueFd &operator=(UniqueFd &&o) noexcept {
        if (this != &o) reset(o.release());
        return *this;
    }
    ~UniqueFd() { reset(); }
    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release() {
        const int f = fd_;
        fd_ = -1;
        return f;
    }
    void reset(int fd = -1);

  private:
    int fd_ = -1;
};

// memfd_create(MFD_CLOEXEC | MFD_ALLOW_SEALING) + ftruncate(bytes) + F_ADD_SEALS(seals).
// Returns an invalid fd with `error` set on failure.
UniqueFd create_sealed_memfd(const char *name, uint64_t bytes, unsigned seals, std::string &error);

// True if `fd` is a memfd/shmem file whose seals include all of `seals` and whose
// size is at least `min_bytes`. Otherwise false with `error` saying why.
bool require_seals(int fd, unsigned seals, uint64_t min_bytes, std::string &error);

// A MAP_SHARED read/write mapping; munmap on destruction.
class Mapping {
  public:
    // Maps `bytes` (> 0) of `fd` at file offset `offset` (page-aligned). nullptr on failure.
    static std::unique_ptr<Mapping> map(int fd, uint64_t offset, uint64_t bytes, std::string &error);
    ~Mapping();
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    std::byte *data() const { return data_; }
    size_t size() const { return size_; }

  private:
    Mapping(std::byte *d, size_t n) : data_(d), size_(n) {}
    std::byte *data_;
    size_t size_;
};

}  // namespace softndk::emu::daemon
