// Tests for include/softndk/ring.hpp: edge cases first, then two threads.
#include "softndk/ring.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace {

using namespace softndk;

// One queue allocation as the device would hand it out: doorbell record at 0,
// slots at 256, zeroed.
class QueueMemory {
  public:
    QueueMemory(uint32_t entries, uint32_t entry_bytes) {
        layout_.doorbell_offset = 0;
        layout_.ring_offset = 256;
        layout_.entries = entries;
        layout_.entry_bytes = entry_bytes;
        layout_.bytes = layout_.ring_offset + uint64_t{entries} * entry_bytes;
        memory_.reset(new (std::align_val_t{64}) std::byte[layout_.bytes]());
    }
    void *base() const { return memory_.get(); }
    const hw::QueueLayout &layout() const { return layout_; }
    std::byte *slot(uint32_t index) const {
        return memory_.get() + layout_.ring_offset + size_t{index} * layout_.entry_bytes;
    }
    template <class Doorbell>
    Doorbell &doorbell() const {
        return *reinterpret_cast<Doorbell *>(memory_.get() + layout_.doorbell_offset);
    }
    hw::QueueDoorbell &queue_doorbell() const { return doorbell<hw::QueueDoorbell>(); }
    // Sets both counters of a QueueDoorbell (what a queue at `count` looks like).
    void set_counters(uint32_t count) const {
        queue_doorbell().producer.value = count;
        queue_doorbell().consumer.value = count;
    }

  private:
    struct AlignedDelete {
        void operator()(std::byte *p) const { ::operator delete[](p, std::align_val_t{64}); }
    };
    hw::QueueLayout layout_{};
    std::unique_ptr<std::byte[], AlignedDelete> memory_;
};

template <class R>
R attach(const QueueMemory &q, uint32_t initial = 0) {
    auto ring = R::attach(q.base(), q.layout(), initial);
    REQUIRE(ring.has_value());
    return *ring;
}

// A 64-byte block whose bytes all derive from `tag`.
std::array<std::byte, 64> block(uint32_t tag) {
    std::array<std::byte, 64> b;
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = std::byte(static_cast<uint8_t>(tag * 131 + i));
    return b;
}

hw::Cqe make_cqe(uint32_t seq) {
    hw::Cqe c{};
    c.completion_time_ns = seq;
    c.qp_number = seq * 7;
    c.op_own = static_cast<uint8_t>(hw::CqeOpcode::kResponderSend) << 4;
    return c;
}

}  // namespace

// ---------------------------------------------------------------------------
// Geometry
// ---------------------------------------------------------------------------
TEST_CASE("ring: attach accepts a valid layout and rejects bad ones", "[ring]") {
    QueueMemory q(8, 64);
    CHECK(SqProducer::attach(q.base(), q.layout()));
    CHECK(SqConsumer::attach(q.base(), q.layout()));
    CHECK(CqProducer::attach(q.base(), q.layout()));
    CHECK(EqConsumer::attach(q.base(), q.layout()));

    auto rejected = [&](auto mutate) {
        hw::QueueLayout l = q.layout();
        mutate(l);
        return !SqConsumer::attach(q.base(), l) && !CqProducer::attach(q.base(), l);
    };
    CHECK(rejected([](hw::QueueLayout &l) { l.entries = 0; }));
    CHECK(rejected([](hw::QueueLayout &l) { l.entries = 6; }));
    CHECK(rejected([](hw::QueueLayout &l) { l.entries = 1u << 31; }));  // beyond `bytes`
    CHECK(rejected([](hw::QueueLayout &l) { l.entry_bytes = 48; }));
    CHECK(rejected([](hw::QueueLayout &l) { l.bytes -= 1; }));
    CHECK(rejected([](hw::QueueLayout &l) { l.ring_offset = 64; }));       // overlaps doorbell
    CHECK(rejected([](hw::QueueLayout &l) { l.doorbell_offset = 320; }));  // inside the ring
    CHECK(rejected([](hw::QueueLayout &l) { l.ring_offset = 224; }));      // misaligned
    CHECK(rejected([](hw::QueueLayout &l) { l.doorbell_offset = 0xffffffc0; }));
    CHECK_FALSE(SqConsumer::attach(static_cast<std::byte *>(q.base()) + 16, q.layout()));
    CHECK_FALSE(SqConsumer::attach(nullptr, q.layout()));

    // Receive slots: any multiple of 16 bytes up to 255 segments.
    QueueMemory rq(4, 48);
    CHECK(RqConsumer::attach(rq.base(), rq.layout()));
    CHECK_FALSE(SqConsumer::attach(rq.base(), rq.layout()));
    QueueMemory odd(4, 24);
    CHECK_FALSE(RqConsumer::attach(odd.base(), odd.layout()));
}

