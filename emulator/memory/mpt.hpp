// mpt.hpp - the memory protection table (MPT): the device's key block.
//
// Every memory region, memory window and per-PD privileged key owns one MPT entry. The
// 32-bit token the consumer sees is hw::make_token(index, variant) = index << 8 | variant
// (hw_interface.hpp section 2, docs/prm.md section 2). The entry holds the key's type,
// state, PD, access rights, IOVA range and its Translation (mtt.hpp). The reserved indexes
// below hw::kFirstMptIndex (0, and 1 which holds the receive-list end marker kRecvListEnd)
// are never allocated, so no token the table hands out is a reserved value and every token
// with a reserved index fails its check.
//
// Entry types and their life cycles (rxe_mr.c / rxe_mw.c, rnic-model.md section 1.4):
//
//   kMr          allocate -> INVALID --register_mr--> VALID --deregister_mr--> INVALID ...
//                (NdkCreateMr(FastRegister=FALSE) + NdkRegisterMr / NdkDeregisterMr)
//   kFastRegMr   allocate -> INVALID --init_fast_register--> FREE --fast_register--> VALID
//                --local/remote_invalidate--> FREE --fast_register--> VALID ...
//                (NdkCreateMr(TRUE) + NdkInitializeFastRegisterMr, FastRegister/Invalidate WRs)
//   kMwType1     allocate -> FREE --bind--> VALID --bind (rebind)--> VALID
//                --bind with length 0 (unbind)--> FREE. Not invalidatable.
//   kMwType2     allocate -> FREE --bind (must be FREE)--> VALID, usable only from the QP
//                it was bound through --local/remote_invalidate--> FREE ...
//                NdkBind is a work request and NdkInvalidate/SendAndInvalidate target
//                windows, so NDK windows are type 2 semantics; type 1 exists for
//                completeness (and verbs interop) and is never produced by NDK.
//   kPrivileged  create_privileged -> VALID until deallocate. One per PD, local read and
//                local write only; its IOVAs are adapter logical addresses (LAM), mapped
//                by the translation given at creation (Translation::identity() embedded,
//                Translation::logical() in daemon mode).
// Leaving VALID (deregister, invalidate) drops the entry's translation at once but keeps
// its rights and range for inspect(), as rxe keeps them; the state check fails first.
//
// Variants ("stale tokens fail"):
//   - Transitions the provider learns of synchronously (commands) get a device-chosen
//     variant that the command returns: register_mr bumps the variant and returns the new
//     token. deallocate bumps it too, so a re-allocated index never repeats the last token.
//   - Work requests that make a key valid carry the new variant chosen by the provider,
//     because NDK hands the token to the consumer when the post returns
//     (NdkGetRemoteTokenFromMr/Mw): fast_register and bind take the index from the token
//     (it must not change) and the new variant from its low byte. The device refuses a
//     new variant equal to the one the entry was last VALID with (kVariantReused), so the
//     token that was valid before can never silently come back.
//   - Invalidation (local or remote) bumps the variant by one (the provider does not
//     choose it), so the invalidated token fails at the variant check. A provider that
//     picks "last handed-out variant + 1" for its next post is compatible with this,
//     whether or not an invalidation happened in between.
//   - Exception: a fast-register MR initialised with FastRegisterKeys::kStable (the
//     default profile) keeps one token for life: invalidation leaves its variant alone
//     and FAST_REGISTER must carry that same token (see FastRegisterKeys).
//   - deregister_mr leaves the variant alone (the MR is INVALID; register bumps).
//   The 8-bit variant wraps, as in IBA: 256 re-registrations bring a token back.
//
// The data-path check (check()) runs these steps IN THIS ORDER and reports the first
// failure; a check that fails several steps reports the earliest:
//   0. length == 0: succeed at once with an empty range, nothing is looked up. IBA C9-88:
//      a zero-length RDMA READ/WRITE need not carry a valid R_Key or VA; for local SGEs
//      rxe's copy_data() likewise never looks up the L_Key of a zero-length buffer. The
//      same rule for both keeps "zero bytes move" free of protection errors.
//   1. index in range:      kFirstMptIndex <= token_index(token) < capacity -> kIndexOutOfRange
//   2. entry exists:        the entry is allocated                 -> kNotAllocated
//   3. variant matches:     token_variant(token) == entry variant  -> kVariantMismatch
//   4. state VALID                                                 -> kNotValid
//   5. PD matches:          entry PD == the accessing QP's PD      -> kPdMismatch
//   6. type-2 window bound to the accessing QP                     -> kWrongQp
//   7. access rights:       required_access != 0 and all of it is granted -> kAccessDenied
//      The rights an entry grants depend on who accesses: a LOCAL access (SGE of a posted
//      WR, receive placement) can use local read, local write and read sink; a REMOTE
//      access (incoming READ/WRITE) can use remote read and remote write. Windows grant
//      remote rights only (an MW token is never an L_Key); privileged keys grant local
//      read/write only.
//   8. range:               [iova, iova + length) inside [base, base + length), computed
//                           without iova + length (a wrap past 2^64 is out of range)
//                                                                  -> kOutOfRange
//   9. (logical translations only) every page of the range is mapped -> kUnmappedPage
// A failure's syndrome is kLocalProtection for a local access and kRemoteAccess for a
// remote one (the responder NAKs with remote access error, rnic-model.md section 2.3). The
// KeyStatus is the detail (Cqe::vendor_syndrome).
//
// Concurrency:
//   Entries live in fixed chunks (built on first use, never moved or freed before the
//   table). Each entry is guarded by one of
//   kStripes reader-writer locks, chosen by index (index % kStripes), each on its own
//   cache line. check() takes its stripe's lock SHARED for a few dozen instructions:
//   compare the fields, copy the translation's shared_ptr, unlock; checks of keys on
//   different stripes touch no common cache line and no global lock. Control-path
//   operations (command handlers, fast-register/bind/invalidate WQEs executing on any
//   device thread) take the stripe EXCLUSIVE; anything that may allocate (building a
//   translation) is done before locking and anything that may free (dropping the old
//   translation) after unlocking. The locks prefer writers, so a busy data path cannot
//   starve a deregister or fast-register of the same stripe.
//   bind() touches two entries (window and MR): it locks both stripes exclusive in
//   ascending stripe order. The MR's bound-window count is atomic so that unbinding or
//   invalidating a window (which only holds the window's stripe) can decrement it; an MR
//   cannot be deregistered, deallocated or invalidated while it is non-zero, and it is
//   only incremented with the MR's stripe held, so the zero test is race-free.
//   Index allocation (free list, privileged-per-PD map) uses one mutex that the data path
//   never takes. A seqlock was rejected: readers must pin the translation they read, and
//   doing that without a lock needs a reclamation scheme (hazard pointers/epochs).
//
// Lifetime ("a check is a snapshot"): check() returns a DmaRange that pins the translation,
// so the bytes stay mapped for the device. The table does NOT wait for outstanding
// DmaRanges when a key is deregistered or invalidated. The engine must finish (or abandon)
// every transfer that checked a key before it reports completion of a command or WQE that
// invalidates that key, because after that the consumer may reuse the memory.
//
// Failure reporting: every operation returns a KeyStatus (the reason) and never throws on
// bad input (only std::bad_alloc can escape, from building a translation). syndrome_for()
// maps a failed work-request operation to its completion syndrome.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memory/mtt.hpp"
#include "softndk/hw_interface.hpp"

