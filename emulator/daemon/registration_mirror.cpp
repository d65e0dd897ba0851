#include "daemon/registration_mirror.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "device/queue_memory.hpp"

namespace softndk::emu::daemon {

namespace {
constexpr uint64_t kPage = hw::kPageBytes;

// Runs of consecutive pages in [first, end) for which pred(page) holds.
template <class Pred, class Fn>
bool for_each_run(uint64_t first, uint64_t end, Pred &&pred, Fn &&fn) {
    uint64_t p = first;
    while (p < end) {
        if (!pred(p)) {
            p += kPage;
            continue;
        }
        const uint64_t start = p;
        while (p < end && pred(p))
            p += kPage;
        if (!fn(start, p - start)) return false;
    }
    return true;
}
}  // namespace

RegistrationMirror &RegistrationMirror::instance() {
    static RegistrationMirror mirror;
    return mirror;
}

RegistrationMirror::RegistrationMirror() {
    fd_ = create_sealed_memfd("softndk-registered", kMirrorBytes, kDaemonSeals, create_error_);
}

size_t RegistrationMirror::moved_pages() const {
    std::lock_guard lock(mutex_);
    return refs_.size();
}

namespace {

// Copies whole pages of this process: a registered range is page-rounded, so the
// copy also reads whatever shares its first and last page (other heap objects,
// allocator metadata, ASan redzones). The kernel does the copy
// (process_vm_readv on ourselves), so those bytes are read as the MMU sees them
// and no sanitizer reports a read outside the consumer's buffer that is meant.
void copy_pages(void *to, const void *from, uint64_t bytes) {
    iovec local{to, bytes};
    iovec remote{const_cast<void *>(from), bytes};
    if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes)) {
        return;
    }
    std::memcpy(to, from, bytes);  // e.g. process_vm_readv refused by a seccomp filter
}

}  // namespace

bool RegistrationMirror::move_in(uint64_t page, uint64_t bytes, std::string &error) {
    auto *at = reinterpret_cast<void *>(page);
    // mincore fails with ENOMEM if any page of the range is unmapped: never copy from
    // (and never map over) memory the consumer does not have.
    std::vector<unsigned char> residency(bytes / kPage);
    if (::mincore(at, bytes, residency.data()) != 0) {
        error = "registered range is not mapped";
        return false;
    }
    void *staging = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(),
                           static_cast<off_t>(page));
    if (staging == MAP_FAILED) {
        error = std::string("mmap of the registration mirror: ") + std::strerror(errno);
        return false;
    }
    copy_pages(staging, at, bytes);
    if (::mremap(staging, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
        error = std::string("mremap over the registered range: ") + std::strerror(errno);
        ::munmap(staging, bytes);
        return false;
    }
    return true;
}

void RegistrationMirror::move_out(uint64_t page, uint64_t bytes) {
    auto *at = reinterpret_cast<void *>(page);
    void *fresh = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) return;  // keep the page shared: still correct, just not freed
    copy_pages(fresh, at, bytes);
    if (::mremap(fresh, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
        ::munmap(fresh, bytes);
        return;
    }
    ::fallocate(fd_.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(page),
                static_cast<off_t>(bytes));
}

bool RegistrationMirror::acquire(uint64_t va, uint64_t length, std::string &error) {
    if (!fd_) {
        error = "registration mirror: " + create_error_;
        return false;
    }
    if (length == 0 || va == 0 || va >= kMirrorBytes || length > kMirrorBytes - va) {
        error = "registered range outside the registration mirror";
        return false;
    }
    const uint64_t first = va & ~(kPage - 1);
    const uint64_t end = round_up(va + length, kPage);
    std::lock_guard lock(mutex_);
    std::vector<std::pair<uint64_t, uint64_t>> moved;
    const bool ok = for_each_run(
        first, end, [&](uint64_t p) { return !refs_.contains(p); },
        [&](uint64_t start, uint64_t bytes) {
            if (!move_in(start, bytes, error)) return false;
            moved.emplace_back(start, bytes);
            return true;
        });
    if (!ok) {
        for (auto [start, bytes] : moved)
            move_out(start, bytes);
        return false;
    }
    for (uint64_t p = first; p < end; p += kPage)
        ++refs_[p];
    return true;
}

void RegistrationMirror::release(uint64_t va, uint64_t length) {
    if (length == 0 || va == 0 || va >= kMirrorBytes || length > kMirrorBytes - va) return;
    const uint64_t first = va & ~(kPage - 1);
    const uint64_t end = round_up(va + length, kPage);
    std::lock_guard lock(mutex_);
    std::vector<bool> freed((end - first) / kPage, false);
    for (uint64_t p = first; p < end; p += kPage) {
        auto it = refs_.find(p);
        if (it != refs_.end() && --it->second == 0) {
            refs_.erase(it);
            freed[(p - first) / kPage] = true;
        }
    }
    for_each_run(
        first, end, [&](uint64_t p) { return freed[(p - first) / kPage]; },
        [&](uint64_t start, uint64_t bytes) {
            move_out(start, bytes);
            return true;
        });
}

}  // namespace softndk::emu::daemon
