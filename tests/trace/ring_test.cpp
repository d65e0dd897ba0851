// The trace's rings and writer (include/softndk/trace.hpp): what producers emit is in the
// file, once each, whatever the number of threads and however often the ring wraps.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "softndk/trace.hpp"

namespace trace = softndk::trace;

namespace {

std::string temp_path(const char *name) {
    return std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/softndk-" +
           name + "-" + std::to_string(::getpid()) + ".trace";
}

std::vector<trace::Record> read_records(const std::string &path, trace::FileHeader &header) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.read(reinterpret_cast<char *>(&header), sizeof header));
    std::vector<trace::Record> records;
    trace::Record r;
    while (in.read(reinterpret_cast<char *>(&r), sizeof r))
        records.push_back(r);
    CHECK(in.gcount() == 0);
    return records;
}

}  // namespace

TEST_CASE("trace: off, a hook writes nothing and open() turns it on", "[trace]") {
    trace::close();
    CHECK_FALSE(trace::on());
    trace::Record r = trace::make(trace::Type::kFault, 1, 5);
    trace::emit(r);  // dropped: tracing is off
    const std::string path = temp_path("off");
    REQUIRE(trace::open(path));
    CHECK(trace::on());
    CHECK(trace::path() == path);
    trace::close();
    CHECK_FALSE(trace::on());
    trace::FileHeader header{};
    CHECK(read_records(path, header).empty());  // the dropped record is not there
    CHECK(std::string(header.magic, 8) == std::string(trace::kMagic, 8));
    CHECK(header.version == trace::kFormatVersion);
    CHECK(header.record_bytes == trace::kRecordBytes);
    std::remove(path.c_str());
}

TEST_CASE("trace: open() on a path that cannot be created fails and stays off", "[trace]") {
    CHECK_FALSE(trace::open("/nonexistent-directory/x.trace"));
    CHECK_FALSE(trace::on());
}

TEST_CASE("trace: 4 threads, 2 devices, the ring wrapping: every record once, in seq order",
          "[trace]") {
    const std::string path = temp_path("threads");
    REQUIRE(trace::open(path));
    constexpr uint32_t kPerThread = 3 * trace::kRingRecords / 2;  // each device's ring wraps
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 4; ++t) {
        threads.emplace_back([t] {
            for (uint32_t i = 0; i < kPerThread; ++i) {
                // Threads 0 and 1 write device 1, threads 2 and 3 device 2.
                trace::fault(1 + t / 2, i, "test", t, i);
            }
        });
    }
    for (auto &t : threads)
        t.join();
    trace::close();
    trace::FileHeader header{};
    const auto records = read_records(path, header);
    REQUIRE(records.size() == 4 * kPerThread);
    std::set<uint32_t> seqs;
    std::map<uint32_t, uint32_t> next;  // thread -> next psn expected
    for (const auto &r : records) {
        REQUIRE(r.type == trace::Type::kFault);
        REQUIRE(r.device == 1 + r.body.fault.qp / 2);
        seqs.insert(r.seq);
        // One producer's records keep their order within its device's ring.
        REQUIRE(r.body.fault.psn == next[r.body.fault.qp]);
        ++next[r.body.fault.qp];
        REQUIRE(std::string(r.body.fault.what) == "test");
        REQUIRE(r.wall_ns != 0);  // not simulated time
    }
    CHECK(seqs.size() == records.size());                         // no sequence number twice
    CHECK(*seqs.rbegin() - *seqs.begin() == records.size() - 1);  // and none missing
    std::remove(path.c_str());
}

TEST_CASE("trace: the fault hook truncates its detail to 31 bytes", "[trace]") {
    const std::string path = temp_path("fault");
    REQUIRE(trace::open(path));
    trace::fault(3, 42, "a very long description of an injected fault that goes on", 7, 9);
    trace::close();
    trace::FileHeader header{};
    const auto records = read_records(path, header);
    REQUIRE(records.size() == 1);
    CHECK(records[0].device == 3);
    CHECK(records[0].model_ns == 42);
    CHECK(records[0].body.fault.qp == 7);
    CHECK(records[0].body.fault.psn == 9);
    CHECK(std::string(records[0].body.fault.what) == "a very long description of an i");
    std::remove(path.c_str());
}
