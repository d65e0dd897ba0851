// trace.cpp - the trace's rings and writer (contract in softndk/trace.hpp).
//
// Rings are found by key (the device's if_index; the provider's records for an adapter
// use a ring of their own, key | kProviderKey) in a small open-addressing table; a ring,
// once made, lives until the process ends (producers may still hold it while exit-time
// code runs). The file, the table's growth and every drain are under g_file_mutex.
#include "softndk/trace.hpp"

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "softndk/sim.hpp"

namespace softndk::trace {
namespace detail {
std::atomic<bool> g_on{false};
}

namespace {

constexpr uint32_t kProviderKey = 1u << 16;
constexpr size_t kMaxRings = 64;
constexpr uint64_t kFlushEvery = kRingRecords / 2;

struct Slot {
    std::atomic<uint64_t> sequence{0};  // index + 1 once the record at index is published
    Record record;
};

struct Ring {
    explicit Ring(uint32_t key) : key(key), slots(new Slot[kRingRecords]) {}
    const uint32_t key;
    std::atomic<uint64_t> write{0};    // next index to claim
    std::atomic<uint64_t> drained{0};  // every index below it is in the file
    std::unique_ptr<Slot[]> slots;
};

struct RingTable {
    std::atomic<Ring *> rings[kMaxRings] = {};
};

RingTable g_table;
std::atomic<uint32_t> g_seq{0};
std::mutex g_file_mutex;  // the file, ring creation, draining
std::FILE *g_file = nullptr;
std::string g_path;
std::atomic<bool> g_simulated{false};  // set before the first record (sim.hpp)

// Writer thread (not in simulated time).
std::mutex g_writer_mutex;
std::condition_variable g_writer_cv;
std::thread g_writer;
bool g_writer_stop = false;
std::atomic<bool> g_writer_started{false};

Ring &ring_for(uint32_t key) {
    const size_t start = (key * 2654435761u) % kMaxRings;
    for (size_t i = 0; i < kMaxRings; ++i) {
        Ring *r = g_table.rings[(start + i) % kMaxRings].load(std::memory_order_acquire);
        if (r == nullptr) break;
        if (r->key == key) return *r;
    }
    std::lock_guard lock(g_file_mutex);
    for (size_t i = 0; i < kMaxRings; ++i) {
        auto &entry = g_table.rings[(start + i) % kMaxRings];
        Ring *r = entry.load(std::memory_order_acquire);
        if (r != nullptr && r->key == key) return *r;
        if (r == nullptr) {
            r = new Ring(key);  // lives until the process ends (see the file comment)
            entry.store(r, std::memory_order_release);
            return *r;
        }
    }
    // More than kMaxRings devices: the rest share the last slot's ring.
    return *g_table.rings[(start + kMaxRings - 1) % kMaxRings].load(std::memory_order_acquire);
}

// g_file_mutex held. Creates the file and writes its header on first use.
bool ensure_file() {
    if (g_file != nullptr) return true;
    if (g_path.empty()) return false;
    g_file = std::fopen(g_path.c_str(), "wb");
    if (g_file == nullptr) {
        std::fprintf(stderr, "softndk: SOFTNDK_TRACE=%s: cannot create the file; tracing off\n",
                     g_path.c_str());
        detail::g_on.store(false, std::memory_order_relaxed);
        return false;
    }
    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof h.magic);
    h.version = kFormatVersion;
    h.record_bytes = kRecordBytes;
    const bool simulated = g_simulated.load(std::memory_order_relaxed);
    h.flags = simulated ? kFileSimulated : 0;
    h.pid = simulated ? 0 : static_cast<uint32_t>(::getpid());
    std::fwrite(&h, sizeof h, 1, g_file);
    return true;
}

// g_file_mutex held.
void drain_locked() {
    std::vector<Record> batch;
    for (auto &entry : g_table.rings) {
        Ring *r = entry.load(std::memory_order_acquire);
        if (r == nullptr) continue;
        uint64_t d = r->drained.load(std::memory_order_relaxed);
        batch.clear();
        for (;;) {
            Slot &s = r->slots[d & (kRingRecords - 1)];
            if (s.sequence.load(std::memory_order_acquire) != d + 1) break;
            batch.push_back(s.record);
            ++d;
        }
        if (batch.empty()) continue;
        if (ensure_file()) std::fwrite(batch.data(), sizeof(Record), batch.size(), g_file);
        r->drained.store(d, std::memory_order_release);
    }
    if (g_file != nullptr) std::fflush(g_file);
}

void writer_loop() {
    std::unique_lock lock(g_writer_mutex);
    while (!g_writer_stop) {
        g_writer_cv.wait_for(lock, std::chrono::milliseconds(20));
        lock.unlock();
        flush();
        lock.lock();
    }
}

void start_writer_once() {
    if (g_writer_started.exchange(true)) return;
    g_simulated.store(sim::enabled(), std::memory_order_relaxed);
    if (g_simulated.load(std::memory_order_relaxed))
        return;  // flush points only: the file must not depend on the OS
    std::lock_guard lock(g_writer_mutex);
    g_writer_stop = false;
    g_writer = std::thread(writer_loop);
}

void stop_writer() {
    std::thread writer;
    {
        std::lock_guard lock(g_writer_mutex);
        g_writer_stop = true;
        writer = std::move(g_writer);
    }
    g_writer_cv.notify_all();
    if (writer.joinable()) writer.join();
    // g_writer_started stays true: a hook that was already past on() when close() ran
    // must not start a writer again (a joinable std::thread at exit would terminate the
    // process). open() re-arms it.
}

uint64_t wall_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Opens SOFTNDK_TRACE at start-up and closes (flushes) at exit.
struct EnvironmentSwitch {
    EnvironmentSwitch() {
        const char *file = std::getenv("SOFTNDK_TRACE");
        if (file == nullptr || *file == '\0') return;
        std::string target = file;
        const char *mode = std::getenv("SOFTNDK_MODE");
        if (mode != nullptr && std::string(mode) == "daemon")
            target += ".consumer-" + std::to_string(::getpid());
        std::lock_guard lock(g_file_mutex);
        g_path = target;
        detail::g_on.store(true, std::memory_order_relaxed);
    }
    ~EnvironmentSwitch() { close(); }
};
EnvironmentSwitch g_environment_switch;

}  // namespace