namespace softndk::emu {

enum class MptType : std::uint8_t {
    kUnallocated = 0,
    kMr,         // RegisterMr (contiguous MDL range)
    kFastRegMr,  // fast-register MR (page list)
    kMwType1,
    kMwType2,
    kPrivileged,  // the PD's privileged token (LAM logical addresses)
};

enum class MptState : std::uint8_t { kInvalid = 0, kFree, kValid };

// How a fast-register MR's token moves through register / invalidate cycles (chosen at
// init_fast_register from the profile's quirks, hw::kQuirkRotateFastRegisterKeys).
//   kStable  the token never changes: invalidation leaves the variant alone and every
//            FAST_REGISTER must carry the MR's current token. This is what drivers rely
//            on: they read NdkGetRemoteTokenFromMr once after NdkInitializeFastRegisterMr
//            and reuse it for every later NdkFastRegister of the MR, as real NDK
//            providers allow. A stale use still fails while the MR is FREE (state check).
//   kRotate  the stale-key protection of verbs consumers (ibv_inc_rkey): invalidation
//            bumps the variant and every FAST_REGISTER must carry a new variant, never
//            the last valid one, so no earlier token can ever work again.
enum class FastRegisterKeys : std::uint8_t { kStable = 0, kRotate };

// Who is accessing: a local WR's SGE, or a remote peer through an incoming request.
enum class AccessOrigin : std::uint8_t { kLocal, kRemote };

// Why an operation failed (kOk: it did not). Values are stable: they appear in traces and
// as Cqe::vendor_syndrome.
enum class KeyStatus : std::uint8_t {
    kOk = 0,
    // check() steps, in check order (also used by the control operations)
    kIndexOutOfRange,  // a reserved index (0, 1) or >= capacity
    kNotAllocated,
    kVariantMismatch,
    kNotValid,
    kPdMismatch,
    kWrongQp,       // type-2 window used or invalidated through another QP
    kAccessDenied,  // a required right is not granted
    kOutOfRange,    // [iova, iova + length) not inside the key's range
    kUnmappedPage,  // logical address space: a page of the range is not mapped
    // control-path reasons
    kWrongType,               // operation not defined for this entry type
    kNotFree,                 // fast_register / type-2 bind need a FREE entry
    kAlreadyValid,            // register_mr / init_fast_register on a VALID entry
    kBoundWindows,            // MR still has bound windows
    kVariantReused,           // new variant == the variant the entry was last valid with
    kInvalidAccess,           // unknown/inapplicable rights, or remote write w/o local write
    kRemoteAccessNotEnabled,  // fast_register asks remote rights, MR initialised without
    kNoBindRight,             // bind: parent key has no MW-bind right
    kBadPageCount,            // 0 pages, or more than allowed
    kBadFirstByteOffset,      // FBO >= 4096, or iova != FBO (mod 4096)
    kInvalidLength,           // length 0 where not allowed, too long, or range wraps
    kBadPage,                 // null or unaligned page pointer
    kBadTranslation,          // translation missing or not covering the range
    kTableFull,
    kPrivilegedExists,  // the PD already has a privileged key
};

// The work-request operations that can fail on a key, for syndrome_for().
enum class KeyOperation : std::uint8_t {
    kLocalAccess,       // SGE check of a posted WR / receive
    kRemoteAccess,      // incoming READ/WRITE at the responder
    kFastRegister,      // FAST_REGISTER WQE
    kBind,              // BIND_WINDOW WQE
    kLocalInvalidate,   // LOCAL_INVALIDATE WQE, READ with local invalidate
    kRemoteInvalidate,  // incoming SEND_WITH_INVALIDATE at the responder
};

std::string_view to_string(MptType type) noexcept;
std::string_view to_string(MptState state) noexcept;
std::string_view to_string(KeyStatus status) noexcept;

// Completion syndrome for `op` failing with `status` (kSuccess for kOk):
//   local access, fast register, local invalidate -> kLocalProtection
//     (NDK documents STATUS_ACCESS_VIOLATION for a FastRegister the MR does not allow;
//     rxe reports fast-register/local-invalidate failures as LOC_QP_OP_ERR, which NDK
//     would see as STATUS_INTERNAL_ERROR - less useful to a consumer)
//   remote access -> kRemoteAccess (NAK remote access error)
//   bind -> kMemoryWindowBind (rxe and mlx5: MW_BIND_ERR)
//   remote invalidate -> kRemoteInvalidRequest (responder's receive CQE; rxe class J:
//     the QP goes to ERROR)
hw::Syndrome syndrome_for(KeyOperation op, KeyStatus status) noexcept;

// bound_qp of an entry that is not a bound type-2 window (mlx5: all ones).
inline constexpr std::uint32_t kNoQp = 0xffffffffu;
// The index is 24 bits of the token.
inline constexpr std::uint32_t kMaxMptEntries = 1u << 24;

// Rights an entry may hold, by type.
inline constexpr std::uint8_t kLocalRights =
    hw::kAccessLocalRead | hw::kAccessLocalWrite | hw::kAccessReadSink;
inline constexpr std::uint8_t kRemoteRights = hw::kAccessRemoteRead | hw::kAccessRemoteWrite;
inline constexpr std::uint8_t kPrivilegedRights = hw::kAccessLocalRead | hw::kAccessLocalWrite;

struct MptLimits {
    std::uint32_t entries = 1u << 16;             // table size incl. the reserved indexes; 3..2^24
    std::uint32_t max_fast_register_pages = 256;  // per fast-register MR
};

struct TokenResult {
    KeyStatus status = KeyStatus::kOk;
    std::uint32_t token = 0;  // 0 unless ok()
    bool ok() const noexcept { return status == KeyStatus::kOk; }
};

struct KeyCheck {
    KeyStatus status = KeyStatus::kOk;
    hw::Syndrome syndrome = hw::Syndrome::kSuccess;
    DmaRange range;  // the checked range (empty on failure or for length 0)
    bool ok() const noexcept { return status == KeyStatus::kOk; }
};

// A FAST_REGISTER WQE after the engine copied it out of the ring and resolved the page
// addresses to device-side pointers.
struct FastRegisterRequest {
    std::uint32_t token = 0;  // the MR's token with the NEW variant
    std::uint32_t qp_pd = 0;  // PD of the QP the WQE was posted on
    std::uint8_t access = 0;  // AccessFlags: local write, remote read/write, read sink
    std::uint64_t iova = 0;   // base IOVA; must be = first_byte_offset (mod 4096)
    std::uint64_t length = 0;
    std::uint32_t first_byte_offset = 0;
    std::span<std::byte *const> pages;      // device-side page pointers, 4 KiB aligned
    std::shared_ptr<const void> keepalive;  // keeps `pages` mapped (LamSpace::pin)
};

// A BIND_WINDOW WQE.
struct BindRequest {
    std::uint32_t mw_token = 0;   // the window's token with the NEW variant
    std::uint32_t mr_token = 0;   // the parent MR's current token (full match)
    std::uint32_t qp_number = 0;  // QP the WQE was posted on (type 2: the window's QP)
    std::uint32_t qp_pd = 0;
    std::uint8_t access = 0;   // remote read / remote write only
    std::uint64_t iova = 0;    // absolute IOVA inside the MR (NDK has no zero-based windows)
    std::uint64_t length = 0;  // 0: unbind (type 1 only)
};

// A copy of an entry's fields (tests, tracing, the CLI).
struct EntryInfo {
    MptType type = MptType::kUnallocated;
    MptState state = MptState::kInvalid;
    std::uint8_t variant = 0;
    std::uint8_t access = 0;
    bool remote_access_enabled = false;  // fast-register MR: initialised with RemoteAccess
    std::uint32_t pd = 0;
    std::uint32_t bound_qp = kNoQp;   // type-2 window: the QP it is bound through
    std::uint32_t parent_index = 0;   // window: the MR it is bound to (0: none)
    std::uint32_t bound_windows = 0;  // MR: windows bound to it
    std::uint32_t max_pages = 0;      // fast-register MR
    std::uint64_t iova = 0;           // base IOVA
    std::uint64_t length = 0;
    std::shared_ptr<const Translation> translation;
    std::uint32_t token = 0;  // make_token(index, variant)
};

class MemoryProtectionTable {
  public:
    static constexpr std::uint32_t kStripes = 256;

