// registration_mirror.hpp - how a daemon-mode consumer shares registered memory
// with the device ("DMA", DESIGN.md §3; docs/memory.md has the measurements).
//
// The device runs in another process, so registered pages must be reachable from
// there at memcpy speed. At registration the client MOVES the pages of the range into
// one process-wide memfd, the mirror, transparently to the consumer:
//
//   mirror   a memfd of 2^47 bytes (sparse: only moved pages use memory), sealed
//            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL. File offset == virtual
//            address: page P of the process lives at offset P.
//   acquire  for every page of [va, va + length) not already moved (refcount 0):
//            map the mirror at offset P somewhere, copy the page's bytes there, then
//            mremap that mapping over P (MAP_SHARED, same address, same bytes). Pages
//            already moved just gain a reference. The daemon then maps
//            [page(va), page_end(va + length)) of the same fd.
//   release  when a page's last registration goes, the page is moved back into
//            private anonymous memory (copy + mremap) and its hole punched out of
//            the mirror, so the process is as it was and the file frees the memory.
//
// Because offset == address, two registrations sharing a page (sub-page buffers
// side by side) share the file page automatically, adjacent moved ranges merge into
// one VMA, and a registration always is ONE contiguous file range, whatever mix of
// already-moved and new pages it spans.
//
// Caveats (docs/memory.md):
//   - a thread writing to a page WHILE that page is being moved (registration or last
//     deregistration of a range that shares the page) may lose that write;
//   - registered pages are MAP_SHARED: a fork()ed child shares them with the parent
//     (not copy-on-write) until the last registration goes;
//   - memory that is not private anonymous (a file mapping, another shm) is copied
//     into the mirror all the same: writes by the device then go to the mirror, not
//     to that file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "daemon/memfd.hpp"

namespace softndk::emu::daemon {

class RegistrationMirror {
  public:
    static constexpr uint64_t kMirrorBytes = uint64_t{1} << 47;

    // The process-wide mirror (created on first use).
    static RegistrationMirror &instance();

    // Moves the pages of [va, va + length) into the mirror (or references them).
    // False with `error` set if the range is not mapped, wraps, or lies beyond the
    // mirror. On success the fd (fd()) at file offset `va` backs the range.
    bool acquire(uint64_t va, uint64_t length, std::string &error);
    // Drops the references acquire() took; pages whose count reaches 0 go back to
    // private memory.
    void release(uint64_t va, uint64_t length);

    int fd() const { return fd_.get(); }
    // Pages currently moved (tests).
    size_t moved_pages() const;

  private:
    RegistrationMirror();
    bool move_in(uint64_t page, uint64_t bytes, std::string &error);
    void move_out(uint64_t page, uint64_t bytes);

    UniqueFd fd_;
    std::string create_error_;
    mutable std::mutex mutex_;
    std::map<uint64_t, uint32_t> refs_;  // page address -> registrations covering it
};

}  // namespace softndk::emu::daemon
