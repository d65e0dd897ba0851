// netioapi.h conversions over the adapters the user declared (SOFTNDK_CONFIG).
#include <ndkpi.h>
#include <netioapi.h>

#include <cstdio>
#include <cstdlib>
#include <cwchar>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

namespace {

// Points SOFTNDK_CONFIG at a two-adapter file for one test, then restores it.
struct TwoAdapters {
    TwoAdapters() {
        std::ofstream(path) << "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\n\n"
                               "[adapter storage]\nif_index = 7\nipv4 = 127.0.0.2\n"
                               "alias = stor\xc3\xa9\n";  // UTF-8 e-acute
        setenv("SOFTNDK_CONFIG", path.c_str(), 1);
    }
    ~TwoAdapters() {
        unsetenv("SOFTNDK_CONFIG");
        std::remove(path.c_str());
    }
    const std::string path = "provider_netio_test.ini";
};

}  // namespace

TEST_CASE("NET_LUID conversions: bad arguments and unknown interfaces", "[provider][netio]") {
    TwoAdapters config;
    NET_LUID luid{};
    NET_IFINDEX index = 99;
    WCHAR alias[NDIS_IF_MAX_STRING_SIZE + 1];
    CHECK(ConvertInterfaceIndexToLuid(1, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(ConvertInterfaceLuidToIndex(nullptr, &index) == STATUS_INVALID_PARAMETER);
    CHECK(ConvertInterfaceLuidToIndex(&luid, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(ConvertInterfaceLuidToAlias(nullptr, alias, 10) == STATUS_INVALID_PARAMETER);
    CHECK(ConvertInterfaceAliasToLuid(nullptr, &luid) == STATUS_INVALID_PARAMETER);
    CHECK(ConvertInterfaceAliasToLuid(L"rnic0", nullptr) == STATUS_INVALID_PARAMETER);

    luid.Value = 0x1234;
    CHECK(ConvertInterfaceIndexToLuid(2, &luid) == STATUS_NOT_FOUND);
    CHECK(luid.Value == NET_IFLUID_UNSPECIFIED);
    luid.Info.IfType = 6;
    luid.Info.NetLuidIndex = 2;
    CHECK(ConvertInterfaceLuidToIndex(&luid, &index) == STATUS_NOT_FOUND);
    CHECK(index == 0);
    CHECK(ConvertInterfaceLuidToAlias(&luid, alias, NDIS_IF_MAX_STRING_SIZE + 1) ==
          STATUS_NOT_FOUND);
    CHECK(ConvertInterfaceAliasToLuid(L"rnic1", &luid) == STATUS_INVALID_PARAMETER);
}

TEST_CASE("NET_LUID conversions round-trip for every declared adapter", "[provider][netio]") {
    TwoAdapters config;
    for (const auto &[if_index, name] :
         {std::pair<NET_IFINDEX, const wchar_t *>{1, L"rnic0"}, {7, L"stor\u00e9"}}) {
        CAPTURE(if_index);
        NET_LUID luid{};
        REQUIRE(ConvertInterfaceIndexToLuid(if_index, &luid) == STATUS_SUCCESS);
        CHECK(luid.Info.IfType == 6);
        CHECK(luid.Info.NetLuidIndex == if_index);
        CHECK(luid.Info.Reserved == 0);

        NET_IFINDEX back = 0;
        REQUIRE(ConvertInterfaceLuidToIndex(&luid, &back) == STATUS_SUCCESS);
        CHECK(back == if_index);

        WCHAR alias[NDIS_IF_MAX_STRING_SIZE + 1];
        REQUIRE(ConvertInterfaceLuidToAlias(&luid, alias, NDIS_IF_MAX_STRING_SIZE + 1) ==
                STATUS_SUCCESS);
        CHECK(std::wcscmp(alias, name) == 0);
        // Exactly the alias and its terminator fit; one character less does not.
        const SIZE_T need = std::wcslen(name) + 1;
        CHECK(ConvertInterfaceLuidToAlias(&luid, alias, need) == STATUS_SUCCESS);
        CHECK(ConvertInterfaceLuidToAlias(&luid, alias, need - 1) == STATUS_BUFFER_TOO_SMALL);

        NET_LUID again{};
        REQUIRE(ConvertInterfaceAliasToLuid(name, &again) == STATUS_SUCCESS);
        CHECK(again.Value == luid.Value);
    }
}

TEST_CASE("Without SOFTNDK_CONFIG the default adapter rnic0 answers", "[provider][netio]") {
    unsetenv("SOFTNDK_CONFIG");
    NET_LUID luid{};
    REQUIRE(ConvertInterfaceAliasToLuid(L"rnic0", &luid) == STATUS_SUCCESS);
    NET_IFINDEX index = 0;
    REQUIRE(ConvertInterfaceLuidToIndex(&luid, &index) == STATUS_SUCCESS);
    CHECK(index == 1);
}