// ---------------------------------------------------------------------------
// Counter rings (SQ, RQ, SRQ)
// ---------------------------------------------------------------------------
TEST_CASE("ring: empty counter ring", "[ring]") {
    QueueMemory q(8, 64);
    auto prod = attach<SqProducer>(q);
    auto cons = attach<SqConsumer>(q);
    std::byte buf[64];

    CHECK(prod.free_slots() == 8);
    REQUIRE(cons.acquire_producer() == 0u);
    CHECK(cons.available() == 0);
    CHECK_FALSE(cons.read(0, buf, 1));
    CHECK_FALSE(cons.release(1));
    CHECK(cons.release(0));  // releasing nothing is fine
    CHECK(q.queue_doorbell().consumer.value == 0);
}

TEST_CASE("ring: counter ring exactly full", "[ring]") {
    QueueMemory q(8, 64);
    auto prod = attach<SqProducer>(q);
    auto cons = attach<SqConsumer>(q);

    REQUIRE(prod.reserve(8) == 0u);
    CHECK_FALSE(prod.reserve(1));
    CHECK(prod.free_slots() == 0);
    for (uint32_t i = 0; i < 8; ++i)
        REQUIRE(prod.write(i, block(i).data(), 64));
    prod.publish();

    REQUIRE(cons.acquire_producer() == 8u);  // producer - consumer == entries is valid
    CHECK(cons.available() == 8);
    std::array<std::byte, 64> got;
    for (uint32_t i = 0; i < 8; ++i) {
        REQUIRE(cons.read(i, got.data(), 64));
        CHECK(got == block(i));
    }
    REQUIRE(cons.release(3));
    CHECK(q.queue_doorbell().consumer.value == 3);

    CHECK(prod.free_slots() == 3);
    CHECK_FALSE(prod.reserve(4));
    CHECK(prod.reserve(3) == 8u);
    CHECK_FALSE(prod.reserve(1));
}

TEST_CASE("ring: counters wrap at 2^32", "[ring]") {
    constexpr uint32_t kStart = 0xfffffffau;
    QueueMemory q(8, 64);
    q.set_counters(kStart);
    auto prod = attach<SqProducer>(q, kStart);
    auto cons = attach<SqConsumer>(q, kStart);

    uint32_t tag = 0;
    for (int round = 0; round < 6; ++round) {  // 6 rounds x 5 slots crosses 2^32
        auto first = prod.reserve(5);
        REQUIRE(first.has_value());
        CHECK(*first == static_cast<uint32_t>(kStart + round * 5));
        for (uint32_t i = 0; i < 5; ++i)
            REQUIRE(prod.write(*first + i, block(tag + i).data(), 64));
        prod.publish();
        CHECK(prod.free_slots() == 3);
        CHECK_FALSE(prod.reserve(4));

        auto p = cons.acquire_producer();
        REQUIRE(p.has_value());
        REQUIRE(cons.available() == 5);
        std::array<std::byte, 64> got;
        for (uint32_t i = 0; i < 5; ++i) {
            REQUIRE(cons.read(cons.consumer() + i, got.data(), 64));
            CHECK(got == block(tag + i));
        }
        REQUIRE(cons.release(*p));
        tag += 5;
    }
    CHECK(prod.producer() == static_cast<uint32_t>(kStart + 30));
    CHECK(prod.producer() < kStart);  // it did wrap
    CHECK(q.queue_doorbell().producer.value == prod.producer());
    CHECK(q.queue_doorbell().consumer.value == cons.consumer());
    CHECK(prod.free_slots() == 8);
}

