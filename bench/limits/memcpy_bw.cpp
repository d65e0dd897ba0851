// memcpy_bw - the memcpy bandwidth of this machine, the ceiling a copying data path
// can reach. bench/run.sh prints it in its header and measures the 1 MiB RDMA
// bandwidth targets against it.
//
//   softndk_memcpy_bw [--runs N] [--run-ms MS] [--copy-bytes B] [--cold-mib MIB]
//
// One thread, std::memcpy of --copy-bytes (default 1 MiB) at a time:
//   hot   the same source/destination buffer pair every copy, so both stay in the
//         caches (2 MiB of working set for 1 MiB copies);
//   cold  the copies walk in order through two pools, each larger than the last-level
//         cache (default: 4 x the LLC, at least 64 MiB), so every copy reads and
//         writes lines that have left the caches.
// Each run copies for --run-ms milliseconds (default 100); the figure of a run is the
// bytes copied over the run's wall time (CLOCK_MONOTONIC), in GB/s = 1e9 B/s (the
// memory traffic is about twice that: a read and a write of each byte).
//
// Output, one line per kind after a '#' comment line (bench/run.sh reads it with awk):
//   kind copy_bytes working_set_bytes gbps_median gbps_min gbps_max
// Exit status: 0, or 2 on a bad argument, 1 if the buffers cannot be allocated.

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Options {
    int runs = 7;
    long run_ms = 100;
    std::size_t copy_bytes = std::size_t{1} << 20;
    std::size_t cold_pool_bytes = 0;  // 0: from the LLC size
};

[[noreturn]] void usage_error(const char *what) {
    std::fprintf(stderr,
                 "softndk_memcpy_bw: %s\nusage: softndk_memcpy_bw [--runs N] [--run-ms MS] "
                 "[--copy-bytes B] [--cold-mib MIB]\n",
                 what);
    std::exit(2);
}

long parse_positive(const char *text, const char *option) {
    char *end = nullptr;
    errno = 0;
    long value = std::strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value <= 0) usage_error(option);
    return value;
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (i + 1 >= argc) usage_error(argv[i]);
        const char *value = argv[++i];
        if (arg == "--runs")
            o.runs = int(parse_positive(value, "--runs"));
        else if (arg == "--run-ms")
            o.run_ms = parse_positive(value, "--run-ms");
        else if (arg == "--copy-bytes")
            o.copy_bytes = std::size_t(parse_positive(value, "--copy-bytes"));
        else if (arg == "--cold-mib")
            o.cold_pool_bytes = std::size_t(parse_positive(value, "--cold-mib")) << 20;
        else
            usage_error(argv[i - 1]);
    }
    return o;
}

// The largest data or unified cache of CPU 0 (sysfs "32768K"), 0 if unknown. sysfs
// rather than sysconf(_SC_LEVEL3_CACHE_SIZE): in a VM glibc may report the whole
// socket's L3, while one thread sees its own CCX's.
std::size_t last_level_cache_bytes() {
    std::size_t largest = 0;
    for (int index = 0; index < 8; ++index) {
        std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
        std::ifstream type_file(dir + "/type"), size_file(dir + "/size");
        std::string type, size;
        if (!(type_file >> type) || !(size_file >> size)) continue;
        if (type == "Instruction") continue;
        std::size_t bytes = std::strtoull(size.c_str(), nullptr, 10);
        if (size.back() == 'K') bytes <<= 10;
        if (size.back() == 'M') bytes <<= 20;
        largest = std::max(largest, bytes);
    }
    if (largest == 0) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) largest = std::size_t(l3);
    }
    return largest;
}

// Anonymous memory, faulted in (a first-touch page fault is not a copy's cost).
char *allocate(std::size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::fprintf(stderr, "softndk_memcpy_bw: mmap of %zu bytes: %s\n", bytes,
                     std::strerror(errno));
        std::exit(1);
    }
    std::memset(p, 0x5a, bytes);
    return static_cast<char *>(p);
}

// A copy the compiler may neither drop nor merge with the next: the destination
// escapes into an empty asm that claims to read and write memory.
inline void copy(char *destination, const char *source, std::size_t bytes) {
    std::memcpy(destination, source, bytes);
    asm volatile("" : : "r"(destination) : "memory");
}

// GB/s of one run: copies of copy_bytes for run_ms, at offsets from next_offset().
template <typename NextOffset>
double one_run(char *destination, const char *source, std::size_t copy_bytes, long run_ms,
               NextOffset next_offset) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::milliseconds(run_ms);
    std::uint64_t copies = 0;
    Clock::time_point now;
    do {
        for (int k = 0; k < 8; ++k) {
            std::size_t offset = next_offset();
            copy(destination + offset, source + offset, copy_bytes);
        }
        copies += 8;
        now = Clock::now();
    } while (now < deadline);
    double seconds = std::chrono::duration<double>(now - start).count();
    return double(copies) * double(copy_bytes) / seconds / 1e9;
}

void print_row(const char *kind, std::size_t copy_bytes, std::size_t working_set,
               std::vector<double> gbps) {
    std::sort(gbps.begin(), gbps.end());
    std::size_t n = gbps.size();
    double median = n % 2 ? gbps[n / 2] : (gbps[n / 2 - 1] + gbps[n / 2]) / 2;
    std::printf("%-5s %-10zu %-17zu %-11.2f %-8.2f %.2f\n", kind, copy_bytes, working_set, median,
                gbps.front(), gbps.back());
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
    Options o = parse(argc, argv);
    const std::size_t llc = last_level_cache_bytes();
    std::size_t pool = o.cold_pool_bytes;
    if (pool == 0) pool = std::max<std::size_t>(4 * llc, std::size_t{64} << 20);
    pool = std::max(pool / o.copy_bytes, std::size_t{1}) * o.copy_bytes;  // whole copies

    std::printf(
        "# memcpy_bw: one thread, %zu B copies, GB/s = 1e9 B/s, median/min/max of %d runs of "
        "%ld ms; LLC %zu KiB; cold pools 2 x %zu MiB\n",
        o.copy_bytes, o.runs, o.run_ms, llc >> 10, pool >> 20);
    std::printf("%-5s %-10s %-17s %-11s %-8s %s\n", "kind", "copy_bytes", "working_set_bytes",
                "gbps_median", "gbps_min", "gbps_max");

    char *hot_source = allocate(o.copy_bytes);
    char *hot_destination = allocate(o.copy_bytes);
    std::vector<double> hot;
    for (int i = 0; i < 16; ++i)
        copy(hot_destination, hot_source, o.copy_bytes);  // warm up
    for (int r = 0; r < o.runs; ++r)
        hot.push_back(one_run(hot_destination, hot_source, o.copy_bytes, o.run_ms,
                              [] { return std::size_t{0}; }));
    print_row("hot", o.copy_bytes, 2 * o.copy_bytes, hot);

    char *cold_source = allocate(pool);
    char *cold_destination = allocate(pool);
    std::vector<double> cold;
    std::size_t offset = 0;
    auto walk = [&offset, pool, step = o.copy_bytes] {
        std::size_t at = offset;
        offset = offset + step >= pool ? 0 : offset + step;
        return at;
    };
    for (int r = 0; r < o.runs; ++r)
        cold.push_back(one_run(cold_destination, cold_source, o.copy_bytes, o.run_ms, walk));
    print_row("cold", o.copy_bytes, 2 * pool, cold);
    return 0;
}
