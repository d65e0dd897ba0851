// rc/qp.hpp: the requester's queue of fetched send WQEs (SendWqeQueue).
#include <catch2/catch.hpp>

#include <cstdint>

#include "rc/qp.hpp"

using softndk::emu::SendWqe;
using softndk::emu::SendWqeQueue;

namespace {
SendWqe wqe(uint16_t index, uint32_t inline_bytes = 0) {
    SendWqe w;
    w.index = index;
    for (uint32_t i = 0; i < inline_bytes; ++i)
        w.inline_data.push_back(static_cast<uint8_t>(index + i));
    return w;
}
}  // namespace

TEST_CASE("SendWqeQueue: an empty queue", "[rc][wqe-queue]") {
    SendWqeQueue q;
    CHECK(q.empty());
    CHECK(q.size() == 0);
    CHECK(q.begin() == q.end());
}

TEST_CASE("SendWqeQueue grows past any capacity and keeps post order", "[rc][wqe-queue]") {
    // Never overwrites: a circular buffer's own push_back would drop the oldest when full.
    SendWqeQueue q;
    for (uint16_t i = 0; i < 1000; ++i)
        q.push_back(wqe(i));
    REQUIRE(q.size() == 1000);
    for (uint16_t i = 0; i < 1000; ++i)
        CHECK(q[i].index == i);
    CHECK(q.front().index == 0);
}

TEST_CASE("SendWqeQueue indexes from the oldest after the ring has wrapped", "[rc][wqe-queue]") {
    SendWqeQueue q;
    uint16_t next = 0, oldest = 0;
    // Retire and fetch in turn, as a QP in flight does, so the ring wraps many times;
    // then grow it while wrapped.
    for (int round = 0; round < 100; ++round) {
        for (int k = 0; k < 5; ++k)
            q.push_back(wqe(next++, round % 3 == 0 ? 100 : 8));
        for (int k = 0; k < 4; ++k) {
            REQUIRE(q.front().index == oldest);
            q.pop_front();
            ++oldest;
        }
    }
    REQUIRE(q.size() == 100);
    size_t i = 0;
    for (SendWqe &w : q) {
        CHECK(w.index == static_cast<uint16_t>(oldest + i));
        CHECK(q[i].index == w.index);
        ++i;
    }
    // Inline payloads moved along with their WQEs (in place or on the heap).
    const SendWqe &w = q[0];
    REQUIRE(!w.inline_data.empty());
    CHECK(w.inline_data[0] == static_cast<uint8_t>(w.index));
}