TEST_CASE("ring: batch reserve then write then publish once", "[ring]") {
    QueueMemory q(16, 64);
    auto prod = attach<SqProducer>(q);
    auto cons = attach<SqConsumer>(q);

    REQUIRE(prod.reserve(2) == 0u);
    REQUIRE(prod.reserve(3) == 2u);
    CHECK(prod.reserved() == 5);
    for (uint32_t i = 0; i < 5; ++i)
        REQUIRE(prod.write(i, block(i).data(), 64));
    CHECK_FALSE(prod.write(5, block(5).data(), 64));  // not reserved
    CHECK_FALSE(prod.write(4, block(4).data(), 65));  // runs past the reservation

    // Nothing is visible before publish.
    CHECK(q.queue_doorbell().producer.value == 0);
    REQUIRE(cons.acquire_producer() == 0u);

    CHECK_FALSE(prod.publish(6));  // beyond the reservation
    REQUIRE(prod.publish(2));      // part of the batch
    REQUIRE(cons.acquire_producer() == 2u);
    CHECK_FALSE(prod.publish(1));                     // backwards
    CHECK_FALSE(prod.write(1, block(1).data(), 64));  // already published
    prod.publish();
    CHECK(q.queue_doorbell().producer.value == 5);
    REQUIRE(cons.acquire_producer() == 5u);
    CHECK(cons.available() == 5);
}

TEST_CASE("ring: a multi-slot WQE wraps around the end of the ring", "[ring]") {
    QueueMemory q(8, 64);
    q.set_counters(6);
    auto prod = attach<SqProducer>(q, 6);
    auto cons = attach<SqConsumer>(q, 6);

    // Control + remote address + 10 data segments = 12 segments = 3 WQEBBs,
    // starting in slot 6: slots 6, 7 and 0.
    std::array<std::byte, 3 * 64> wqe;
    for (size_t i = 0; i < wqe.size(); ++i)
        wqe[i] = std::byte(static_cast<uint8_t>(i ^ 0x5a));
    hw::CtrlSegment ctrl{};
    ctrl.opcode = hw::WqeOpcode::kRdmaWrite;
    ctrl.wqe_index = 6;
    ctrl.segment_count = 12;
    std::memcpy(wqe.data(), &ctrl, sizeof ctrl);

    auto first = prod.reserve(3);
    REQUIRE(first == 6u);
    CHECK(prod.slot(8) == prod.slot(0));
    CHECK(prod.slot(0) == q.slot(0));
    REQUIRE(prod.write(*first, wqe.data(), wqe.size()));
    CHECK(std::memcmp(q.slot(6), wqe.data(), 64) == 0);
    CHECK(std::memcmp(q.slot(7), wqe.data() + 64, 64) == 0);
    CHECK(std::memcmp(q.slot(0), wqe.data() + 128, 64) == 0);
    prod.publish();

    // The device reads the control segment, then the whole WQE, across the wrap.
    REQUIRE(cons.acquire_producer() == 9u);
    hw::CtrlSegment got_ctrl;
    REQUIRE(cons.read(cons.consumer(), &got_ctrl, sizeof got_ctrl));
    CHECK(got_ctrl.segment_count == 12);
    const uint32_t wqebbs = (got_ctrl.segment_count * hw::kSegmentBytes + 63) / 64;
    std::array<std::byte, 3 * 64> got;
    REQUIRE(cons.read(cons.consumer(), got.data(), wqebbs * 64));
    CHECK(got == wqe);
    // A WQE that claims more blocks than were posted is refused, not read.
    std::array<std::byte, 4 * 64> too_big;
    CHECK_FALSE(cons.read(cons.consumer(), too_big.data(), too_big.size()));
    CHECK_FALSE(cons.read(cons.consumer() + 1, got.data(), got.size()));
    CHECK_FALSE(cons.read(cons.consumer() - 1, got.data(), 64));  // before the consumer
    REQUIRE(cons.release(cons.consumer() + wqebbs));
    CHECK(q.queue_doorbell().consumer.value == 9);
}

