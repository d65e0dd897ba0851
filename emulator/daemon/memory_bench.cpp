// memory_bench - how should a daemon-mode device reach consumer memory? (docs/memory.md)
//
//   (a) registration mirror: pages moved into a memfd once per registration
//       (RegistrationMirror::acquire/release), then the device copies with memcpy
//       through its own mapping of the same file;
//   (b) process_vm_readv/writev: nothing at registration, a system call per access.
// Prints one table: per-size cost of one access under (a) and (b), and the one-off
// registration cost of (a). Medians of repeated runs; a fork()ed child plays the
// consumer. Usage: softndk_daemon_memory_bench [iterations]
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "daemon/registration_mirror.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using softndk::emu::daemon::RegistrationMirror;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class Fn>
double time_ns(int iterations, Fn &&fn) {
    std::vector<double> samples;
    for (int r = 0; r < 7; ++r) {
        const auto t0 = Clock::now();
        for (int i = 0; i < iterations; ++i)
            fn();
        samples.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                          iterations);
    }
    return median(samples);
}

}  // namespace

int main(int argc, char **argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
    if (argc > 2 || iterations <= 0) {
        std::fprintf(stderr, "usage: %s [iterations > 0] (default 200)\n", argv[0]);
        return 2;
    }
    constexpr size_t kMax = 1 << 20;
    const std::vector<size_t> sizes = {64, 4096, 65536, kMax};

    // The consumer: a private buffer, registered (moved into the mirror) for (a).
    auto *buffer = static_cast<char *>(std::aligned_alloc(4096, kMax));
    std::memset(buffer, 0x5a, kMax);
    auto &mirror = RegistrationMirror::instance();
    std::string error;

    std::printf("| size | (a) register: move in + out | (a) device access: memcpy | "
                "(b) process_vm_readv | (b) process_vm_writev |\n");
    std::printf("|---:|---:|---:|---:|---:|\n");
    for (size_t n : sizes) {
        const uint64_t va = reinterpret_cast<uint64_t>(buffer);
        const double reg = time_ns(std::max(1, iterations / 10), [&] {
            if (!mirror.acquire(va, n, error)) std::abort();
            mirror.release(va, n);
        });
        // Keep it registered while the child measures accesses.
        if (!mirror.acquire(va, n, error)) {
            std::fprintf(stderr, "acquire: %s\n", error.c_str());
            return 1;
        }
        // The consumer process: a forked child (same addresses) that just waits. The
        // "device" is this process: it maps the mirror range (a) or reaches into the
        // child (b) - parent -> child, which ptrace_scope=1 allows.
        const pid_t child = ::fork();
        if (child == 0) {
            ::pause();
            _exit(0);
        }
        std::vector<char> local(n);
        void *dev = ::mmap(nullptr, (n + 4095) / 4096 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                           mirror.fd(), static_cast<off_t>(va));
        if (dev == MAP_FAILED) return 1;
        double results[3];
        results[0] = time_ns(iterations, [&] {
            std::memcpy(local.data(), dev, n);
            asm volatile("" ::: "memory");
        });
        ::munmap(dev, (n + 4095) / 4096 * 4096);
        iovec l{local.data(), n}, r{buffer, n};
        bool ok = true;
        results[1] = time_ns(iterations, [&] {
            ok &= ::process_vm_readv(child, &l, 1, &r, 1, 0) == static_cast<ssize_t>(n);
        });
        results[2] = time_ns(iterations, [&] {
            ok &= ::process_vm_writev(child, &l, 1, &r, 1, 0) == static_cast<ssize_t>(n);
        });
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        mirror.release(va, n);
        if (!ok) {
            std::perror("process_vm_readv/writev");
            return 1;
        }
        std::printf("| %zu | %.0f ns | %.0f ns (%.2f GB/s) | %.0f ns (%.2f GB/s) | %.0f ns (%.2f GB/s) |\n",
                    n, reg, results[0], n / results[0], results[1], n / results[1], results[2],
                    n / results[2]);
    }
    std::free(buffer);
    return 0;
}
