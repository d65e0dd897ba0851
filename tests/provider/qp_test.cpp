// QP work-request flags that order or shape requests: READ_FENCE. (Posting, flags,
// DEFER and errors of the basic requests are in data_path_test.cpp; fast registration,
// bind and invalidation in mr_test.cpp and mw_test.cpp.)
#include "ndk_test.hpp"

using namespace ndktest;

namespace {

struct Pair {
    Wsk wsk;
    Side client{wsk};
    Side server{wsk};
    Pair() { connect(client, server); }
};

}  // namespace

TEST_CASE("READ_FENCE: a send waits for the read before it, so it carries the read's data",
          "[provider][qp][device]") {
    Pair p;
    // The server holds the data the client reads, then forwards back with a send.
    for (int i = 0; i < 512; ++i)
        p.server.buffer[4096 + i] = static_cast<unsigned char>(0xA0 + i % 16);
    std::memset(p.client.buffer.data(), 0x11, 512);  // stale contents of the client's buffer
    NDK_SGE rx = p.server.sge(65536, 512);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    // The read is deferred so that the device sees both requests at once: only the fence
    // keeps the send from leaving with the stale bytes.
    NDK_SGE read_sink = p.client.sge(0, 512);
    REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, reinterpret_cast<void *>(1), &read_sink, 1,
                                           p.server.remote_address(4096), p.server.rtoken,
                                           NDK_OP_FLAG_DEFER) == STATUS_SUCCESS);
    NDK_SGE tx = p.client.sge(0, 512);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, reinterpret_cast<void *>(2), &tx, 1,
                                           NDK_OP_FLAG_READ_FENCE) == STATUS_SUCCESS);
    std::vector<NDK_RESULT_EX> out;
    REQUIRE(p.client.drain(out, 2) == 2);
    CHECK(out[0].RequestContext == reinterpret_cast<void *>(1));
    CHECK(out[0].Type == NdkOperationTypeRead);
    CHECK(out[1].RequestContext == reinterpret_cast<void *>(2));
    CHECK(out[1].Status == STATUS_SUCCESS);
    const NDK_RESULT_EX r = p.server.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(r.BytesTransferred == 512);
    CHECK(std::memcmp(p.server.buffer.data() + 65536, p.server.buffer.data() + 4096, 512) == 0);
}