TEST_CASE("ring: garbage producer values are rejected", "[ring]") {
    QueueMemory q(8, 64);
    auto cons = attach<SqConsumer>(q);
    auto &producer = q.queue_doorbell().producer.value;
    std::byte buf[64];

    producer = 9;  // entries + 1 ahead
    CHECK_FALSE(cons.acquire_producer());
    CHECK(cons.available() == 0);
    CHECK_FALSE(cons.read(0, buf, 64));
    producer = 0xffffffffu;  // behind the consumer
    CHECK_FALSE(cons.acquire_producer());
    producer = 0x80000000u;
    CHECK_FALSE(cons.acquire_producer());

    producer = 8;  // a full ring is fine
    REQUIRE(cons.acquire_producer() == 8u);
    REQUIRE(cons.release(3));
    producer = 2;  // behind the consumer again
    CHECK_FALSE(cons.acquire_producer());
    CHECK(cons.producer() == 8);  // the last good value stays
    producer = 3 + 8 + 1;
    CHECK_FALSE(cons.acquire_producer());
    producer = 3 + 8;
    CHECK(cons.acquire_producer() == 11u);
    CHECK_FALSE(cons.release(12));  // beyond the producer
    CHECK_FALSE(cons.release(2));   // backwards
}

TEST_CASE("ring: the provider ignores an out-of-range device consumer", "[ring]") {
    QueueMemory q(8, 64);
    auto prod = attach<RqProducer>(q);
    REQUIRE(prod.reserve(4));
    prod.publish();
    auto &consumer = q.queue_doorbell().consumer.value;

    consumer = 7;  // beyond the published producer (4)
    CHECK(prod.free_slots() == 4);
    consumer = 0xfffffff0u;
    CHECK(prod.free_slots() == 4);
    consumer = 2;
    CHECK(prod.free_slots() == 6);
    consumer = 1;  // backwards: ignored
    CHECK(prod.free_slots() == 6);

    // Reserved-but-unpublished slots are never handed out twice, whatever the
    // device writes.
    REQUIRE(prod.reserve(6) == 4u);
    for (uint32_t bad : {0u, 1u, 11u, 0xffffffffu}) {
        consumer = bad;
        CHECK(prod.free_slots() == 0);
        CHECK_FALSE(prod.reserve(1));
    }
}

// ---------------------------------------------------------------------------
// Owner-bit rings (CQ, EQ)
// ---------------------------------------------------------------------------
TEST_CASE("ring: empty owner-bit ring", "[ring]") {
    QueueMemory q(8, 64);
    auto writer = attach<CqProducer>(q);
    auto reader = attach<CqConsumer>(q);
    hw::Cqe cqe;
    CHECK_FALSE(reader.take(cqe));
    CHECK_FALSE(reader.poll(cqe));
    CHECK(writer.free_entries() == 8);
    CHECK_FALSE(writer.full());
}