    explicit MemoryProtectionTable(MptLimits limits = {});
    ~MemoryProtectionTable();
    MemoryProtectionTable(const MemoryProtectionTable &) = delete;
    MemoryProtectionTable &operator=(const MemoryProtectionTable &) = delete;

    // `entries` clamped to [kFirstMptIndex + 1, kMaxMptEntries].
    const MptLimits &limits() const noexcept { return limits_; }
    std::uint32_t capacity() const noexcept { return limits_.entries; }

    // ----- control path (commands) ------------------------------------------------------

    // New entry of `type` (kMr, kFastRegMr, kMwType1, kMwType2) in PD `pd`: kMr and
    // kFastRegMr start INVALID, windows FREE. kWrongType for other types, kTableFull.
    TokenResult allocate(MptType type, std::uint32_t pd);

    // The PD's privileged key: VALID at once, local read/write, over `logical_space`'s
    // whole range. kPrivilegedExists if the PD has one, kBadTranslation if null.
    TokenResult create_privileged(std::uint32_t pd,
                                  std::shared_ptr<const Translation> logical_space);

    // Frees the entry (any type, any state). Order: index, allocated, variant;
    // kBoundWindows if an MR still has windows. A bound window is unbound first. The
    // variant is bumped, so no token of the old entry matches a later one.
    KeyStatus deallocate(std::uint32_t token);

