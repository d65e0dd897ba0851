// Memory protection table tests: edge cases first, then the check order, then the
// fast-register / bind / invalidate state machines.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "memory/mpt.hpp"

namespace {

using namespace softndk::emu;
using softndk::hw::make_token;
using softndk::hw::Syndrome;
using softndk::hw::token_index;
using softndk::hw::token_variant;

constexpr std::uint8_t kLR = softndk::hw::kAccessLocalRead;
constexpr std::uint8_t kLW = softndk::hw::kAccessLocalWrite;
constexpr std::uint8_t kRR = softndk::hw::kAccessRemoteRead;
constexpr std::uint8_t kRW = softndk::hw::kAccessRemoteWrite;
constexpr std::uint8_t kBind = softndk::hw::kAccessMwBind;
constexpr std::uint8_t kSink = softndk::hw::kAccessReadSink;

constexpr std::uint32_t kPd = 7;
constexpr std::uint32_t kOtherPd = 8;
constexpr std::uint32_t kQp = 100;
constexpr std::uint32_t kOtherQp = 101;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

constexpr auto kRotate = FastRegisterKeys::kRotate;
constexpr auto kStable = FastRegisterKeys::kStable;

constexpr auto kLocal = AccessOrigin::kLocal;
constexpr auto kRemote = AccessOrigin::kRemote;

struct alignas(4096) Page {
    std::array<std::byte, 4096> bytes{};
};

std::uint8_t next(std::uint32_t token, int step = 1) {
    return static_cast<std::uint8_t>(token_variant(token) + step);
}
std::uint32_t with_variant(std::uint32_t token, std::uint8_t variant) {
    return make_token(token_index(token), variant);
}

// A table plus memory to register.
struct Fixture {
    MemoryProtectionTable table{MptLimits{64, 16}};
    std::vector<Page> memory = std::vector<Page>(16);

    std::byte *page(std::size_t i) { return memory[i].bytes.data(); }

    // A RegisterMr MR over `length` bytes of memory at `iova`. Returns the token.
    std::uint32_t mr(std::uint8_t access, std::uint64_t iova = 0x10000,
                     std::uint64_t length = 0x2000, std::uint32_t pd = kPd) {
        const TokenResult allocated = table.allocate(MptType::kMr, pd);
        REQUIRE(allocated.ok());
        const TokenResult registered = table.register_mr(
            allocated.token, access, iova, length, Translation::contiguous(iova, length, page(0)));
        REQUIRE(registered.ok());
        return registered.token;
    }

    // An initialised fast-register MR (FREE). Returns its token.
    std::uint32_t frmr(bool remote_access, std::uint32_t max_pages = 4, std::uint32_t pd = kPd,
                       FastRegisterKeys keys = kRotate) {
        const TokenResult allocated = table.allocate(MptType::kFastRegMr, pd);
        REQUIRE(allocated.ok());
        REQUIRE(table.init_fast_register(allocated.token, max_pages, remote_access, keys) ==
                KeyStatus::kOk);
        return allocated.token;
    }

    FastRegisterRequest frr(std::uint32_t token, std::uint8_t access, std::size_t page_count = 2,
                            std::uint32_t fbo = 0x80) {
        page_list.assign({page(2), page(3), page(4), page(5), page(6), page(7), page(8)});
        page_list.resize(page_count);
        FastRegisterRequest r;
        r.token = token;
        r.qp_pd = kPd;
        r.access = access;
        r.first_byte_offset = fbo;
        r.iova = 0x7f00'0000'0000 + fbo;
        r.length = page_count * 4096 - fbo;
        r.pages = page_list;
        return r;
    }

    // A type-2 window bound through kQp over [iova, iova + length) of `mr_token`.
    std::uint32_t window2(std::uint32_t mr_token, std::uint8_t access, std::uint64_t iova = 0x10800,
                          std::uint64_t length = 0x400) {
        const TokenResult allocated = table.allocate(MptType::kMwType2, kPd);
        REQUIRE(allocated.ok());
        const std::uint32_t token = with_variant(allocated.token, next(allocated.token));
        REQUIRE(table.bind({token, mr_token, kQp, kPd, access, iova, length}) == KeyStatus::kOk);
        return token;
    }

    EntryInfo info(std::uint32_t token) { return *table.inspect(token_index(token)); }

    std::vector<std::byte *> page_list;
};

// check() shorthand: PD kPd, QP kQp.
KeyCheck use(const MemoryProtectionTable &t, std::uint32_t token, std::uint8_t access,
             std::uint64_t iova, std::uint64_t length, AccessOrigin origin = kRemote,
             std::uint32_t pd = kPd, std::uint32_t qp = kQp) {
    return t.check(token, pd, access, iova, length, qp, origin);
}

}  // namespace

// ---------------------------------------------------------------------------
// Reserved index, allocation
// ---------------------------------------------------------------------------
TEST_CASE("the reserved indexes 0 and 1 (token 0, kRecvListEnd) are never valid", "[mpt]") {
    Fixture f;
    // Every variant of each reserved index, local and remote, any access.
    for (std::uint32_t index = 0; index < softndk::hw::kFirstMptIndex; ++index) {
        for (unsigned v = 0; v < 256; ++v) {
            const auto token = make_token(index, static_cast<std::uint8_t>(v));
            CHECK(softndk::hw::is_reserved_token(token));
            CHECK(use(f.table, token, kLR, 0, 1, kLocal).status == KeyStatus::kIndexOutOfRange);
            CHECK(use(f.table, token, kRR, 0, 1, kRemote).status == KeyStatus::kIndexOutOfRange);
        }
    }
    CHECK(softndk::hw::is_reserved_token(softndk::hw::kRecvListEnd));
    // Fill the table: no reserved index is handed out, everything else exactly once.
    std::set<std::uint32_t> indices;
    for (;;) {
        const TokenResult r = f.table.allocate(MptType::kMwType2, kPd);
        if (!r.ok()) {
            CHECK(r.status == KeyStatus::kTableFull);
            CHECK(r.token == 0);
            break;
        }
        CHECK_FALSE(softndk::hw::is_reserved_token(r.token));
        indices.insert(token_index(r.token));
    }
    CHECK(indices.size() == f.table.capacity() - softndk::hw::kFirstMptIndex);
    CHECK(*indices.begin() == softndk::hw::kFirstMptIndex);
    CHECK(f.table.inspect(0)->type == MptType::kUnallocated);
    CHECK(f.table.inspect(token_index(softndk::hw::kRecvListEnd))->type == MptType::kUnallocated);
    // Every control operation refuses a reserved index before looking at anything else.
    for (const std::uint32_t reserved : {0u, softndk::hw::kRecvListEnd}) {
        CHECK(f.table.deallocate(reserved) == KeyStatus::kIndexOutOfRange);
        CHECK(f.table.register_mr(reserved, kLR, 0x1000, 1, Translation::identity()).status ==
              KeyStatus::kIndexOutOfRange);
        CHECK(f.table.deregister_mr(reserved) == KeyStatus::kIndexOutOfRange);
        CHECK(f.table.init_fast_register(reserved, 1, false, kRotate) ==
              KeyStatus::kIndexOutOfRange);
        CHECK(f.table.fast_register(f.frr(reserved, kLW)) == KeyStatus::kIndexOutOfRange);
        CHECK(f.table.bind({reserved, 0, kQp, kPd, kRR, 0x1000, 1}) == KeyStatus::kIndexOutOfRange);
        CHECK(f.table.local_invalidate(reserved, kQp, kPd) == KeyStatus::kIndexOutOfRange);
        CHECK(f.table.remote_invalidate(reserved, kQp, kPd) == KeyStatus::kIndexOutOfRange);
    }
}