TEST_CASE("ring: owner-bit ring over many laps delivers exactly the written sequence", "[ring]") {
    constexpr uint32_t kDepth = 8;
    QueueMemory q(kDepth, 64);
    auto writer = attach<CqProducer>(q);
    auto reader = attach<CqConsumer>(q);
    auto &consumer_word = q.doorbell<hw::CqDoorbell>().consumer.value;

    uint32_t written = 0, read = 0;
    const uint32_t batches[] = {1, 8, 3, 5, 7, 2, 8, 6, 4, 8, 1};
    for (int pass = 0; pass < 4; ++pass) {  // > 40 laps of the ring
        for (uint32_t n : batches) {
            for (uint32_t i = 0; i < n; ++i)
                REQUIRE(writer.try_push(make_cqe(written++)));
            // The slot just written carries the owner bit of its pass.
            const uint8_t own = std::to_integer<uint8_t>(q.slot((written - 1) % kDepth)[63]);
            CHECK((own & 1) == hw::expected_owner(written - 1, 3));
            CHECK((own >> 4) == static_cast<uint8_t>(hw::CqeOpcode::kResponderSend));
            if (n == kDepth) {
                CHECK(writer.full());  // the provider has not consumed anything
                CHECK_FALSE(writer.try_push(make_cqe(999)));
            }

            std::array<hw::Cqe, kDepth + 1> got;
            const size_t taken = reader.poll(std::span(got));
            REQUIRE(taken == n);
            for (size_t i = 0; i < taken; ++i) {
                CHECK(got[i].completion_time_ns == read);
                CHECK(got[i].qp_number == read * 7);
                CHECK((got[i].op_own & 1) == hw::expected_owner(read, 3));
                ++read;
            }
            // Stale entries of the previous lap are never delivered again.
            hw::Cqe extra;
            CHECK_FALSE(reader.take(extra));
            CHECK(consumer_word == read);
        }
    }
    CHECK(written == read);
    CHECK(written > 3 * 8 * kDepth);
}

TEST_CASE("ring: the writer does not overwrite entries the reader has not published", "[ring]") {
    QueueMemory q(4, 64);
    auto writer = attach<CqProducer>(q);
    auto reader = attach<CqConsumer>(q);
    for (uint32_t i = 0; i < 4; ++i)
        REQUIRE(writer.try_push(make_cqe(i)));
    hw::Cqe cqe;
    REQUIRE(reader.take(cqe));
    REQUIRE(reader.take(cqe));
    CHECK(writer.full());  // taken but not published
    reader.publish_consumer();
    CHECK(writer.free_entries() == 2);
    REQUIRE(writer.try_push(make_cqe(4)));
    REQUIRE(writer.try_push(make_cqe(5)));
    CHECK_FALSE(writer.try_push(make_cqe(6)));
    for (uint32_t i = 2; i < 6; ++i) {
        REQUIRE(reader.poll(cqe));
        CHECK(cqe.completion_time_ns == i);
    }
    CHECK_FALSE(reader.poll(cqe));
}

TEST_CASE("ring: owner-bit ring across the 2^32 count wrap", "[ring]") {
    constexpr uint32_t kDepth = 8;
    constexpr uint32_t kStart = 0u - 2 * kDepth;  // an even pass: zeroed slots are empty
    QueueMemory q(kDepth, 64);
    q.doorbell<hw::CqDoorbell>().consumer.value = kStart;
    auto writer = attach<CqProducer>(q, kStart);
    auto reader = attach<CqConsumer>(q, kStart);

    uint32_t next_read = 0;
    for (uint32_t seq = 0; seq < 6 * kDepth; ++seq) {
        REQUIRE(writer.try_push(make_cqe(seq)));
        if (seq % 3 == 2) {
            hw::Cqe cqe;
            while (reader.poll(cqe))
                CHECK(cqe.completion_time_ns == next_read++);
        }
    }
    hw::Cqe cqe;
    while (reader.poll(cqe))
        CHECK(cqe.completion_time_ns == next_read++);
    CHECK(next_read == 6 * kDepth);
    CHECK(reader.consumer() == kStart + 6 * kDepth);
    CHECK(reader.consumer() < kStart);
}

