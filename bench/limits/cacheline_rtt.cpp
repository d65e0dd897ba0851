// cacheline_rtt - how long a cache line takes to go from one core to another and back
// on this machine, the floor under anything two threads hand to each other.
// bench/run.sh and bench/model.sh print it beside the figures it bounds: a ping-pong
// between two threads or two processes moves at least two lines per round trip, and
// SoftNDK's device state, shared by the engines on both ends' threads, moves more.
//
//   softndk_cacheline_rtt [--runs N] [--trips T] [--cpus A,B]
//
// Two threads, pinned to two CPUs (by default the first two the process may use), take
// turns on two cache lines: one stores a counter into its line, the other spins until
// it sees it and answers in its own line. Each run does --trips round trips (default
// 100000) and its figure is the run's wall time (CLOCK_MONOTONIC) over the trips.
// On a virtual machine the figure follows where the hypervisor runs the two vCPUs: it
// has been seen to move between 80 and 560 ns within an hour on the same VM, so a
// benchmark run reports its own.
//
// Output, after a '#' comment line (bench/run.sh reads it with awk):
//   rtt_ns median min max
// Exit status: 0; 2 on a bad argument; 1 when fewer than two CPUs are usable (then
// there is no second core to hand a line to).

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

namespace {

struct Options {
    int runs = 7;
    uint64_t trips = 100000;
    int cpu_a = -1;  // -1: the first two CPUs of the affinity mask
    int cpu_b = -1;
};

uint64_t now_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

bool parse_u64(const char *text, uint64_t &out) {
    char *end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') return false;
    out = v;
    return true;
}

void usage() {
    std::fprintf(stderr, "usage: softndk_cacheline_rtt [--runs N] [--trips T] [--cpus A,B]\n");
}

bool pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
}

struct alignas(64) Line {
    std::atomic<uint64_t> value{0};
};

// One run: `trips` round trips; returns ns per round trip.
double run_once(uint64_t trips, int cpu_a, int cpu_b) {
    Line ping, pong;
    std::thread answerer([&] {
        pin(cpu_b);
        for (uint64_t i = 1; i <= trips; ++i) {
            while (ping.value.load(std::memory_order_acquire) != i) {
            }
            pong.value.store(i, std::memory_order_release);
        }
    });
    pin(cpu_a);
    // Both threads are running and pinned before the clock starts: one trip to warm up.
    const uint64_t start = now_ns();
    for (uint64_t i = 1; i <= trips; ++i) {
        ping.value.store(i, std::memory_order_release);
        while (pong.value.load(std::memory_order_acquire) != i) {
        }
    }
    const uint64_t elapsed = now_ns() - start;
    answerer.join();
    return double(elapsed) / double(trips);
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        uint64_t v = 0;
        if (arg == "--runs" && i + 1 < argc && parse_u64(argv[++i], v) && v >= 1 && v <= 1000) {
            o.runs = int(v);
        } else if (arg == "--trips" && i + 1 < argc && parse_u64(argv[++i], v) && v >= 1000 &&
                   v <= 100000000) {
            o.trips = v;
        } else if (arg == "--cpus" && i + 1 < argc &&
                   std::sscanf(argv[++i], "%d,%d", &o.cpu_a, &o.cpu_b) == 2 && o.cpu_a >= 0 &&
                   o.cpu_b >= 0 && o.cpu_a != o.cpu_b && o.cpu_a < CPU_SETSIZE &&
                   o.cpu_b < CPU_SETSIZE) {
        } else {
            usage();
            return 2;
        }
    }
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        std::perror("sched_getaffinity");
        return 1;
    }
    if (o.cpu_a < 0) {
        std::vector<int> cpus;
        for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
            if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
        if (cpus.size() < 2) {
            std::fprintf(stderr, "softndk_cacheline_rtt: fewer than two usable CPUs\n");
            return 1;
        }
        o.cpu_a = cpus[0];
        o.cpu_b = cpus[1];
    } else if (!CPU_ISSET(o.cpu_a, &allowed) || !CPU_ISSET(o.cpu_b, &allowed)) {
        std::fprintf(stderr, "softndk_cacheline_rtt: CPU %d or %d is not usable\n", o.cpu_a,
                     o.cpu_b);
        return 1;
    }
    std::vector<double> rtt;
    for (int r = 0; r < o.runs; ++r)
        rtt.push_back(run_once(o.trips, o.cpu_a, o.cpu_b));
    std::sort(rtt.begin(), rtt.end());
    std::printf("# cacheline_rtt: CPUs %d and %d, %d runs of %llu round trips\n", o.cpu_a,
                o.cpu_b, o.runs, static_cast<unsigned long long>(o.trips));
    std::printf("rtt_ns %.0f %.0f %.0f\n", rtt[rtt.size() / 2], rtt.front(), rtt.back());
    return 0;
}