    // RegisterMr: INVALID kMr -> VALID over [iova, iova + length) through `translation`.
    // Local read is implicit and - NDK has no MW-bind right - every registered MR gets
    // kAccessMwBind (fast-register MRs never do). Returns the new token (variant bumped).
    // Order: index, allocated, variant, type kMr, not VALID (kAlreadyValid), rights
    // (kInvalidAccess: kAccessMwBind is tolerated, other bits outside local/remote
    // read/write and read sink are not; remote write needs local write), length > 0 and
    // no wrap (kInvalidLength), translation covers the range (kBadTranslation).
    TokenResult register_mr(std::uint32_t token, std::uint8_t access, std::uint64_t iova,
                            std::uint64_t length, std::shared_ptr<const Translation> translation);

    // DeregisterMr: VALID kMr -> INVALID. Order: index, allocated, variant, type kMr,
    // VALID (kNotValid), no bound windows (kBoundWindows).
    KeyStatus deregister_mr(std::uint32_t token);

    // InitializeFastRegisterMr: kFastRegMr not VALID -> FREE, with its page limit,
    // whether later fast registrations may grant remote rights, and its token policy.
    // Order: index, allocated, variant, type, not VALID (kAlreadyValid),
    // 1 <= max_pages <= limit (kBadPageCount).
    KeyStatus init_fast_register(std::uint32_t token, std::uint32_t max_pages, bool remote_access,
                                 FastRegisterKeys keys);