TEST_CASE("ring: a garbage CQ consumer only makes the ring look full", "[ring]") {
    QueueMemory q(8, 64);
    auto writer = attach<CqProducer>(q);
    auto &consumer = q.doorbell<hw::CqDoorbell>().consumer.value;
    for (uint32_t i = 0; i < 8; ++i)
        REQUIRE(writer.try_push(make_cqe(i)));
    const std::array<std::byte, 64> before = [&] {
        std::array<std::byte, 64> b;
        std::memcpy(b.data(), q.slot(0), 64);
        return b;
    }();

    for (uint32_t bad : {9u, 100u, 0xffffffffu, 0x80000000u}) {  // ahead, or > 8 behind
        consumer = bad;
        CHECK(writer.full());
        CHECK(writer.free_entries() == 0);
        CHECK_FALSE(writer.try_push(make_cqe(99)));
    }
    CHECK(writer.bad_consumer_reads() > 0);
    CHECK(std::memcmp(q.slot(0), before.data(), 64) == 0);

    consumer = 3;  // in range again: believed
    CHECK(writer.free_entries() == 3);
    consumer = 8;  // consumer == producer: everything consumed
    REQUIRE(writer.try_push(make_cqe(8)));
    CHECK(writer.free_entries() == 7);
}

TEST_CASE("ring: EQ instance", "[ring]") {
    QueueMemory q(4, 64);
    auto writer = attach<EqProducer>(q);
    auto reader = attach<EqConsumer>(q);
    for (uint32_t i = 0; i < 10; ++i) {
        hw::Eqe e{};
        e.type = static_cast<uint8_t>(hw::EqeType::kConnectRequest);
        e.object = i;
        e.owner = 0xfe;  // the writer owns bit 0; other bits pass through
        REQUIRE(writer.try_push(e));
        hw::Eqe got;
        REQUIRE(reader.poll(got));
        CHECK(got.object == i);
        CHECK(got.type == static_cast<uint8_t>(hw::EqeType::kConnectRequest));
        CHECK(got.owner == (0xfe | hw::expected_owner(i, 2)));
    }
}

// ---------------------------------------------------------------------------
// Two threads: the reader must never see a half-written entry.
// ---------------------------------------------------------------------------
namespace {

// Body bytes derive from the sequence number; vendor_syndrome is a checksum of
// every other body byte, so a torn or stale body fails either check.
uint32_t body_checksum(const hw::Cqe &c) {
    const auto *p = reinterpret_cast<const uint8_t *>(&c);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < offsetof(hw::Cqe, op_own); ++i) {
        if (i >= offsetof(hw::Cqe, vendor_syndrome) && i < offsetof(hw::Cqe, vendor_syndrome) + 4)
            continue;
        h = (h ^ p[i]) * 16777619u;
    }
    return h;
}

hw::Cqe checksummed_cqe(uint64_t seq) {
    hw::Cqe c{};
    c.completion_time_ns = seq;
    c.byte_count = static_cast<uint32_t>(seq * 2654435761u);
    c.qp_number = static_cast<uint32_t>(seq >> 3);
    c.wqe_counter = static_cast<uint16_t>(seq);
    for (size_t i = 0; i < sizeof c.reserved; ++i)
        c.reserved[i] = static_cast<uint8_t>(seq + i);
    c.vendor_syndrome = body_checksum(c);
    return c;
}

template <class Pred>
void spin_until(Pred pred) {
    for (uint32_t spins = 0; !pred(); ++spins) {
        if (spins % 64 == 63) std::this_thread::yield();  // two shared cores
    }
}

}  // namespace

TEST_CASE("ring: the reader never sees a half-written entry (two threads)", "[ring]") {
#if defined(__SANITIZE_THREAD__)
    constexpr uint64_t kEntries = 50'000;  // TSan flags a bad ordering within a few entries
#else
    constexpr uint64_t kEntries = 1'000'000;
#endif
    QueueMemory q(256, 64);  // ~3900 laps for 1e6 entries
    auto writer = attach<CqProducer>(q);
    auto reader = attach<CqConsumer>(q);
    const auto start = std::chrono::steady_clock::now();

    std::thread device([&] {
        for (uint64_t seq = 0; seq < kEntries; ++seq) {
            const hw::Cqe c = checksummed_cqe(seq);
            spin_until([&] { return writer.try_push(c); });
        }
    });

    uint64_t bad_sequence = 0, bad_checksum = 0, next = 0;
    std::array<hw::Cqe, 16> batch;
    while (next < kEntries) {
        size_t n = 0;
        spin_until([&] { return (n = reader.poll(std::span(batch))) != 0; });
        for (size_t i = 0; i < n; ++i, ++next) {
            bad_sequence += batch[i].completion_time_ns != next;
            bad_checksum += batch[i].vendor_syndrome != body_checksum(batch[i]) ||
                            batch[i].reserved[5] != static_cast<uint8_t>(next + 5);
        }
    }
    device.join();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "ring: %llu CQEs through a 256-entry CQ in %.1f ms (%.0f ns/CQE)\n",
                 static_cast<unsigned long long>(kEntries), ms, ms * 1e6 / kEntries);

    CHECK(bad_sequence == 0);
    CHECK(bad_checksum == 0);
    CHECK(writer.bad_consumer_reads() == 0);
    hw::Cqe extra;
    CHECK_FALSE(reader.take(extra));
}

