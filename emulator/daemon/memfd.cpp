#include "daemon/memfd.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "softndk/hw_interface.hpp"

namespace softndk::emu::daemon {

static_assert(kRequiredSeals == F_SEAL_SHRINK);
static_assert(kDaemonSeals == (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW));

void UniqueFd::reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

UniqueFd create_sealed_memfd(const char *name, uint64_t bytes, unsigned seals, std::string &error) {
    UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd) {
        error = std::string("memfd_create: ") + std::strerror(errno);
        return {};
    }
    if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
        error = std::string("ftruncate: ") + std::strerror(errno);
        return {};
    }
    if (seals != 0 && ::fcntl(fd.get(), F_ADD_SEALS, seals) != 0) {
        error = std::string("F_ADD_SEALS: ") + std::strerror(errno);
        return {};
    }
    return fd;
}

bool require_seals(int fd, unsigned seals, uint64_t min_bytes, std::string &error) {
    const int have = ::fcntl(fd, F_GET_SEALS);
    if (have < 0) {
        error = "not a sealable memfd";
        return false;
    }
    if ((static_cast<unsigned>(have) & seals) != seals) {
        error = "memfd is not sealed against shrinking";
        return false;
    }
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        error = "memfd is not a regular file";
        return false;
    }
    if (static_cast<uint64_t>(st.st_size) < min_bytes) {
        error = "memfd is smaller than the range it should back";
        return false;
    }
    return true;
}

std::unique_ptr<Mapping> Mapping::map(int fd, uint64_t offset, uint64_t bytes, std::string &error) {
    if (bytes == 0 || offset % hw::kPageBytes != 0) {
        error = "bad mapping range";
        return nullptr;
    }
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                     static_cast<off_t>(offset));
    if (p == MAP_FAILED) {
        error = std::string("mmap: ") + std::strerror(errno);
        return nullptr;
    }
    return std::unique_ptr<Mapping>(new Mapping(static_cast<std::byte *>(p), bytes));
}

Mapping::~Mapping() {
    ::munmap(data_, size_);
}

}  // namespace softndk::emu::daemon