const char *type_name(Type type) {
    static constexpr const char *kNames[kTypeCount] = {
        "none",     "device",    "post",      "doorbell",  "wqe_fetch",      "wqe_start",
        "dma_read", "dma_write", "packet_tx", "packet_rx", "packet_drop",    "ack",
        "retry",    "cqe",       "eqe",       "cq_arm",    "callback_enter", "callback_exit",
        "qp_state", "cm",        "fault"};
    const auto i = static_cast<uint8_t>(type);
    return i < kTypeCount ? kNames[i] : "unknown";
}

bool open(const std::string &file) {
    close();
    g_writer_started.store(false);
    std::lock_guard lock(g_file_mutex);
    g_path = file;
    g_simulated.store(sim::enabled(), std::memory_order_relaxed);
    // The header now, so a run without events still leaves a valid (empty) trace.
    if (!ensure_file()) {
        g_path.clear();
        return false;
    }
    detail::g_on.store(true, std::memory_order_relaxed);
    return true;
}

void flush() {
    std::lock_guard lock(g_file_mutex);
    drain_locked();
}

void close() {
    // Off first: hooks that run from now on write nothing (a record being written right
    // now may be left out).
    detail::g_on.store(false, std::memory_order_relaxed);
    stop_writer();
    std::lock_guard lock(g_file_mutex);
    drain_locked();
    if (g_file != nullptr) std::fclose(g_file);
    g_file = nullptr;
    g_path.clear();
}

std::string path() {
    std::lock_guard lock(g_file_mutex);
    return g_path;
}

void emit(Record &record) {
    if (!on()) return;
    start_writer_once();
    const uint32_t key = record.device | ((record.flags & kFlagProvider) ? kProviderKey : 0);
    Ring &ring = ring_for(key);
    const uint64_t index = ring.write.fetch_add(1, std::memory_order_relaxed);
    // A full ring: the slot's previous record is not in the file yet. Flush (every ring's
    // published prefix) until it is; the record before ours in the ring may still be
    // being written by another producer, which publishes it without waiting.
    while (index - ring.drained.load(std::memory_order_acquire) >= kRingRecords) {
        flush();
        if (index - ring.drained.load(std::memory_order_acquire) >= kRingRecords)
            std::this_thread::yield();
    }
    record.seq = g_seq.fetch_add(1, std::memory_order_relaxed);
    record.wall_ns = g_simulated.load(std::memory_order_relaxed) ? 0 : wall_ns();
    Slot &slot = ring.slots[index & (kRingRecords - 1)];
    slot.record = record;
    slot.sequence.store(index + 1, std::memory_order_release);
    if (index != 0 && index % kFlushEvery == 0) flush();
}

void post_slow(uint32_t device, const PostedWqe &wqe, uint64_t model_ns) {
    Record r = make(Type::kPost, device, model_ns,
                    static_cast<uint8_t>(kFlagProvider | (wqe.receive ? kFlagRecv : 0)));
    r.body.wqe.qp = wqe.qp;
    r.body.wqe.wqe_index = wqe.wqe_index;
    r.body.wqe.opcode = wqe.opcode;
    r.body.wqe.length = wqe.length;
    r.body.wqe.psn = wqe.producer;
    r.body.wqe.psn_count = wqe.entries;
    emit(r);
}

void callback_slow(Type type, uint32_t device, uint32_t cq, int32_t status, uint64_t model_ns) {
    Record r = make(type, device, model_ns, kFlagProvider);
    r.body.eqe.object = cq;
    r.body.eqe.status = status;
    emit(r);
}

void fault_slow(uint32_t device, uint64_t model_ns, const char *what, uint32_t qp, uint32_t psn) {
    Record r = make(Type::kFault, device, model_ns);
    r.body.fault.qp = qp;
    r.body.fault.psn = psn;
    if (what != nullptr) std::strncpy(r.body.fault.what, what, sizeof r.body.fault.what - 1);
    emit(r);
}

}  // namespace softndk::trace