// The counter flavour under two threads: the provider posts WQEs of 1-3
// WQEBBs in batches with one publish each, the device copies every WQE out
// (wrapping) and retires it. Bodies are checked byte for byte.
TEST_CASE("ring: the device reads exactly the WQEs the provider posted (two threads)", "[ring]") {
#if defined(__SANITIZE_THREAD__)
    constexpr uint32_t kWqes = 20'000;
#else
    constexpr uint32_t kWqes = 300'000;
#endif
    QueueMemory q(32, 64);
    auto sq = attach<SqProducer>(q);
    auto device = attach<SqConsumer>(q);
    auto wqebbs_of = [](uint32_t seq) { return 1 + seq % 3; };
    auto make_wqe = [&](uint32_t seq, uint32_t index, std::array<std::byte, 3 * 64> &wqe) {
        const uint32_t n = wqebbs_of(seq);
        for (uint32_t i = 0; i < n * 64; ++i)
            wqe[i] = std::byte(static_cast<uint8_t>(seq + i * 7));
        hw::CtrlSegment ctrl{};
        ctrl.opcode = hw::WqeOpcode::kSend;
        ctrl.wqe_index = static_cast<uint16_t>(index);
        ctrl.segment_count = static_cast<uint8_t>(n * 4);
        ctrl.invalidate_token = seq;
        std::memcpy(wqe.data(), &ctrl, sizeof ctrl);
    };

    std::thread provider([&] {
        std::array<std::byte, 3 * 64> wqe;
        uint32_t seq = 0;
        while (seq < kWqes) {
            const uint32_t batch = 1 + seq % 5;
            for (uint32_t k = 0; k < batch && seq < kWqes; ++k, ++seq) {
                std::optional<uint32_t> first;
                spin_until([&] { return (first = sq.reserve(wqebbs_of(seq))).has_value(); });
                make_wqe(seq, *first, wqe);
                sq.write(*first, wqe.data(), wqebbs_of(seq) * 64);
            }
            sq.publish();
        }
    });

    uint32_t garbage = 0, bad = 0, next = 0;
    std::array<std::byte, 3 * 64> got, want;
    while (next < kWqes) {
        spin_until([&] {
            garbage += !device.acquire_producer().has_value();
            return device.available() != 0;
        });
        while (device.available() != 0) {
            hw::CtrlSegment ctrl;
            REQUIRE(device.read(device.consumer(), &ctrl, sizeof ctrl));  // copy out once...
            const uint32_t n = ctrl.segment_count / 4u;
            REQUIRE((n >= 1 && n <= 3));
            REQUIRE(device.read(device.consumer(), got.data(), n * 64));  // ...whole WQE
            make_wqe(next, device.consumer(), want);
            bad += ctrl.invalidate_token != next ||
                   std::memcmp(got.data(), want.data(), wqebbs_of(next) * 64) != 0;
            REQUIRE(device.release(device.consumer() + n));
            ++next;
        }
    }
    provider.join();
    CHECK(garbage == 0);
    CHECK(bad == 0);
    CHECK(device.acquire_producer() == device.consumer());
}