    // ----- control path (work requests) -------------------------------------------------

    // FAST_REGISTER (rxe rxe_reg_fast_mr + NDK rules). Checks, in order:
    //   1 index in range  2 allocated  3 type kFastRegMr (kWrongType)  4 state FREE
    //   (kNotFree)  5 entry PD == qp_pd (kPdMismatch)  6 kRotate: new variant != last
    //   valid variant (kVariantReused); kStable: variant == the entry's current variant
    //   (kVariantMismatch)  7 remote rights only if initialised with RemoteAccess
    //   (kRemoteAccessNotEnabled)  8 1 <= pages <= the MR's max_pages (kBadPageCount)
    //   9 rights: only local write, remote read/write, read sink; remote write needs local
    //   write (kInvalidAccess)  10 FBO < 4096 and iova = FBO mod 4096
    //   (kBadFirstByteOffset)  11 0 < length <= pages * 4096 - FBO, no wrap
    //   (kInvalidLength)  12 every page non-null and 4 KiB aligned (kBadPage).
    // On success: VALID with the new variant, the given rights plus local read, and a
    // page-list translation.
    KeyStatus fast_register(const FastRegisterRequest &request);

    // BIND_WINDOW (rxe rxe_check_bind_mw). Checks, in order:
    //   window: 1 index in range  2 allocated  3 type kMwType1/kMwType2 (kWrongType)
    //   4 type 2: state FREE (kNotFree)  5 window PD == qp_pd (kPdMismatch)  6 new
    //   variant != last valid variant (kVariantReused)  7 length 0: type 1 unbinds
    //   (-> FREE, done), type 2 fails (kInvalidLength)  8 rights only remote read/write
    //   (kInvalidAccess)
    //   parent MR: 9 index in range  10 allocated  11 variant  12 VALID (kNotValid)
    //   13 MR PD == window PD (kPdMismatch)  14 MR has kAccessMwBind (kNoBindRight; any
    //   registered kMr, never a fast-register MR, window or privileged key)  15 a
    //   remote-write window needs local write on the MR (kInvalidAccess)  16 window range
    //   inside the MR (kOutOfRange, overflow-safe).
    // A type-1 rebind moves the window (old parent's count drops, new one's rises).
    KeyStatus bind(const BindRequest &request);