// Fuzz of the allocator: random allocate / privileged / register / fast-register /
// invalidate / deallocate sequences over a small table, so that indexes are reused
// and variants wrap many times. No token any operation hands out may be a reserved
// value (0, kRecvListEnd, or anything else with a reserved index).
TEST_CASE("no sequence of key operations hands out a reserved token", "[mpt]") {
    MemoryProtectionTable table{MptLimits{8, 16}};
    std::vector<Page> memory(2);
    std::uint64_t rng = 0x9e3779b97f4a7c15ull;
    const auto random = [&rng](std::uint32_t bound) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return static_cast<std::uint32_t>(rng % bound);
    };
    std::vector<std::uint32_t> live;  // tokens as last handed out
    std::set<std::uint32_t> seen;
    const auto handed_out = [&](std::uint32_t token) {
        CHECK_FALSE(softndk::hw::is_reserved_token(token));
        seen.insert(token);
    };
    std::uint32_t next_pd = 1;
    for (int step = 0; step < 20000; ++step) {
        const std::uint32_t op = random(6);
        if (op == 0 || live.empty()) {
            const auto type = random(2) == 0 ? MptType::kMr : MptType::kFastRegMr;
            if (const TokenResult r = table.allocate(type, kPd); r.ok()) {
                handed_out(r.token);
                live.push_back(r.token);
            }
            continue;
        }
        if (op == 1) {
            const TokenResult r = table.create_privileged(
                next_pd++, Translation::contiguous(0x1000, 4096, memory[0].bytes.data()));
            if (r.ok()) {
                handed_out(r.token);
                live.push_back(r.token);
            }
            continue;
        }
        const std::size_t i = random(static_cast<std::uint32_t>(live.size()));
        std::uint32_t &token = live[i];
        const auto info = table.inspect(token_index(token));
        REQUIRE(info.has_value());
        if (op == 2 && info->type == MptType::kMr && info->state != MptState::kValid) {
            const TokenResult r =
                table.register_mr(token, kLW, 0x1000, 4096,
                                  Translation::contiguous(0x1000, 4096, memory[1].bytes.data()));
            REQUIRE(r.ok());
            handed_out(r.token);
            token = r.token;
        } else if (op == 3 && info->type == MptType::kFastRegMr) {
            if (info->state == MptState::kInvalid) {
                const auto keys = random(2) == 0 ? kStable : kRotate;
                REQUIRE(table.init_fast_register(token, 1, false, keys) == KeyStatus::kOk);
            } else if (info->state == MptState::kFree) {
                FastRegisterRequest r;
                std::byte *const page = memory[1].bytes.data();
                // Stable MRs keep their token; rotating ones take the next variant (a
                // reused one is refused, which the loop simply tries again later).
                r.token = random(2) == 0 ? token
                                         : make_token(token_index(token),
                                                      static_cast<std::uint8_t>(token + 1));
                r.qp_pd = kPd;
                r.access = kLW;
                r.iova = 0x2000;
                r.length = 4096;
                r.pages = std::span<std::byte *const>(&page, 1);
                if (table.fast_register(r) == KeyStatus::kOk) {
                    token = r.token;
                    handed_out(token);
                }
            } else if (info->state == MptState::kValid) {
                REQUIRE(table.local_invalidate(token, kQp, kPd) == KeyStatus::kOk);
                token = table.inspect(token_index(token))->token;
                handed_out(token);
            }
        } else if (op == 4) {
            REQUIRE(table.deallocate(token) == KeyStatus::kOk);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    CHECK(seen.size() > 100);  // indexes were reused with many variants
}

TEST_CASE("indices at and beyond capacity are out of range", "[mpt]") {
    Fixture f;
    const std::uint32_t cap = f.table.capacity();
    CHECK(use(f.table, make_token(cap, 0), kRR, 0, 1).status == KeyStatus::kIndexOutOfRange);
    CHECK(use(f.table, make_token(cap - 1, 0), kRR, 0, 1).status == KeyStatus::kNotAllocated);
    CHECK(use(f.table, 0xffffffffu, kRR, 0, 1).status == KeyStatus::kIndexOutOfRange);
    CHECK_FALSE(f.table.inspect(cap).has_value());
    // Limits are clamped: at least one usable index, at most 2^24 entries.
    MemoryProtectionTable tiny(MptLimits{0, 1});
    CHECK(tiny.capacity() == softndk::hw::kFirstMptIndex + 1);
    CHECK(tiny.allocate(MptType::kMr, kPd).ok());
    CHECK(tiny.allocate(MptType::kMr, kPd).status == KeyStatus::kTableFull);
}

TEST_CASE("a large table hands out every index, lowest never-used first, and refuses the next",
          "[mpt][scale]") {
    // 3 chunks of entries and a part of a fourth (entries are built as they are used):
    // tokens of indexes never handed out, in chunks never built, are unallocated keys.
    constexpr std::uint32_t kEntries = 3 * 4096 + 100;
    MemoryProtectionTable table(MptLimits{kEntries, 4});
    REQUIRE(table.capacity() == kEntries);
    const std::uint32_t far = make_token(kEntries - 1, 0);
    CHECK(use(table, far, kRR, 0, 1).status == KeyStatus::kNotAllocated);
    CHECK(table.deregister_mr(far) == KeyStatus::kNotAllocated);
    CHECK(table.deallocate(far) == KeyStatus::kNotAllocated);
    CHECK(table.init_fast_register(far, 1, false, kRotate) == KeyStatus::kNotAllocated);
    const auto never = table.inspect(kEntries - 1);
    REQUIRE(never.has_value());
    CHECK(never->type == MptType::kUnallocated);
    std::vector<std::uint32_t> tokens;
    for (std::uint32_t i = softndk::hw::kFirstMptIndex; i < kEntries; ++i) {
        const TokenResult r = table.allocate(MptType::kMr, kPd);
        REQUIRE(r.ok());
        REQUIRE(token_index(r.token) == i);
        tokens.push_back(r.token);
    }
    CHECK(table.allocate(MptType::kMr, kPd).status == KeyStatus::kTableFull);
    // A freed index is the next one handed out, with a token that differs from its old one.
    const std::uint32_t freed = tokens[5000];
    REQUIRE(table.deallocate(freed) == KeyStatus::kOk);
    const TokenResult again = table.allocate(MptType::kMr, kPd);
    REQUIRE(again.ok());
    CHECK(token_index(again.token) == token_index(freed));
    CHECK(again.token != freed);
    CHECK(table.allocate(MptType::kMr, kPd).status == KeyStatus::kTableFull);
    // The last index works as any other.
    static Page page;
    const TokenResult registered =
        table.register_mr(tokens.back(), kLW | kRR, 0x1000, 64,
                          Translation::contiguous(0x1000, 64, page.bytes.data()));
    REQUIRE(registered.ok());
    CHECK(use(table, registered.token, kRR, 0x1000, 64).status == KeyStatus::kOk);
}

TEST_CASE("allocate only creates MRs and windows, in their initial states", "[mpt]") {
    Fixture f;
    CHECK(f.table.allocate(MptType::kUnallocated, kPd).status == KeyStatus::kWrongType);
    CHECK(f.table.allocate(MptType::kPrivileged, kPd).status == KeyStatus::kWrongType);
    CHECK(f.table.allocate(static_cast<MptType>(77), kPd).status == KeyStatus::kWrongType);
    const auto mr = f.table.allocate(MptType::kMr, kPd);
    const auto fr = f.table.allocate(MptType::kFastRegMr, kPd);
    const auto w1 = f.table.allocate(MptType::kMwType1, kPd);
    const auto w2 = f.table.allocate(MptType::kMwType2, kPd);
    CHECK(f.info(mr.token).state == MptState::kInvalid);
    CHECK(f.info(fr.token).state == MptState::kInvalid);
    CHECK(f.info(w1.token).state == MptState::kFree);
    CHECK(f.info(w2.token).state == MptState::kFree);
    CHECK(f.info(w2.token).pd == kPd);
    CHECK(f.info(w2.token).bound_qp == kNoQp);
    CHECK(f.info(w2.token).token == w2.token);
}

TEST_CASE("zero-length accesses need no valid key", "[mpt]") {
    Fixture f;
    // IBA C9-88: a zero-length RDMA READ/WRITE carries no meaningful R_Key/VA; local
    // zero-length SGEs are not looked up either. Any token, any address, any rights.
    for (const std::uint32_t token : {0u, 0xdeadbeefu, make_token(5, 9)}) {
        for (const auto origin : {kLocal, kRemote}) {
            const KeyCheck c = f.table.check(token, kOtherPd, 0, kMax, 0, kOtherQp, origin);
            CHECK(c.ok());
            CHECK(c.syndrome == Syndrome::kSuccess);
            CHECK(c.range.empty());
        }
    }
}

// ---------------------------------------------------------------------------
// The check order
// ---------------------------------------------------------------------------
namespace {

// One key of each kind with every check passing for `use(token, access, iova, 1)`.
struct CheckScene {
    Fixture f;
    std::uint32_t mr = 0;        // VALID MR, LW|RR|RW over [0x10000, 0x12000)
    std::uint32_t window = 0;    // type-2 window, RR|RW over [0x10800, 0x10c00), via kQp
    std::uint32_t stale_mr = 0;  // registered then deregistered (INVALID, same variant)
    std::uint32_t freed = 0;     // deallocated; the index is not on any live entry

    CheckScene() {
        mr = f.mr(kLW | kRR | kRW);
        window = f.window2(mr, kRR | kRW);
        stale_mr = f.mr(kLW | kRR | kRW);
        REQUIRE(f.table.deregister_mr(stale_mr) == KeyStatus::kOk);
        const auto spare = f.table.allocate(MptType::kMwType1, kPd);
        freed = spare.token;
        REQUIRE(f.table.deallocate(freed) == KeyStatus::kOk);
    }
};

}  // namespace

TEST_CASE("check: a key that fails exactly one step reports that step", "[mpt][order]") {
    CheckScene s;
    const auto &t = s.f.table;
    // Baselines pass.
    REQUIRE(use(t, s.mr, kRW, 0x10000, 0x2000).ok());
    REQUIRE(use(t, s.mr, kLW, 0x10000, 0x2000, kLocal).ok());
    REQUIRE(use(t, s.window, kRW, 0x10800, 0x400).ok());

    SECTION("1 index out of range") {
        const auto c = use(t, make_token(t.capacity() + 3, token_variant(s.mr)), kRW, 0x10000, 1);
        CHECK(c.status == KeyStatus::kIndexOutOfRange);
    }
    SECTION("2 entry not allocated") {
        // Same index and variant that once were valid; the entry is gone.
        CHECK(use(t, s.freed, kRW, 0x10000, 1).status == KeyStatus::kNotAllocated);
    }
    SECTION("3 variant differs") {
        CHECK(use(t, with_variant(s.mr, next(s.mr)), kRW, 0x10000, 1).status ==
              KeyStatus::kVariantMismatch);
        CHECK(use(t, with_variant(s.mr, next(s.mr, -1)), kRW, 0x10000, 1).status ==
              KeyStatus::kVariantMismatch);
    }
    SECTION("4 state not VALID") {
        // Deregistered MR keeps its variant, rights and range: only the state fails.
        const EntryInfo info = s.f.info(s.stale_mr);
        CHECK(info.token == s.stale_mr);
        CHECK(info.length == 0x2000);
        CHECK(use(t, s.stale_mr, kRW, 0x10000, 1).status == KeyStatus::kNotValid);
    }
    SECTION("5 PD differs") {
        CHECK(use(t, s.mr, kRW, 0x10000, 1, kRemote, kOtherPd).status == KeyStatus::kPdMismatch);
    }
    SECTION("6 type-2 window used through another QP") {
        CHECK(use(t, s.window, kRW, 0x10800, 1, kRemote, kPd, kOtherQp).status ==
              KeyStatus::kWrongQp);
        // QP binding is a type-2 property: an MR is usable from any QP of its PD.
        CHECK(use(t, s.mr, kRW, 0x10000, 1, kRemote, kPd, kOtherQp).ok());
    }
    SECTION("7 access right missing") {
        const auto read_only = s.f.mr(kRR, 0x40000, 0x1000);
        CHECK(use(t, read_only, kRW, 0x40000, 1).status == KeyStatus::kAccessDenied);
        CHECK(use(t, read_only, kLW, 0x40000, 1, kLocal).status == KeyStatus::kAccessDenied);
        CHECK(use(t, read_only, kRR, 0x40000, 1).ok());
        CHECK(use(t, read_only, kLR, 0x40000, 1, kLocal).ok());  // local read is implicit
        // Asking for nothing is a caller bug, not a free pass.
        CHECK(use(t, s.mr, 0, 0x10000, 1).status == KeyStatus::kAccessDenied);
        // A remote right does not satisfy a local access and vice versa.
        CHECK(use(t, s.mr, kRW, 0x10000, 1, kLocal).status == KeyStatus::kAccessDenied);
        CHECK(use(t, s.mr, kLW, 0x10000, 1, kRemote).status == KeyStatus::kAccessDenied);
        // A window is never an L_Key, whatever the MR under it allows.
        CHECK(use(t, s.window, kLR, 0x10800, 1, kLocal).status == KeyStatus::kAccessDenied);
        // Read sink only if registered as one.
        CHECK(use(t, s.mr, kSink, 0x10000, 1, kLocal).status == KeyStatus::kAccessDenied);
        CHECK(use(t, s.f.mr(kLW | kSink, 0x50000, 0x100), kSink | kLW, 0x50000, 1, kLocal).ok());
    }
    SECTION("8 range outside the key") {
        CHECK(use(t, s.mr, kRW, 0x12000, 1).status == KeyStatus::kOutOfRange);
        CHECK(use(t, s.mr, kRW, 0x0ffff, 1).status == KeyStatus::kOutOfRange);
        CHECK(use(t, s.window, kRW, 0x10c00, 1).status == KeyStatus::kOutOfRange);
        CHECK(use(t, s.window, kRW, 0x107ff, 2).status == KeyStatus::kOutOfRange);
    }
    SECTION("9 logical page not mapped") {
        class OnePage final : public LogicalAddressSpace {
          public:
            explicit OnePage(std::byte *p) : page_(p) {}
            std::byte *resolve_page(std::uint64_t logical) const noexcept override {
                return logical == 0x3000 ? page_ : nullptr;
            }

          private:
            std::byte *page_;
        };
        auto &table = s.f.table;
        const auto priv = table.create_privileged(
            kOtherPd, Translation::logical(std::make_shared<OnePage>(s.f.page(9))));
        REQUIRE(priv.ok());
        CHECK(use(t, priv.token, kLW, 0x3000, 4096, kLocal, kOtherPd).ok());
        const auto c = use(t, priv.token, kLW, 0x3000, 4097, kLocal, kOtherPd);
        CHECK(c.status == KeyStatus::kUnmappedPage);
        CHECK(c.syndrome == Syndrome::kLocalProtection);
    }
}

TEST_CASE("check: every requested right must be granted and not just one of them", "[mpt][order]") {
    Fixture f;
    const std::uint32_t read_only = f.mr(kLW | kRR);
    const std::uint32_t write_only = f.mr(kLW | kRW);
    const auto &t = f.table;
    REQUIRE(use(t, read_only, kRR, 0x10000, 16).ok());
    REQUIRE(use(t, write_only, kRW, 0x10000, 16).ok());
    // Asking for read and write where only one is granted fails, whichever one it is.
    CHECK(use(t, read_only, kRR | kRW, 0x10000, 16).status == KeyStatus::kAccessDenied);
    CHECK(use(t, write_only, kRR | kRW, 0x10000, 16).status == KeyStatus::kAccessDenied);
    // A window granting read only, on an MR that grants both.
    const std::uint32_t both = f.mr(kLW | kRR | kRW);
    const std::uint32_t window = f.window2(both, kRR);
    CHECK(use(t, window, kRR, 0x10800, 16).ok());
    CHECK(use(t, window, kRR | kRW, 0x10800, 16).status == KeyStatus::kAccessDenied);
    CHECK(use(t, both, kRR | kRW, 0x10000, 16).ok());
}

TEST_CASE("check: failure syndromes depend on who accesses", "[mpt][order]") {
    CheckScene s;
    const auto local = use(s.f.table, s.mr, kLW, 0x12000, 1, kLocal);
    CHECK(local.status == KeyStatus::kOutOfRange);
    CHECK(local.syndrome == Syndrome::kLocalProtection);
    CHECK(local.range.empty());
    const auto remote = use(s.f.table, s.mr, kRW, 0x12000, 1, kRemote);
    CHECK(remote.status == KeyStatus::kOutOfRange);
    CHECK(remote.syndrome == Syndrome::kRemoteAccess);
    const auto ok = use(s.f.table, s.mr, kRW, 0x10010, 16, kRemote);
    CHECK(ok.syndrome == Syndrome::kSuccess);
    CHECK(ok.range.iova() == 0x10010);
    CHECK(ok.range.length() == 16);
}

TEST_CASE("check: a key failing two steps reports the earlier one", "[mpt][order]") {
    CheckScene s;
    const auto &t = s.f.table;
    struct Case {
        const char *what;
        KeyCheck result;
        KeyStatus expected;
    };
    const std::uint32_t bad_variant = with_variant(s.mr, next(s.mr));
    const std::vector<Case> cases = {
        {"index + everything else",
         use(t, make_token(t.capacity(), 0), 0, kMax, 2, kLocal, kOtherPd, kOtherQp),
         KeyStatus::kIndexOutOfRange},
        {"unallocated + wrong PD", use(t, s.freed, kRW, 0x10000, 1, kRemote, kOtherPd),
         KeyStatus::kNotAllocated},
        {"variant + PD", use(t, bad_variant, kRW, 0x10000, 1, kRemote, kOtherPd),
         KeyStatus::kVariantMismatch},
        {"variant + range", use(t, bad_variant, kRW, 0x90000, 1), KeyStatus::kVariantMismatch},
        {"state + PD", use(t, s.stale_mr, kRW, 0x10000, 1, kRemote, kOtherPd),
         KeyStatus::kNotValid},
        {"state + range", use(t, s.stale_mr, kRW, 0x90000, 1), KeyStatus::kNotValid},
        {"PD + QP", use(t, s.window, kRW, 0x10800, 1, kRemote, kOtherPd, kOtherQp),
         KeyStatus::kPdMismatch},
        {"PD + access", use(t, s.mr, kSink, 0x10000, 1, kLocal, kOtherPd), KeyStatus::kPdMismatch},
        {"QP + access", use(t, s.window, kLW, 0x10800, 1, kLocal, kPd, kOtherQp),
         KeyStatus::kWrongQp},
        {"QP + range", use(t, s.window, kRW, 0x10000, 1, kRemote, kPd, kOtherQp),
         KeyStatus::kWrongQp},
        {"access + range", use(t, s.window, kLR, 0x10000, 1, kLocal), KeyStatus::kAccessDenied},
        {"access + wrapping range", use(t, s.mr, kLW, kMax, 2, kRemote), KeyStatus::kAccessDenied},
    };
    for (const Case &c : cases) {
        INFO(c.what << ": got " << to_string(c.result.status));
        CHECK(c.result.status == c.expected);
    }
}

TEST_CASE("check: range edges, including iova + length wrapping 2^64", "[mpt][order]") {
    Fixture f;
    const auto mr = f.mr(kLW | kRR, 0x10000, 0x2000);
    CHECK(use(f.table, mr, kRR, 0x10000, 0x2000).ok());  // whole
    CHECK(use(f.table, mr, kRR, 0x11fff, 1).ok());       // exact last byte
    CHECK(use(f.table, mr, kRR, 0x11000, 0x1000).ok());  // ends exactly at end
    CHECK(use(f.table, mr, kRR, 0x11000, 0x1001).status == KeyStatus::kOutOfRange);  // 1 past
    CHECK(use(f.table, mr, kRR, 0x12000, 1).status == KeyStatus::kOutOfRange);
    CHECK(use(f.table, mr, kRR, 0xffff, 1).status == KeyStatus::kOutOfRange);
    CHECK(use(f.table, mr, kRR, 0x10000, 0x2001).status == KeyStatus::kOutOfRange);
    // iova + length wraps to something below the end: 0x11000 + (2^64 - 0x800) = 0x10800.
    CHECK(use(f.table, mr, kRR, 0x11000, kMax - 0x7ff).status == KeyStatus::kOutOfRange);
    CHECK(use(f.table, mr, kRR, 0x10000, kMax).status == KeyStatus::kOutOfRange);
    CHECK(use(f.table, mr, kRR, kMax, 1).status == KeyStatus::kOutOfRange);

    // A key at the very top of the IOVA space.
    const auto top = f.mr(kLW | kRR, kMax - 0xfff, 0x1000);
    CHECK(use(f.table, top, kRR, kMax - 0xfff, 0x1000).ok());
    CHECK(use(f.table, top, kRR, kMax, 1).ok());
    CHECK(use(f.table, top, kRR, kMax, 2).status == KeyStatus::kOutOfRange);
    CHECK(use(f.table, top, kRR, kMax - 0xfff, 0x1001).status == KeyStatus::kOutOfRange);
    // ... and registering one byte more wraps: refused.
    const auto wrap = f.table.allocate(MptType::kMr, kPd);
    CHECK(f.table.register_mr(wrap.token, kLW, kMax - 0xfff, 0x1001, Translation::identity())
              .status == KeyStatus::kInvalidLength);
}

TEST_CASE("check returns a translation that reaches the registered bytes", "[mpt]") {
    Fixture f;
    const auto mr = f.mr(kLW | kRR | kRW, 0x10000, 0x2000);  // backed by f.page(0) onwards
    const auto c = use(f.table, mr, kRW, 0x10100, 8);
    REQUIRE(c.ok());
    const std::array<std::uint8_t, 8> data = {1, 2, 3, 4, 5, 6, 7, 8};
    REQUIRE(c.range.copy_to(0, data.data(), data.size()));
    CHECK(static_cast<std::uint8_t>(f.page(0)[0x100]) == 1);
    CHECK(static_cast<std::uint8_t>(f.page(0)[0x107]) == 8);
    CHECK_FALSE(c.range.copy_to(1, data.data(), data.size()));  // beyond what was checked
}

// ---------------------------------------------------------------------------
// Stale variants
// ---------------------------------------------------------------------------
TEST_CASE("stale variants fail after fast-register, bind, invalidate and reuse", "[mpt]") {
    Fixture f;
    SECTION("fast-register and invalidate") {
        const auto initial = f.frmr(true);
        const auto t1 = with_variant(initial, next(initial));
        REQUIRE(f.table.fast_register(f.frr(t1, kLW | kRR)) == KeyStatus::kOk);
        CHECK(f.info(t1).token == t1);
        CHECK(use(f.table, initial, kRR, 0x7f00'0000'0080, 1).status ==
              KeyStatus::kVariantMismatch);
        REQUIRE(use(f.table, t1, kRR, 0x7f00'0000'0080, 1).ok());

        REQUIRE(f.table.local_invalidate(t1, kQp, kPd) == KeyStatus::kOk);
        // The invalidated token fails at the variant (the device bumped it)...
        CHECK(use(f.table, t1, kRR, 0x7f00'0000'0080, 1).status == KeyStatus::kVariantMismatch);
        // ...and the entry's current token fails at the state.
        const auto after = f.info(t1).token;
        CHECK(after == with_variant(t1, next(t1)));
        CHECK(use(f.table, after, kRR, 0x7f00'0000'0080, 1).status == KeyStatus::kNotValid);

        // The provider's "last + 1" equals the device's bumped variant: accepted.
        REQUIRE(f.table.fast_register(f.frr(after, kLW | kRR)) == KeyStatus::kOk);
        CHECK(use(f.table, after, kRR, 0x7f00'0000'0080, 1).ok());
        CHECK(use(f.table, t1, kRR, 0x7f00'0000'0080, 1).status == KeyStatus::kVariantMismatch);
    }
    SECTION("type-1 rebind") {
        const auto mr = f.mr(kLW | kRR | kRW);
        const auto w = f.table.allocate(MptType::kMwType1, kPd);
        const auto b1 = with_variant(w.token, next(w.token));
        REQUIRE(f.table.bind({b1, mr, kQp, kPd, kRR, 0x10000, 0x100}) == KeyStatus::kOk);
        REQUIRE(use(f.table, b1, kRR, 0x10000, 1).ok());
        const auto b2 = with_variant(w.token, next(w.token, 2));
        REQUIRE(f.table.bind({b2, mr, kQp, kPd, kRR, 0x11000, 0x100}) == KeyStatus::kOk);
        CHECK(use(f.table, b1, kRR, 0x10000, 1).status == KeyStatus::kVariantMismatch);
        CHECK(use(f.table, b2, kRR, 0x11000, 1).ok());
        CHECK(use(f.table, b2, kRR, 0x10000, 1).status == KeyStatus::kOutOfRange);
    }
    SECTION("type-2 bind after invalidate") {
        const auto mr = f.mr(kLW | kRR | kRW);
        const auto w1 = f.window2(mr, kRR);
        REQUIRE(f.table.local_invalidate(w1, kQp, kPd) == KeyStatus::kOk);
        CHECK(use(f.table, w1, kRR, 0x10800, 1).status == KeyStatus::kVariantMismatch);
        const auto w2 = with_variant(w1, next(w1));
        REQUIRE(f.table.bind({w2, mr, kQp, kPd, kRR, 0x10000, 0x10}) == KeyStatus::kOk);
        CHECK(use(f.table, w1, kRR, 0x10000, 1).status == KeyStatus::kVariantMismatch);
        CHECK(use(f.table, w2, kRR, 0x10000, 1).ok());
    }
    SECTION("re-registration") {
        const auto t1 = f.mr(kLW | kRR);
        REQUIRE(f.table.deregister_mr(t1) == KeyStatus::kOk);
        const auto t2 = f.table.register_mr(t1, kRR, 0x20000, 0x100,
                                            Translation::contiguous(0x20000, 0x100, f.page(1)));
        REQUIRE(t2.ok());
        CHECK(token_index(t2.token) == token_index(t1));
        CHECK(t2.token != t1);
        CHECK(use(f.table, t1, kRR, 0x20000, 1).status == KeyStatus::kVariantMismatch);
        CHECK(use(f.table, t2.token, kRR, 0x20000, 1).ok());
    }
    SECTION("index reuse after deallocate") {
        const auto t1 = f.mr(kLW | kRR);
        REQUIRE(f.table.deallocate(t1) == KeyStatus::kOk);
        CHECK(use(f.table, t1, kRR, 0x10000, 1).status == KeyStatus::kNotAllocated);
        const auto again = f.table.allocate(MptType::kMr, kPd);
        REQUIRE(token_index(again.token) == token_index(t1));  // LIFO reuse
        const auto t2 = f.table.register_mr(again.token, kLW | kRR, 0x10000, 0x2000,
                                            Translation::contiguous(0x10000, 0x2000, f.page(0)));
        REQUIRE(t2.ok());
        CHECK(t2.token != t1);
        CHECK(use(f.table, t1, kRR, 0x10000, 1).status == KeyStatus::kVariantMismatch);
        // Control operations with the stale token fail the same way.
        CHECK(f.table.deregister_mr(t1) == KeyStatus::kVariantMismatch);
        CHECK(f.table.deallocate(t1) == KeyStatus::kVariantMismatch);
    }
}

TEST_CASE("a stable fast-register token survives every register / invalidate cycle", "[mpt]") {
    // What drivers do: read the token once after NdkInitializeFastRegisterMr, then use it
    // for every NdkFastRegister of the MR, locally and remotely invalidated in between.
    Fixture f;
    const auto token = f.frmr(true, 4, kPd, kStable);
    for (int cycle = 0; cycle < 300; ++cycle) {  // more cycles than variants
        REQUIRE(f.table.fast_register(f.frr(token, kLW | kRR | kRW)) == KeyStatus::kOk);
        CHECK(f.info(token).token == token);
        CHECK(use(f.table, token, kRW, 0x7f00'0000'0080, 64, kRemote).ok());
        // Between registrations the same token fails on state, not variant.
        const KeyStatus invalidated = cycle % 2 == 0 ? f.table.local_invalidate(token, kQp, kPd)
                                                     : f.table.remote_invalidate(token, kQp, kPd);
        REQUIRE(invalidated == KeyStatus::kOk);
        CHECK(f.info(token).token == token);
        CHECK(use(f.table, token, kRW, 0x7f00'0000'0080, 64, kRemote).status ==
              KeyStatus::kNotValid);
    }
    // A stable MR refuses a token with another variant: there is only one.
    CHECK(f.table.fast_register(f.frr(with_variant(token, next(token)), kLW)) ==
          KeyStatus::kVariantMismatch);
    // A window's token still rotates on invalidation (its policy is not the MR's).
    const auto mr = f.mr(kLW | kRR | kRW);
    const auto w = f.window2(mr, kRR);
    REQUIRE(f.table.local_invalidate(w, kQp, kPd) == KeyStatus::kOk);
    CHECK(f.info(w).token != w);
}

TEST_CASE("a new variant equal to the last valid one is refused", "[mpt]") {
    Fixture f;
    SECTION("fast register") {
        const auto t0 = f.frmr(false);
        // Never valid yet: the allocation variant itself is acceptable.
        REQUIRE(f.table.fast_register(f.frr(t0, kLW)) == KeyStatus::kOk);
        REQUIRE(f.table.local_invalidate(t0, kQp, kPd) == KeyStatus::kOk);
        CHECK(f.table.fast_register(f.frr(t0, kLW)) == KeyStatus::kVariantReused);
        CHECK(f.table.fast_register(f.frr(with_variant(t0, next(t0, 5)), kLW)) == KeyStatus::kOk);
    }
    SECTION("bind") {
        const auto mr = f.mr(kLW | kRR | kRW);
        const auto w = f.window2(mr, kRR);
        REQUIRE(f.table.local_invalidate(w, kQp, kPd) == KeyStatus::kOk);
        CHECK(f.table.bind({w, mr, kQp, kPd, kRR, 0x10000, 1}) == KeyStatus::kVariantReused);
        const auto w1 = f.table.allocate(MptType::kMwType1, kPd).token;
        const auto b = with_variant(w1, next(w1));
        REQUIRE(f.table.bind({b, mr, kQp, kPd, kRR, 0x10000, 1}) == KeyStatus::kOk);
        CHECK(f.table.bind({b, mr, kQp, kPd, kRR, 0x10000, 2}) == KeyStatus::kVariantReused);
    }
    SECTION("wrap-around of the variant byte") {
        const auto t0 = f.frmr(false);
        auto token = with_variant(t0, 0xff);
        REQUIRE(f.table.fast_register(f.frr(token, kLW)) == KeyStatus::kOk);
        REQUIRE(f.table.local_invalidate(token, kQp, kPd) == KeyStatus::kOk);
        CHECK(token_variant(f.info(token).token) == 0x00);
        REQUIRE(f.table.fast_register(f.frr(with_variant(token, 0x00), kLW)) == KeyStatus::kOk);
    }
}

// ---------------------------------------------------------------------------
// RegisterMr / DeregisterMr
// ---------------------------------------------------------------------------
TEST_CASE("register and deregister", "[mpt]") {
    Fixture f;
    const auto a = f.table.allocate(MptType::kMr, kPd).token;
    const auto mem = Translation::contiguous(0x10000, 0x1000, f.page(0));
    SECTION("rights validation") {
        CHECK(f.table.register_mr(a, kRW, 0x10000, 0x1000, mem).status ==
              KeyStatus::kInvalidAccess);  // remote write needs local write
        CHECK(f.table.register_mr(a, 0x40, 0x10000, 0x1000, mem).status ==
              KeyStatus::kInvalidAccess);  // unknown bit
        const auto ok = f.table.register_mr(a, kRR, 0x10000, 0x1000, mem);
        REQUIRE(ok.ok());
        // Local read is implicit; every RegisterMr MR may have windows bound (NDK has no
        // bind right).
        CHECK(f.info(ok.token).access == (kRR | kLR | kBind));
        CHECK(f.info(ok.token).state == MptState::kValid);
        CHECK(f.info(ok.token).translation == mem);
    }
    SECTION("parameter validation comes after the entry checks") {
        CHECK(f.table.register_mr(a, kLW, 0x10000, 0, mem).status == KeyStatus::kInvalidLength);
        CHECK(f.table.register_mr(a, kLW, 0x10000, 0x1001, mem).status ==
              KeyStatus::kBadTranslation);
        CHECK(f.table.register_mr(a, kLW, 0x10000, 0x1000, nullptr).status ==
              KeyStatus::kBadTranslation);
        const auto fr = f.table.allocate(MptType::kFastRegMr, kPd).token;
        CHECK(f.table.register_mr(fr, kLW, 0x10000, 0, nullptr).status == KeyStatus::kWrongType);
    }
    SECTION("state machine") {
        const auto t = f.table.register_mr(a, kLW, 0x10000, 0x1000, mem).token;
        CHECK(f.table.register_mr(t, kLW, 0x10000, 0x1000, mem).status == KeyStatus::kAlreadyValid);
        REQUIRE(f.table.deregister_mr(t) == KeyStatus::kOk);
        CHECK(f.info(t).state == MptState::kInvalid);
        CHECK(f.info(t).translation == nullptr);  // bytes released
        CHECK(f.table.deregister_mr(t) == KeyStatus::kNotValid);
        CHECK(f.table.register_mr(t, kLW, 0x10000, 0x1000, mem).ok());
        // Not for fast-register MRs or windows.
        const auto fr = f.frmr(false);
        CHECK(f.table.deregister_mr(fr) == KeyStatus::kWrongType);
    }
}

// ---------------------------------------------------------------------------
// Fast registration
// ---------------------------------------------------------------------------
TEST_CASE("init fast register", "[mpt][fast-register]") {
    Fixture f;  // limit 16 pages per MR
    const auto t = f.table.allocate(MptType::kFastRegMr, kPd).token;
    CHECK(f.table.init_fast_register(t, 0, false, kRotate) == KeyStatus::kBadPageCount);
    CHECK(f.table.init_fast_register(t, 17, false, kRotate) == KeyStatus::kBadPageCount);
    REQUIRE(f.table.init_fast_register(t, 16, true, kRotate) == KeyStatus::kOk);
    CHECK(f.info(t).state == MptState::kFree);
    CHECK(f.info(t).max_pages == 16);
    CHECK(f.info(t).remote_access_enabled);
    // Again while FREE (NDK allows repeated initialisation) ...
    REQUIRE(f.table.init_fast_register(t, 2, false, kRotate) == KeyStatus::kOk);
    CHECK(f.info(t).max_pages == 2);
    // ... but not while VALID.
    REQUIRE(f.table.fast_register(f.frr(t, kLW)) == KeyStatus::kOk);
    CHECK(f.table.init_fast_register(t, 2, false, kRotate) == KeyStatus::kAlreadyValid);
    const auto mr = f.table.allocate(MptType::kMr, kPd).token;
    CHECK(f.table.init_fast_register(mr, 2, false, kRotate) == KeyStatus::kWrongType);
}

TEST_CASE("fast register rules", "[mpt][fast-register]") {
    Fixture f;
    const auto t = f.frmr(/*remote_access=*/false, /*max_pages=*/4);
    const auto remote = f.frmr(/*remote_access=*/true, /*max_pages=*/4);

    SECTION("success: VALID, rights plus local read, page-list translation") {
        auto r = f.frr(t, kLW, 3, 0x80);
        REQUIRE(f.table.fast_register(r) == KeyStatus::kOk);
        const EntryInfo info = f.info(t);
        CHECK(info.state == MptState::kValid);
        CHECK(info.access == (kLW | kLR));
        CHECK(info.iova == r.iova);
        CHECK(info.length == 3 * 4096 - 0x80);
        REQUIRE(info.translation != nullptr);
        CHECK(info.translation->kind() == Translation::Kind::kPageList);
        // The bytes land in the listed pages.
        const auto c = use(f.table, t, kLW, r.iova + 4096 - 0x80, 2, kLocal);  // page 1 start
        REQUIRE(c.ok());
        const std::array<std::byte, 2> two = {std::byte{0x5a}, std::byte{0xa5}};
        REQUIRE(c.range.copy_to(0, two.data(), 2));
        CHECK(f.page(3)[0] == std::byte{0x5a});
    }
    SECTION("maximum length exactly, one byte more") {
        auto r = f.frr(t, kLW, 4, 0x123);
        r.iova = 0x5000'0123;
        r.length = 4 * 4096 - 0x123;
        CHECK(f.table.fast_register(r) == KeyStatus::kOk);
        REQUIRE(f.table.local_invalidate(t, kQp, kPd) == KeyStatus::kOk);
        r.token = f.info(t).token;
        r.length += 1;
        CHECK(f.table.fast_register(r) == KeyStatus::kInvalidLength);
        r.length = 0;
        CHECK(f.table.fast_register(r) == KeyStatus::kInvalidLength);
    }
    SECTION("FBO must be < 4096 and iova = FBO (mod 4096)") {
        auto r = f.frr(t, kLW, 2, 0x80);
        r.iova += 1;  // misaligned against the FBO
        CHECK(f.table.fast_register(r) == KeyStatus::kBadFirstByteOffset);
        r = f.frr(t, kLW, 2, 0);
        r.first_byte_offset = 4096;
        r.iova = 0x7000'1000;
        CHECK(f.table.fast_register(r) == KeyStatus::kBadFirstByteOffset);
        // iova 0 is allowed only with FBO 0 (NDK) - which is the same congruence rule.
        r = f.frr(t, kLW, 1, 0);
        r.iova = 0;
        CHECK(f.table.fast_register(r) == KeyStatus::kOk);
    }
    SECTION("iova + length must not wrap") {
        auto r = f.frr(t, kLW, 2, 0);
        r.iova = kMax - 4095;  // = 0 (mod 4096); room for exactly one page
        r.length = 4097;
        CHECK(f.table.fast_register(r) == KeyStatus::kInvalidLength);
        r.length = 4096;
        CHECK(f.table.fast_register(r) == KeyStatus::kOk);
    }
    SECTION("the MR must be FREE") {
        REQUIRE(f.table.fast_register(f.frr(t, kLW)) == KeyStatus::kOk);
        CHECK(f.table.fast_register(f.frr(with_variant(t, next(t)), kLW)) == KeyStatus::kNotFree);
        // Allocated but never initialised: INVALID, not FREE.
        const auto raw = f.table.allocate(MptType::kFastRegMr, kPd).token;
        CHECK(f.table.fast_register(f.frr(raw, kLW)) == KeyStatus::kNotFree);
    }
    SECTION("remote rights only if initialised with remote access") {
        CHECK(f.table.fast_register(f.frr(t, kLW | kRR)) == KeyStatus::kRemoteAccessNotEnabled);
        CHECK(f.table.fast_register(f.frr(t, kLW | kRW)) == KeyStatus::kRemoteAccessNotEnabled);
        CHECK(f.table.fast_register(f.frr(remote, kLW | kRR | kRW)) == KeyStatus::kOk);
        CHECK(use(f.table, remote, kRW, f.frr(remote, 0).iova, 8).ok());
    }
    SECTION("rights validation") {
        CHECK(f.table.fast_register(f.frr(remote, kRW)) == KeyStatus::kInvalidAccess);
        CHECK(f.table.fast_register(f.frr(remote, kLW | kBind)) == KeyStatus::kInvalidAccess);
        CHECK(f.table.fast_register(f.frr(remote, kLW | kSink)) == KeyStatus::kOk);
    }
    SECTION("same PD as the QP") {
        auto r = f.frr(t, kLW);
        r.qp_pd = kOtherPd;
        CHECK(f.table.fast_register(r) == KeyStatus::kPdMismatch);
    }
    SECTION("page count within the MR's limit") {
        CHECK(f.table.fast_register(f.frr(t, kLW, 5, 0)) == KeyStatus::kBadPageCount);
        auto r = f.frr(t, kLW, 1, 0);
        r.pages = {};
        CHECK(f.table.fast_register(r) == KeyStatus::kBadPageCount);
        CHECK(f.table.fast_register(f.frr(t, kLW, 4, 0)) == KeyStatus::kOk);
    }
    SECTION("pages must be non-null and aligned") {
        auto r = f.frr(t, kLW, 2, 0);
        f.page_list[1] = nullptr;
        CHECK(f.table.fast_register(r) == KeyStatus::kBadPage);
        f.page_list[1] = f.page(5) + 512;
        CHECK(f.table.fast_register(r) == KeyStatus::kBadPage);
    }
    SECTION("only the variant may change: the index names the entry") {
        const auto mr = f.table.allocate(MptType::kMr, kPd).token;
        CHECK(f.table.fast_register(f.frr(mr, kLW)) == KeyStatus::kWrongType);
        const auto w = f.table.allocate(MptType::kMwType2, kPd).token;
        CHECK(f.table.fast_register(f.frr(w, kLW)) == KeyStatus::kWrongType);
        CHECK(f.table.fast_register(f.frr(make_token(f.table.capacity() - 1, 0), kLW)) ==
              KeyStatus::kNotAllocated);
    }
    SECTION("entry checks are reported before parameter checks") {
        REQUIRE(f.table.fast_register(f.frr(t, kLW)) == KeyStatus::kOk);
        auto r = f.frr(with_variant(t, next(t)), kRW /* invalid */, 9 /* too many */, 4096);
        CHECK(f.table.fast_register(r) == KeyStatus::kNotFree);
        REQUIRE(f.table.local_invalidate(t, kQp, kPd) == KeyStatus::kOk);
        r.token = f.info(t).token;
        CHECK(f.table.fast_register(r) == KeyStatus::kRemoteAccessNotEnabled);
        r.access = kLW;
        CHECK(f.table.fast_register(r) == KeyStatus::kBadPageCount);
        r = f.frr(r.token, kRW, 2, 4096);
        CHECK(f.table.fast_register(r) == KeyStatus::kRemoteAccessNotEnabled);
    }
}

// ---------------------------------------------------------------------------
// Memory windows
// ---------------------------------------------------------------------------
TEST_CASE("bind rules", "[mpt][bind]") {
    Fixture f;
    const auto mr = f.mr(kLW | kRR | kRW, 0x10000, 0x2000);
    const auto w2 = f.table.allocate(MptType::kMwType2, kPd).token;
    const auto nw = with_variant(w2, next(w2));
    auto bind = [&](std::uint32_t mw, std::uint32_t parent, std::uint8_t access,
                    std::uint64_t iova = 0x10000, std::uint64_t length = 0x100,
                    std::uint32_t qp = kQp, std::uint32_t pd = kPd) {
        return f.table.bind({mw, parent, qp, pd, access, iova, length});
    };

    SECTION("type 2: binds to the QP, counts on the MR, shares its translation") {
        REQUIRE(bind(nw, mr, kRR | kRW) == KeyStatus::kOk);
        const EntryInfo w = f.info(nw);
        CHECK(w.state == MptState::kValid);
        CHECK(w.bound_qp == kQp);
        CHECK(w.parent_index == token_index(mr));
        CHECK(w.translation == f.info(mr).translation);
        CHECK(f.info(mr).bound_windows == 1);
        // Bound windows are not rebound: type 2 must be FREE.
        CHECK(bind(with_variant(nw, next(nw)), mr, kRR) == KeyStatus::kNotFree);
    }
    SECTION("window and QP must share a PD; MR and window too") {
        CHECK(bind(nw, mr, kRR, 0x10000, 0x100, kQp, kOtherPd) == KeyStatus::kPdMismatch);
        const auto other_mr = f.mr(kLW | kRR, 0x30000, 0x1000, kOtherPd);
        CHECK(bind(nw, other_mr, kRR, 0x30000) == KeyStatus::kPdMismatch);
    }
    SECTION("parent must be a valid MR with the bind right") {
        CHECK(bind(nw, with_variant(mr, next(mr)), kRR) == KeyStatus::kVariantMismatch);
        CHECK(bind(nw, make_token(f.table.capacity(), 0), kRR) == KeyStatus::kIndexOutOfRange);
        CHECK(bind(nw, make_token(f.table.capacity() - 1, 0), kRR) == KeyStatus::kNotAllocated);
        const auto unregistered = f.table.allocate(MptType::kMr, kPd).token;
        CHECK(bind(nw, unregistered, kRR) == KeyStatus::kNotValid);
        // Fast-register MRs never carry the bind right (see mpt.hpp).
        const auto fr = f.frmr(true);
        auto r = f.frr(fr, kLW | kRR);
        REQUIRE(f.table.fast_register(r) == KeyStatus::kOk);
        CHECK(bind(nw, fr, kRR, r.iova, 16) == KeyStatus::kNoBindRight);
        // Nor do windows.
        const auto other_window = f.window2(mr, kRR);
        CHECK(bind(nw, other_window, kRR, 0x10800, 16) == KeyStatus::kNoBindRight);
    }
    SECTION("remote-write window needs local write on the MR") {
        const auto ro = f.mr(kRR, 0x40000, 0x1000);
        CHECK(bind(nw, ro, kRW, 0x40000) == KeyStatus::kInvalidAccess);
        CHECK(bind(nw, ro, kRR, 0x40000) == KeyStatus::kOk);
    }
    SECTION("window rights are remote only") {
        CHECK(bind(nw, mr, kLW) == KeyStatus::kInvalidAccess);
        CHECK(bind(nw, mr, kRR | kBind) == KeyStatus::kInvalidAccess);
    }
    SECTION("window range inside the MR, overflow-safe") {
        CHECK(bind(nw, mr, kRR, 0x11f00, 0x100) == KeyStatus::kOk);  // ends exactly at the end
        const auto w = f.table.allocate(MptType::kMwType2, kPd).token;
        const auto n = with_variant(w, next(w));
        CHECK(bind(n, mr, kRR, 0x11f00, 0x101) == KeyStatus::kOutOfRange);
        CHECK(bind(n, mr, kRR, 0xff00, 0x200) == KeyStatus::kOutOfRange);
        CHECK(bind(n, mr, kRR, 0x11000, kMax - 0x7ff) == KeyStatus::kOutOfRange);  // wraps
    }
    SECTION("zero length: type 2 refused, type 1 unbinds") {
        CHECK(bind(nw, mr, kRR, 0x10000, 0) == KeyStatus::kInvalidLength);
        const auto w1 = f.table.allocate(MptType::kMwType1, kPd).token;
        const auto b1 = with_variant(w1, next(w1));
        REQUIRE(bind(b1, mr, kRR) == KeyStatus::kOk);
        CHECK(f.info(mr).bound_windows == 1);
        const auto b2 = with_variant(w1, next(w1, 2));
        REQUIRE(bind(b2, 0, 0, 0, 0) == KeyStatus::kOk);  // MR ignored when unbinding
        CHECK(f.info(b2).state == MptState::kFree);
        CHECK(f.info(mr).bound_windows == 0);
        CHECK(use(f.table, b1, kRR, 0x10000, 1).status == KeyStatus::kVariantMismatch);
        CHECK(use(f.table, b2, kRR, 0x10000, 1).status == KeyStatus::kNotValid);
    }
    SECTION("type 1: usable from any QP of the PD; rebind moves the window") {
        const auto other = f.mr(kLW | kRR, 0x30000, 0x1000);
        const auto w1 = f.table.allocate(MptType::kMwType1, kPd).token;
        const auto b1 = with_variant(w1, next(w1));
        REQUIRE(bind(b1, mr, kRR) == KeyStatus::kOk);
        CHECK(f.info(b1).bound_qp == kNoQp);
        CHECK(use(f.table, b1, kRR, 0x10000, 1, kRemote, kPd, kOtherQp).ok());
        const auto b2 = with_variant(w1, next(w1, 2));
        REQUIRE(bind(b2, other, kRR, 0x30000) == KeyStatus::kOk);
        CHECK(f.info(mr).bound_windows == 0);
        CHECK(f.info(other).bound_windows == 1);
        // Rebinding to the same MR keeps the count.
        const auto b3 = with_variant(w1, next(w1, 3));
        REQUIRE(bind(b3, other, kRR, 0x30010) == KeyStatus::kOk);
        CHECK(f.info(other).bound_windows == 1);
    }
    SECTION("not a window") {
        CHECK(bind(mr, mr, kRR) == KeyStatus::kWrongType);
        CHECK(bind(make_token(f.table.capacity() - 1, 0), mr, kRR) == KeyStatus::kNotAllocated);
    }
}

// ---------------------------------------------------------------------------
// Invalidation, deregistration with bound windows
// ---------------------------------------------------------------------------
TEST_CASE("an MR with bound windows cannot be deregistered, freed or invalidated", "[mpt]") {
    Fixture f;
    const auto mr = f.mr(kLW | kRR | kRW);
    const auto w = f.window2(mr, kRR);
    CHECK(f.table.deregister_mr(mr) == KeyStatus::kBoundWindows);
    CHECK(f.table.deallocate(mr) == KeyStatus::kBoundWindows);
    // A RegisterMr MR is never invalidated (NDK: deregister it) - that rule comes first.
    CHECK(f.table.local_invalidate(mr, kQp, kPd) == KeyStatus::kWrongType);
    CHECK(f.info(mr).state == MptState::kValid);
    CHECK(use(f.table, w, kRR, 0x10800, 1).ok());

    SECTION("invalidating the window releases the MR") {
        REQUIRE(f.table.local_invalidate(w, kQp, kPd) == KeyStatus::kOk);
        CHECK(f.info(mr).bound_windows == 0);
        CHECK(f.table.deregister_mr(mr) == KeyStatus::kOk);
    }
    SECTION("freeing the window releases the MR") {
        REQUIRE(f.table.deallocate(w) == KeyStatus::kOk);
        CHECK(f.info(mr).bound_windows == 0);
        CHECK(f.table.deallocate(mr) == KeyStatus::kOk);
    }
}

TEST_CASE("invalidate rules", "[mpt][invalidate]") {
    Fixture f;
    const auto mr = f.mr(kLW | kRR | kRW);
    const auto w = f.window2(mr, kRR);
    const auto fr = f.frmr(true);
    REQUIRE(f.table.fast_register(f.frr(fr, kLW | kRR)) == KeyStatus::kOk);

    SECTION("key must match, variant included") {
        CHECK(f.table.local_invalidate(with_variant(fr, next(fr)), kQp, kPd) ==
              KeyStatus::kVariantMismatch);
        CHECK(f.table.remote_invalidate(with_variant(w, next(w)), kQp, kPd) ==
              KeyStatus::kVariantMismatch);
        CHECK(f.table.local_invalidate(make_token(f.table.capacity() - 1, 0), kQp, kPd) ==
              KeyStatus::kNotAllocated);
    }
    SECTION("only fast-register MRs and type-2 windows") {
        CHECK(f.table.local_invalidate(mr, kQp, kPd) == KeyStatus::kWrongType);
        const auto w1 = f.table.allocate(MptType::kMwType1, kPd).token;
        const auto b1 = with_variant(w1, next(w1));
        REQUIRE(f.table.bind({b1, mr, kQp, kPd, kRR, 0x10000, 1}) == KeyStatus::kOk);
        CHECK(f.table.local_invalidate(b1, kQp, kPd) == KeyStatus::kWrongType);
        CHECK(f.table.remote_invalidate(b1, kQp, kPd) == KeyStatus::kWrongType);
        const auto priv = f.table.create_privileged(kPd, Translation::identity()).token;
        CHECK(f.table.local_invalidate(priv, kQp, kPd) == KeyStatus::kWrongType);
    }
    SECTION("only a VALID key") {
        REQUIRE(f.table.local_invalidate(fr, kQp, kPd) == KeyStatus::kOk);
        CHECK(f.table.local_invalidate(f.info(fr).token, kQp, kPd) == KeyStatus::kNotValid);
    }
    SECTION("same PD as the QP") {
        CHECK(f.table.local_invalidate(fr, kQp, kOtherPd) == KeyStatus::kPdMismatch);
        CHECK(f.table.remote_invalidate(w, kQp, kOtherPd) == KeyStatus::kPdMismatch);
    }
    SECTION("type-2 window only through its QP") {
        CHECK(f.table.local_invalidate(w, kOtherQp, kPd) == KeyStatus::kWrongQp);
        CHECK(f.table.remote_invalidate(w, kOtherQp, kPd) == KeyStatus::kWrongQp);
        CHECK(f.table.remote_invalidate(w, kQp, kPd) == KeyStatus::kOk);
        CHECK(f.info(w).state == MptState::kFree);
        CHECK(f.info(w).bound_qp == kNoQp);
        CHECK(f.info(w).translation == nullptr);
    }
    SECTION("remote invalidation needs a key the peer could have been given") {
        const auto local_only = f.frmr(false);
        REQUIRE(f.table.fast_register(f.frr(local_only, kLW)) == KeyStatus::kOk);
        CHECK(f.table.remote_invalidate(local_only, kQp, kPd) == KeyStatus::kAccessDenied);
        CHECK(f.table.local_invalidate(local_only, kQp, kPd) == KeyStatus::kOk);
        CHECK(f.table.remote_invalidate(fr, kOtherQp, kPd) == KeyStatus::kOk);  // MR: any QP
    }
}

// ---------------------------------------------------------------------------
// Privileged keys
// ---------------------------------------------------------------------------
TEST_CASE("the privileged token grants local read and write only", "[mpt]") {
    Fixture f;
    const auto priv = f.table.create_privileged(kPd, Translation::identity());
    REQUIRE(priv.ok());
    CHECK(f.info(priv.token).type == MptType::kPrivileged);
    CHECK(f.info(priv.token).access == (kLR | kLW));

    // Embedded: logical address == host address.
    std::array<std::uint8_t, 32> host{};
    const auto address = reinterpret_cast<std::uint64_t>(host.data());
    const auto w = use(f.table, priv.token, kLW, address + 4, 4, kLocal);
    REQUIRE(w.ok());
    const std::uint32_t value = 0x01020304;
    REQUIRE(w.range.copy_to(0, &value, 4));
    CHECK(host[4] == 0x04);
    CHECK(use(f.table, priv.token, kLR | kLW, address, host.size(), kLocal).ok());

    // Never remote, never a read sink, never another PD's.
    for (const std::uint8_t remote_right : {kRR, kRW}) {
        const auto c = use(f.table, priv.token, remote_right, address, 4, kRemote);
        CHECK(c.status == KeyStatus::kAccessDenied);
        CHECK(c.syndrome == Syndrome::kRemoteAccess);
    }
    CHECK(use(f.table, priv.token, kSink, address, 4, kLocal).status == KeyStatus::kAccessDenied);
    CHECK(use(f.table, priv.token, kLR, address, 4, kLocal, kOtherPd).status ==
          KeyStatus::kPdMismatch);

    // One per PD.
    CHECK(f.table.create_privileged(kPd, Translation::identity()).status ==
          KeyStatus::kPrivilegedExists);
    CHECK(f.table.create_privileged(kOtherPd, nullptr).status == KeyStatus::kBadTranslation);
    const auto other = f.table.create_privileged(kOtherPd, Translation::identity());
    REQUIRE(other.ok());
    // Not a window parent, not deregisterable, not fast-registrable.
    const auto mw = f.table.allocate(MptType::kMwType2, kPd).token;
    CHECK(f.table.bind({with_variant(mw, next(mw)), priv.token, kQp, kPd, kRR, address, 4}) ==
          KeyStatus::kNoBindRight);
    CHECK(f.table.deregister_mr(priv.token) == KeyStatus::kWrongType);
    CHECK(f.table.fast_register(f.frr(priv.token, kLW)) == KeyStatus::kWrongType);
    // Freed with the PD; then the PD may get a new one.
    REQUIRE(f.table.deallocate(priv.token) == KeyStatus::kOk);
    CHECK(use(f.table, priv.token, kLR, address, 4, kLocal).status == KeyStatus::kNotAllocated);
    CHECK(f.table.create_privileged(kPd, Translation::identity()).ok());
}

// ---------------------------------------------------------------------------
// Names and syndromes
// ---------------------------------------------------------------------------
TEST_CASE("syndromes and names", "[mpt]") {
    CHECK(syndrome_for(KeyOperation::kLocalAccess, KeyStatus::kOk) == Syndrome::kSuccess);
    CHECK(syndrome_for(KeyOperation::kLocalAccess, KeyStatus::kOutOfRange) ==
          Syndrome::kLocalProtection);
    CHECK(syndrome_for(KeyOperation::kRemoteAccess, KeyStatus::kPdMismatch) ==
          Syndrome::kRemoteAccess);
    CHECK(syndrome_for(KeyOperation::kFastRegister, KeyStatus::kNotFree) ==
          Syndrome::kLocalProtection);
    CHECK(syndrome_for(KeyOperation::kBind, KeyStatus::kNoBindRight) ==
          Syndrome::kMemoryWindowBind);
    CHECK(syndrome_for(KeyOperation::kLocalInvalidate, KeyStatus::kBoundWindows) ==
          Syndrome::kLocalProtection);
    CHECK(syndrome_for(KeyOperation::kRemoteInvalidate, KeyStatus::kWrongQp) ==
          Syndrome::kRemoteInvalidRequest);

    CHECK(to_string(KeyStatus::kOk) == "ok");
    CHECK(to_string(KeyStatus::kVariantMismatch) == "variant_mismatch");
    CHECK(to_string(KeyStatus::kPrivilegedExists) == "privileged_exists");
    CHECK(to_string(static_cast<KeyStatus>(200)) == "unknown");
    CHECK(to_string(MptType::kMwType2) == "mw_type2");
    CHECK(to_string(MptState::kFree) == "free");
    // Every status has its own name.
    std::set<std::string_view> names;
    for (int s = 0; s <= static_cast<int>(KeyStatus::kPrivilegedExists); ++s) {
        names.insert(to_string(static_cast<KeyStatus>(s)));
    }
    CHECK(names.size() == static_cast<std::size_t>(KeyStatus::kPrivilegedExists) + 1);
    CHECK_FALSE(names.contains("unknown"));
}
