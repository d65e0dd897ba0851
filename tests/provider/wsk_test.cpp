// The WSK entry points and the shape of the dispatch tables: no device needed.
#include <type_traits>

#include "ndk_test.hpp"
#include "slots.hpp"

using namespace ndktest;

TEST_CASE("WskRegister and WskCaptureProviderNPI reject NULL arguments", "[provider][wsk]") {
    WSK_CLIENT_DISPATCH dispatch{MAKE_WSK_VERSION(1, 0), 0, nullptr};
    WSK_CLIENT_NPI npi{nullptr, &dispatch};
    WSK_REGISTRATION reg{};
    WSK_PROVIDER_NPI provider{};
    CHECK(WskRegister(nullptr, &reg) == STATUS_INVALID_PARAMETER);
    CHECK(WskRegister(&npi, nullptr) == STATUS_INVALID_PARAMETER);
    WSK_CLIENT_NPI no_dispatch{nullptr, nullptr};
    CHECK(WskRegister(&no_dispatch, &reg) == STATUS_INVALID_PARAMETER);
    WSK_CLIENT_DISPATCH v2{MAKE_WSK_VERSION(2, 0), 0, nullptr};
    WSK_CLIENT_NPI npi2{nullptr, &v2};
    CHECK(WskRegister(&npi2, &reg) == STATUS_NOT_SUPPORTED);
    WSK_REGISTRATION never_registered{};
    CHECK(WskCaptureProviderNPI(&never_registered, WSK_NO_WAIT, &provider) ==
          STATUS_INVALID_PARAMETER);
    REQUIRE(WskRegister(&npi, &reg) == STATUS_SUCCESS);
    CHECK(WskCaptureProviderNPI(&reg, WSK_NO_WAIT, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(WskCaptureProviderNPI(nullptr, WSK_NO_WAIT, &provider) == STATUS_INVALID_PARAMETER);
    WskDeregister(&reg);
}

TEST_CASE("WskCaptureProviderNPI works with WSK_NO_WAIT and WSK_INFINITE_WAIT nested",
          "[provider][wsk]") {
    WSK_CLIENT_DISPATCH dispatch{MAKE_WSK_VERSION(1, 0), 0, nullptr};
    WSK_CLIENT_NPI npi{nullptr, &dispatch};
    WSK_REGISTRATION reg{};
    REQUIRE(WskRegister(&npi, &reg) == STATUS_SUCCESS);
    WSK_PROVIDER_NPI a{}, b{};
    REQUIRE(WskCaptureProviderNPI(&reg, WSK_NO_WAIT, &a) == STATUS_SUCCESS);
    REQUIRE(WskCaptureProviderNPI(&reg, WSK_INFINITE_WAIT, &b) == STATUS_SUCCESS);
    CHECK(a.Client != nullptr);
    CHECK(a.Client == b.Client);
    REQUIRE(a.Dispatch != nullptr);
    CHECK(a.Dispatch->Version == MAKE_WSK_VERSION(1, 0));
    WskReleaseProviderNPI(&reg);
    WskReleaseProviderNPI(&reg);
    WskDeregister(&reg);  // returns: every capture released, no adapter open
}

TEST_CASE("WskControlClient copies WSK_PROVIDER_NDK_DISPATCH and checks the output buffer",
          "[provider][wsk]") {
    WSK_CLIENT_DISPATCH dispatch{MAKE_WSK_VERSION(1, 0), 0, nullptr};
    WSK_CLIENT_NPI npi{nullptr, &dispatch};
    WSK_REGISTRATION reg{};
    REQUIRE(WskRegister(&npi, &reg) == STATUS_SUCCESS);
    WSK_PROVIDER_NPI p{};
    REQUIRE(WskCaptureProviderNPI(&reg, WSK_NO_WAIT, &p) == STATUS_SUCCESS);
    auto control = p.Dispatch->WskControlClient;
    const ULONG code = WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH;
    CHECK(code == 0x4E444B44u);

    struct {
        WSK_PROVIDER_NDK_DISPATCH d;
        void *canary;
    } out{};
    out.canary = &out;
    SIZE_T returned = 0;
    SECTION("too small") {
        CHECK(control(p.Client, code, 0, nullptr, sizeof(void *), &out.d, &returned, nullptr) ==
              STATUS_BUFFER_TOO_SMALL);
        CHECK(control(p.Client, code, 0, nullptr, 0, &out.d, &returned, nullptr) ==
              STATUS_BUFFER_TOO_SMALL);
        CHECK(out.d.WskOpenNdkAdapter == nullptr);
    }
    SECTION("too large or missing") {
        CHECK(control(p.Client, code, 0, nullptr, sizeof out, &out, &returned, nullptr) ==
              STATUS_INVALID_PARAMETER);
        CHECK(control(p.Client, code, 0, nullptr, sizeof out.d, nullptr, &returned, nullptr) ==
              STATUS_INVALID_PARAMETER);
        CHECK(out.d.WskOpenNdkAdapter == nullptr);
    }
    SECTION("bad client or code") {
        CHECK(control(nullptr, code, 0, nullptr, sizeof out.d, &out.d, &returned, nullptr) ==
              STATUS_INVALID_PARAMETER);
        CHECK(control(p.Client, 0x1234, 0, nullptr, sizeof out.d, &out.d, &returned, nullptr) ==
              STATUS_NOT_SUPPORTED);
    }
    SECTION("exact size: a copy of the two pointers") {
        CHECK(control(p.Client, code, 0, nullptr, sizeof out.d, &out.d, &returned, nullptr) ==
              STATUS_SUCCESS);
        CHECK(returned == sizeof(WSK_PROVIDER_NDK_DISPATCH));
        CHECK(out.d.WskOpenNdkAdapter != nullptr);
        CHECK(out.d.WskCloseNdkAdapter != nullptr);
        CHECK(out.canary == &out);
        // OutputSizeReturned is optional.
        WSK_PROVIDER_NDK_DISPATCH again{};
        CHECK(control(p.Client, code, 0, nullptr, sizeof again, &again, nullptr, nullptr) ==
              STATUS_SUCCESS);
        CHECK(again.WskOpenNdkAdapter == out.d.WskOpenNdkAdapter);
    }
    WskReleaseProviderNPI(&reg);
    WskDeregister(&reg);
}

TEST_CASE("WSK socket slots answer STATUS_NOT_SUPPORTED", "[provider][wsk]") {
    Wsk wsk;
    const WSK_PROVIDER_DISPATCH *d = wsk.npi.Dispatch;
    CHECK(d->WskSocket(wsk.npi.Client, AF_INET, 1, 0, 0, nullptr, nullptr, nullptr, nullptr,
                       nullptr, nullptr) == STATUS_NOT_SUPPORTED);
    CHECK(d->WskSocketConnect(wsk.npi.Client, 1, 0, nullptr, nullptr, 0, nullptr, nullptr, nullptr,
                              nullptr, nullptr, nullptr) == STATUS_NOT_SUPPORTED);
    CHECK(d->WskGetAddressInfo(wsk.npi.Client, nullptr, nullptr, 0, nullptr, nullptr, nullptr,
                               nullptr, nullptr, nullptr) == STATUS_NOT_SUPPORTED);
    CHECK(d->WskGetNameInfo(wsk.npi.Client, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr,
                            nullptr) == STATUS_NOT_SUPPORTED);
    d->WskFreeAddressInfo(wsk.npi.Client, nullptr);
}

TEST_CASE("WskOpenNdkAdapter rejects bad arguments and unknown interfaces", "[provider][wsk]") {
    Wsk wsk;
    NDK_ADAPTER *a = nullptr;
    CHECK(wsk.ndk.WskOpenNdkAdapter(wsk.npi.Client, NDK_VERSION{1, 0}, kIfIndex, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(wsk.ndk.WskOpenNdkAdapter(nullptr, NDK_VERSION{1, 0}, kIfIndex, &a) ==
          STATUS_INVALID_PARAMETER);
    CHECK(wsk.ndk.WskOpenNdkAdapter(wsk.npi.Client, NDK_VERSION{1, 0}, 9999, &a) ==
          STATUS_NOT_FOUND);
    CHECK(a == nullptr);
}

namespace {
template <class Table>
constexpr size_t slots_of() {
    return sizeof(Table) / sizeof(void *);
}
}  // namespace

TEST_CASE("The slot status table lists every slot of every dispatch table", "[provider][slots]") {
    using softndk::provider::slot_count;
    STATIC_REQUIRE(softndk::provider::kSlots.size() == 70);
    CHECK(slot_count("NDK_ADAPTER_DISPATCH") == slots_of<NDK_ADAPTER_DISPATCH>());
    CHECK(slot_count("NDK_PD_DISPATCH") == slots_of<NDK_PD_DISPATCH>());
    CHECK(slot_count("NDK_CQ_DISPATCH") == slots_of<NDK_CQ_DISPATCH>());
    CHECK(slot_count("NDK_QP_DISPATCH") == slots_of<NDK_QP_DISPATCH>());
    CHECK(slot_count("NDK_SRQ_DISPATCH") == slots_of<NDK_SRQ_DISPATCH>());
    CHECK(slot_count("NDK_MR_DISPATCH") == slots_of<NDK_MR_DISPATCH>());
    CHECK(slot_count("NDK_MW_DISPATCH") == slots_of<NDK_MW_DISPATCH>());
    CHECK(slot_count("NDK_CONNECTOR_DISPATCH") == slots_of<NDK_CONNECTOR_DISPATCH>());
    CHECK(slot_count("NDK_LISTENER_DISPATCH") == slots_of<NDK_LISTENER_DISPATCH>());
    CHECK(slot_count("NDK_SHARED_ENDPOINT_DISPATCH") == slots_of<NDK_SHARED_ENDPOINT_DISPATCH>());
}