    // LOCAL_INVALIDATE / incoming SEND_WITH_INVALIDATE: VALID fast-register MR or type-2
    // window -> FREE, variant bumped. Checks, in order: 1 index in range  2 allocated
    // 3 variant (full token match)  4 type kFastRegMr or kMwType2 (kWrongType: a
    // RegisterMr MR must be deregistered, a type-1 window rebound)  5 VALID (kNotValid)
    // 6 PD == qp_pd (kPdMismatch)  7 type-2 window: bound through qp_number (kWrongQp)
    // 8 remote only: the key grants a remote right (kAccessDenied; a peer can only
    // invalidate a key it could have been given)  9 MR: no bound windows (kBoundWindows).
    KeyStatus local_invalidate(std::uint32_t token, std::uint32_t qp_number, std::uint32_t qp_pd);
    KeyStatus remote_invalidate(std::uint32_t token, std::uint32_t qp_number, std::uint32_t qp_pd);

    // ----- data path --------------------------------------------------------------------

    // THE key check (order and syndromes in the file comment). `pd` and `accessing_qp`
    // are the PD and number of the QP through which the access happens (the responder QP
    // for a remote access). `required_access` is a set of hw::AccessFlags. Thread-safe,
    // no global lock.
    KeyCheck check(std::uint32_t token, std::uint32_t pd, std::uint8_t required_access,
                   std::uint64_t iova, std::uint64_t length, std::uint32_t accessing_qp,
                   AccessOrigin origin) const;

    // Snapshot of entry `index` (nullopt if index >= capacity).
    std::optional<EntryInfo> inspect(std::uint32_t index) const;

  private:
    struct Entry;
    struct Stripe;
    class ExclusivePair;

    Stripe &stripe_of(std::uint32_t index) const noexcept;
    bool index_in_range(std::uint32_t index) const noexcept {
        return index >= hw::kFirstMptIndex && index < limits_.entries;
    }
    // Index, allocated, full-token match: the identity checks of every control op.
    static KeyStatus identify(const Entry &entry, std::uint32_t token) noexcept;
    KeyStatus invalidate(std::uint32_t token, std::uint32_t qp_number, std::uint32_t qp_pd,
                         AccessOrigin origin);
    void release_index(std::uint32_t index, MptType type, std::uint32_t pd);
    void drop_window_binding(Entry &window) noexcept;

    // Entry `index`, or nullptr if no index of its chunk was ever allocated (such an
    // entry reads as a fresh, unallocated one).
    Entry *entry_at(std::uint32_t index) const noexcept;
    // The next index to allocate (allocation_mutex_ held): the latest freed one, else the
    // lowest never used (building its chunk). False when the table is full.
    bool take_index(std::uint32_t &index);

    // Entries are built a chunk at a time, when the first index of the chunk is handed
    // out, so a device's table costs memory for the keys it has had, not for its
    // capacity (64 bytes an entry: 2^20 of them would be 64 MiB up front). A chunk, once
    // published, never moves or goes away before the table does.
    static constexpr std::uint32_t kChunkEntries = 4096;
    MptLimits limits_;
    std::unique_ptr<std::atomic<Entry *>[]> chunks_;
    std::unique_ptr<Stripe[]> stripes_;

    std::mutex allocation_mutex_;  // free list and privileged map; never on the data path
    std::vector<std::uint32_t> free_indices_;              // freed indices, reused last-freed first
    std::uint32_t next_fresh_index_ = hw::kFirstMptIndex;  // below it: allocated or freed
    std::unordered_map<std::uint32_t, std::uint32_t> privileged_by_pd_;
};

}  // namespace softndk::emu
