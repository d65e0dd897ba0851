// mpt.cpp - the memory protection table (see mpt.hpp for the contract).
#include "memory/mpt.hpp"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <system_error>
#include <utility>

namespace softndk::emu {

using hw::make_token;
using hw::token_index;
using hw::token_variant;

// ---------------------------------------------------------------------------
// Names and syndromes (one table each)
// ---------------------------------------------------------------------------
namespace {

constexpr std::array<std::string_view, 6> kTypeNames = {"unallocated", "mr",       "fast_reg_mr",
                                                        "mw_type1",    "mw_type2", "privileged"};

constexpr std::array<std::string_view, 3> kStateNames = {"invalid", "free", "valid"};

constexpr std::array<std::string_view, 25> kStatusNames = {
    "ok",
    "index_out_of_range",
    "not_allocated",
    "variant_mismatch",
    "not_valid",
    "pd_mismatch",
    "wrong_qp",
    "access_denied",
    "out_of_range",
    "unmapped_page",
    "wrong_type",
    "not_free",
    "already_valid",
    "bound_windows",
    "variant_reused",
    "invalid_access",
    "remote_access_not_enabled",
    "no_bind_right",
    "bad_page_count",
    "bad_first_byte_offset",
    "invalid_length",
    "bad_page",
    "bad_translation",
    "table_full",
    "privileged_exists",
};
static_assert(kStatusNames.size() == static_cast<std::size_t>(KeyStatus::kPrivilegedExists) + 1);

// Indexed by KeyOperation.
constexpr std::array<hw::Syndrome, 6> kFailureSyndromes = {
    hw::Syndrome::kLocalProtection,       // kLocalAccess
    hw::Syndrome::kRemoteAccess,          // kRemoteAccess
    hw::Syndrome::kLocalProtection,       // kFastRegister
    hw::Syndrome::kMemoryWindowBind,      // kBind
    hw::Syndrome::kLocalProtection,       // kLocalInvalidate
    hw::Syndrome::kRemoteInvalidRequest,  // kRemoteInvalidate
};
static_assert(kFailureSyndromes.size() ==
              static_cast<std::size_t>(KeyOperation::kRemoteInvalidate) + 1);

template <std::size_t N, class E>
std::string_view name_of(const std::array<std::string_view, N> &names, E value) noexcept {
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : std::string_view("unknown");
}

bool is_window(MptType type) noexcept {
    return type == MptType::kMwType1 || type == MptType::kMwType2;
}

// Remote write (like atomics) needs local write on the same memory (IBA; NDK's
// ALLOW_REMOTE_WRITE values include the local-write bit for the same reason).
bool remote_write_without_local_write(std::uint8_t access) noexcept {
    return (access & hw::kAccessRemoteWrite) != 0 && (access & hw::kAccessLocalWrite) == 0;
}

}  // namespace

std::string_view to_string(MptType type) noexcept {
    return name_of(kTypeNames, type);
}
std::string_view to_string(MptState state) noexcept {
    return name_of(kStateNames, state);
}
std::string_view to_string(KeyStatus status) noexcept {
    return name_of(kStatusNames, status);
}

hw::Syndrome syndrome_for(KeyOperation op, KeyStatus status) noexcept {
    if (status == KeyStatus::kOk) return hw::Syndrome::kSuccess;
    const auto i = static_cast<std::size_t>(op);
    return i < kFailureSyndromes.size() ? kFailureSyndromes[i] : hw::Syndrome::kLocalProtection;
}

// ---------------------------------------------------------------------------
// Entry and locks
// ---------------------------------------------------------------------------

// Every field except bound_windows is guarded by the entry's stripe lock.
struct MemoryProtectionTable::Entry {
    MptType type = MptType::kUnallocated;
    MptState state = MptState::kInvalid;
    std::uint8_t variant = 0;
    std::uint8_t access = 0;
    std::uint8_t last_valid_variant = 0;  // meaningful when ever_valid
    bool ever_valid = false;              // survives deallocate: guards index reuse too
    bool remote_access_enabled = false;
    FastRegisterKeys fast_register_keys = FastRegisterKeys::kRotate;  // kFastRegMr only
    std::uint32_t pd = 0;
    std::uint32_t bound_qp = kNoQp;
    std::uint32_t parent = 0;
    std::uint32_t max_pages = 0;
    std::uint64_t iova = 0;
    std::uint64_t length = 0;
    std::shared_ptr<const Translation> translation;
    // Windows bound to this MR. Incremented only with this entry's stripe held
    // exclusively (bind); decremented by unbind/invalidate/deallocate of a window, which
    // hold only the window's stripe. Tested for zero with this entry's stripe held.
    std::atomic<std::uint32_t> bound_windows{0};

    void make_valid(std::uint8_t new_variant) noexcept {
        state = MptState::kValid;
        variant = new_variant;
        last_valid_variant = new_variant;
        ever_valid = true;
    }

    // The variant the device picks itself: one up, skipping the last valid one.
    std::uint8_t next_variant() const noexcept {
        auto v = static_cast<std::uint8_t>(variant + 1);
        if (ever_valid && v == last_valid_variant) v = static_cast<std::uint8_t>(v + 1);
        return v;
    }

    // Forgets the range; the translation is handed to the caller so that it is released
    // after the stripe lock (it may be the last reference).
    std::shared_ptr<const Translation> clear_mapping() noexcept {
        access = 0;
        iova = 0;
        length = 0;
        bound_qp = kNoQp;
        parent = 0;
        return std::exchange(translation, nullptr);
    }
};

// A reader-writer lock that prefers writers (glibc's default prefers readers, so a stream
// of key checks could starve a deregister). Readers never nest, which this kind requires.
struct alignas(64) MemoryProtectionTable::Stripe {
    Stripe() {
        pthread_rwlockattr_t attr;
        pthread_rwlockattr_init(&attr);
        pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        const int rc = pthread_rwlock_init(&rwlock, &attr);
        pthread_rwlockattr_destroy(&attr);
        if (rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_rwlock_init");
    }
    ~Stripe() { pthread_rwlock_destroy(&rwlock); }
    Stripe(const Stripe &) = delete;
    Stripe &operator=(const Stripe &) = delete;

    void lock() noexcept { pthread_rwlock_wrlock(&rwlock); }
    void unlock() noexcept { pthread_rwlock_unlock(&rwlock); }
    void lock_shared() noexcept { pthread_rwlock_rdlock(&rwlock); }
    void unlock_shared() noexcept { pthread_rwlock_unlock(&rwlock); }

    pthread_rwlock_t rwlock;
};

// Two stripes held exclusively, taken in ascending order (the global lock order); one
// lock if both entries share a stripe.
class MemoryProtectionTable::ExclusivePair {
  public:
    ExclusivePair(Stripe &a, Stripe &b) noexcept {
        const bool a_first = std::less<Stripe *>()(&a, &b) || &a == &b;
        first_ = a_first ? &a : &b;
        second_ = (&a == &b) ? nullptr : (a_first ? &b : &a);
        first_->lock();
        if (second_ != nullptr) second_->lock();
    }
    ~ExclusivePair() {
        if (second_ != nullptr) second_->unlock();
        first_->unlock();
    }
    ExclusivePair(const ExclusivePair &) = delete;
    ExclusivePair &operator=(const ExclusivePair &) = delete;

  private:
    Stripe *first_;
    Stripe *second_;
};

// ---------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------
MemoryProtectionTable::MemoryProtectionTable(MptLimits limits) : limits_(limits) {
    limits_.entries =
        std::clamp<std::uint32_t>(limits_.entries, hw::kFirstMptIndex + 1, kMaxMptEntries);
    chunks_ = std::make_unique<std::atomic<Entry *>[]>((limits_.entries + kChunkEntries - 1) /
                                                       kChunkEntries);
    stripes_ = std::make_unique<Stripe[]>(kStripes);
}

MemoryProtectionTable::~MemoryProtectionTable() {
    for (std::uint32_t i = 0; i < (limits_.entries + kChunkEntries - 1) / kChunkEntries; ++i)
        delete[] chunks_[i].load(std::memory_order_relaxed);
}

MemoryProtectionTable::Entry *MemoryProtectionTable::entry_at(std::uint32_t index) const noexcept {
    Entry *chunk = chunks_[index / kChunkEntries].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : chunk + index % kChunkEntries;
}

bool MemoryProtectionTable::take_index(std::uint32_t &index) {
    if (!free_indices_.empty()) {
        index = free_indices_.back();
        free_indices_.pop_back();
        return true;
    }
    if (next_fresh_index_ >= limits_.entries) return false;
    std::atomic<Entry *> &chunk = chunks_[next_fresh_index_ / kChunkEntries];
    if (chunk.load(std::memory_order_relaxed) == nullptr) {
        // Built whole before it is published (release): a reader sees nullptr (no entry
        // of the chunk was ever allocated) or constructed entries.
        chunk.store(new Entry[kChunkEntries], std::memory_order_release);
    }
    index = next_fresh_index_++;
    return true;
}

MemoryProtectionTable::Stripe &MemoryProtectionTable::stripe_of(
    std::uint32_t index) const noexcept {
    return stripes_[index % kStripes];
}

KeyStatus MemoryProtectionTable::identify(const Entry &entry, std::uint32_t token) noexcept {
    if (entry.type == MptType::kUnallocated) return KeyStatus::kNotAllocated;
    if (entry.variant != token_variant(token)) return KeyStatus::kVariantMismatch;
    return KeyStatus::kOk;
}

void MemoryProtectionTable::drop_window_binding(Entry &window) noexcept {
    if (window.parent != 0) {
        entry_at(window.parent)->bound_windows.fetch_sub(1, std::memory_order_release);
    }
    window.parent = 0;
    window.bound_qp = kNoQp;
}

void MemoryProtectionTable::release_index(std::uint32_t index, MptType type, std::uint32_t pd) {
    std::lock_guard guard(allocation_mutex_);
    if (type == MptType::kPrivileged) {
        const auto it = privileged_by_pd_.find(pd);
        if (it != privileged_by_pd_.end() && it->second == index) privileged_by_pd_.erase(it);
    }
    free_indices_.push_back(index);
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------
TokenResult MemoryProtectionTable::allocate(MptType type, std::uint32_t pd) {
    MptState initial;
    switch (type) {
        case MptType::kMr:
        case MptType::kFastRegMr:
            initial = MptState::kInvalid;
            break;
        case MptType::kMwType1:
        case MptType::kMwType2:
            initial = MptState::kFree;
            break;
        default:
            return {KeyStatus::kWrongType, 0};
    }
    std::uint32_t index;
    {
        std::lock_guard guard(allocation_mutex_);
        if (!take_index(index)) return {KeyStatus::kTableFull, 0};
    }
    Entry &e = *entry_at(index);
    std::unique_lock lock(stripe_of(index));
    e.type = type;
    e.state = initial;
    e.pd = pd;
    e.remote_access_enabled = false;
    e.max_pages = 0;
    e.clear_mapping();  // already empty: cleared by deallocate
    return {KeyStatus::kOk, make_token(index, e.variant)};
}

TokenResult MemoryProtectionTable::create_privileged(
    std::uint32_t pd, std::shared_ptr<const Translation> logical_space) {
    if (logical_space == nullptr) return {KeyStatus::kBadTranslation, 0};
    std::uint32_t index;
    {
        std::lock_guard guard(allocation_mutex_);
        if (privileged_by_pd_.contains(pd)) return {KeyStatus::kPrivilegedExists, 0};
        privileged_by_pd_.reserve(privileged_by_pd_.size() + 1);  // may throw: nothing changed yet
        if (!take_index(index)) return {KeyStatus::kTableFull, 0};
        privileged_by_pd_.emplace(pd, index);
    }
    Entry &e = *entry_at(index);
    std::unique_lock lock(stripe_of(index));
    e.type = MptType::kPrivileged;
    e.pd = pd;
    e.remote_access_enabled = false;
    e.max_pages = 0;
    e.make_valid(e.variant);
    e.access = kPrivilegedRights;
    e.iova = logical_space->iova();
    e.length = logical_space->length();
    e.translation = std::move(logical_space);
    return {KeyStatus::kOk, make_token(index, e.variant)};
}

KeyStatus MemoryProtectionTable::deallocate(std::uint32_t token) {
    const std::uint32_t index = token_index(token);
    if (!index_in_range(index)) return KeyStatus::kIndexOutOfRange;
    std::shared_ptr<const Translation> retired;  // released after the lock
    MptType type;
    std::uint32_t pd;
    {
        Entry *slot = entry_at(index);
        if (slot == nullptr) return KeyStatus::kNotAllocated;
        Entry &e = *slot;
        std::unique_lock lock(stripe_of(index));
        if (const KeyStatus s = identify(e, token); s != KeyStatus::kOk) return s;
        if ((e.type == MptType::kMr || e.type == MptType::kFastRegMr) &&
            e.bound_windows.load(std::memory_order_acquire) != 0) {
            return KeyStatus::kBoundWindows;
        }
        if (is_window(e.type)) drop_window_binding(e);
        type = e.type;
        pd = e.pd;
        e.variant = e.next_variant();
        e.type = MptType::kUnallocated;
        e.state = MptState::kInvalid;
        e.remote_access_enabled = false;
        e.max_pages = 0;
        retired = e.clear_mapping();
    }
    release_index(index, type, pd);
    return KeyStatus::kOk;
}

TokenResult MemoryProtectionTable::register_mr(std::uint32_t token, std::uint8_t access,
                                               std::uint64_t iova, std::uint64_t length,
                                               std::shared_ptr<const Translation> translation) {
    const std::uint32_t index = token_index(token);
    if (!index_in_range(index)) return {KeyStatus::kIndexOutOfRange, 0};

    // Parameter checks need no entry; they are reported after the entry checks.
    constexpr std::uint8_t kAllowed = kLocalRights | kRemoteRights | hw::kAccessMwBind;
    KeyStatus param = KeyStatus::kOk;
    if ((access & ~kAllowed) != 0 || remote_write_without_local_write(access)) {
        param = KeyStatus::kInvalidAccess;
    } else if (length == 0 || !range_fits(iova, length)) {
        param = KeyStatus::kInvalidLength;
    } else if (translation == nullptr || !translation->covers(iova, length)) {
        param = KeyStatus::kBadTranslation;
    }

    Entry *slot = entry_at(index);
    if (slot == nullptr) return {KeyStatus::kNotAllocated, 0};
    Entry &e = *slot;
    std::unique_lock lock(stripe_of(index));
    if (const KeyStatus s = identify(e, token); s != KeyStatus::kOk) return {s, 0};
    if (e.type != MptType::kMr) return {KeyStatus::kWrongType, 0};
    if (e.state == MptState::kValid) return {KeyStatus::kAlreadyValid, 0};
    if (param != KeyStatus::kOk) return {param, 0};

    const std::uint8_t variant = e.next_variant();
    e.make_valid(variant);
    e.access = static_cast<std::uint8_t>(access | hw::kAccessLocalRead | hw::kAccessMwBind);
    e.iova = iova;
    e.length = length;
    e.translation.swap(translation);  // the old one (null: INVALID) leaves with `translation`
    lock.unlock();
    return {KeyStatus::kOk, make_token(index, variant)};
}

KeyStatus MemoryProtectionTable::deregister_mr(std::uint32_t token) {
    const std::uint32_t index = token_index(token);
    if (!index_in_range(index)) return KeyStatus::kIndexOutOfRange;
    std::shared_ptr<const Translation> retired;
    Entry *slot = entry_at(index);
    if (slot == nullptr) return KeyStatus::kNotAllocated;
    Entry &e = *slot;
    std::unique_lock lock(stripe_of(index));
    if (const KeyStatus s = identify(e, token); s != KeyStatus::kOk) return s;
    if (e.type != MptType::kMr) return KeyStatus::kWrongType;
    if (e.state != MptState::kValid) return KeyStatus::kNotValid;
    if (e.bound_windows.load(std::memory_order_acquire) != 0) return KeyStatus::kBoundWindows;
    e.state = MptState::kInvalid;  // rights and range stay for inspect(); bytes do not
    retired = std::exchange(e.translation, nullptr);
    lock.unlock();
    return KeyStatus::kOk;
}

KeyStatus MemoryProtectionTable::init_fast_register(std::uint32_t token, std::uint32_t max_pages,
                                                    bool remote_access, FastRegisterKeys keys) {
    const std::uint32_t index = token_index(token);
    if (!index_in_range(index)) return KeyStatus::kIndexOutOfRange;
    Entry *slot = entry_at(index);
    if (slot == nullptr) return KeyStatus::kNotAllocated;
    Entry &e = *slot;
    std::unique_lock lock(stripe_of(index));
    if (const KeyStatus s = identify(e, token); s != KeyStatus::kOk) return s;
    if (e.type != MptType::kFastRegMr) return KeyStatus::kWrongType;
    if (e.state == MptState::kValid) return KeyStatus::kAlreadyValid;
    if (max_pages == 0 || max_pages > limits_.max_fast_register_pages) {
        return KeyStatus::kBadPageCount;
    }
    e.state = MptState::kFree;
    e.max_pages = max_pages;
    e.remote_access_enabled = remote_access;
    e.fast_register_keys = keys;
    return KeyStatus::kOk;
}

// ---------------------------------------------------------------------------
// Work requests
// ---------------------------------------------------------------------------
KeyStatus MemoryProtectionTable::fast_register(const FastRegisterRequest &r) {
    const std::uint32_t index = token_index(r.token);
    if (!index_in_range(index)) return KeyStatus::kIndexOutOfRange;
    const std::uint8_t new_variant = token_variant(r.token);

    // Steps 9-12 need no entry: check them and build the page list before locking, so no
    // allocation happens under the stripe lock. They are reported after steps 1-8.
    constexpr std::uint8_t kAllowed = kLocalRights | kRemoteRights;
    KeyStatus param = KeyStatus::kOk;
    std::shared_ptr<const Translation> fresh;
    if ((r.access & ~kAllowed) != 0 || remote_write_without_local_write(r.access)) {
        param = KeyStatus::kInvalidAccess;
    } else if (r.first_byte_offset >= kMttPageBytes ||
               (r.iova & kMttPageMask) != r.first_byte_offset) {
        param = KeyStatus::kBadFirstByteOffset;
    } else if (r.length == 0 || !range_fits(r.iova, r.length) || r.pages.empty() ||
               r.length > r.pages.size() * kMttPageBytes - r.first_byte_offset) {
        param = KeyStatus::kInvalidLength;  // (no pages: step 8 reports it first)
    } else if (std::any_of(r.pages.begin(), r.pages.end(), [](const std::byte *p) {
                   return p == nullptr || (reinterpret_cast<std::uintptr_t>(p) & kMttPageMask) != 0;
               })) {
        param = KeyStatus::kBadPage;
    } else {
        fresh = Translation::page_list(r.iova, r.length, r.first_byte_offset, r.pages, r.keepalive);
        if (fresh == nullptr) param = KeyStatus::kInvalidLength;  // unreachable: checked above
    }

    Entry *slot = entry_at(index);
    if (slot == nullptr) return KeyStatus::kNotAllocated;
    Entry &e = *slot;
    std::unique_lock lock(stripe_of(index));
    if (e.type == MptType::kUnallocated) return KeyStatus::kNotAllocated;
    if (e.type != MptType::kFastRegMr) return KeyStatus::kWrongType;
    if (e.state != MptState::kFree) return KeyStatus::kNotFree;
    if (e.pd != r.qp_pd) return KeyStatus::kPdMismatch;
    if (e.fast_register_keys == FastRegisterKeys::kStable) {
        if (new_variant != e.variant) return KeyStatus::kVariantMismatch;
    } else if (e.ever_valid && new_variant == e.last_valid_variant) {
        return KeyStatus::kVariantReused;
    }
    if ((r.access & kRemoteRights) != 0 && !e.remote_access_enabled) {
        return KeyStatus::kRemoteAccessNotEnabled;
    }
    if (r.pages.empty() || r.pages.size() > e.max_pages) return KeyStatus::kBadPageCount;
    if (param != KeyStatus::kOk) return param;

    e.make_valid(new_variant);
    e.access = static_cast<std::uint8_t>(r.access | hw::kAccessLocalRead);
    e.iova = r.iova;
    e.length = r.length;
    e.translation.swap(fresh);  // the previous (null: FREE) leaves with `fresh`
    lock.unlock();
    return KeyStatus::kOk;
}

KeyStatus MemoryProtectionTable::bind(const BindRequest &r) {
    const std::uint32_t mw_index = token_index(r.mw_token);
    if (!index_in_range(mw_index)) return KeyStatus::kIndexOutOfRange;
    const std::uint32_t mr_index = token_index(r.mr_token);
    const bool mr_in_range = index_in_range(mr_index);
    const std::uint8_t new_variant = token_variant(r.mw_token);

    std::shared_ptr<const Translation> retired;  // destroyed after the locks
    Stripe &mw_stripe = stripe_of(mw_index);
    ExclusivePair locks(mw_stripe, mr_in_range ? stripe_of(mr_index) : mw_stripe);

    Entry *mw_slot = entry_at(mw_index);
    if (mw_slot == nullptr) return KeyStatus::kNotAllocated;
    Entry &mw = *mw_slot;
    if (mw.type == MptType::kUnallocated) return KeyStatus::kNotAllocated;
    if (!is_window(mw.type)) return KeyStatus::kWrongType;
    if (mw.type == MptType::kMwType2 && mw.state != MptState::kFree) return KeyStatus::kNotFree;
    if (mw.pd != r.qp_pd) return KeyStatus::kPdMismatch;
    if (mw.ever_valid && new_variant == mw.last_valid_variant) return KeyStatus::kVariantReused;
    if (r.length == 0) {
        // o10-37.2.40: a type-2 window cannot be "unbound" by a zero-length bind.
        if (mw.type == MptType::kMwType2) return KeyStatus::kInvalidLength;
        drop_window_binding(mw);  // type-1 unbind
        mw.state = MptState::kFree;
        mw.variant = new_variant;
        retired = mw.clear_mapping();
        return KeyStatus::kOk;
    }
    if ((r.access & ~kRemoteRights) != 0) return KeyStatus::kInvalidAccess;

    if (!mr_in_range) return KeyStatus::kIndexOutOfRange;
    Entry *mr_slot = entry_at(mr_index);
    if (mr_slot == nullptr) return KeyStatus::kNotAllocated;
    Entry &mr = *mr_slot;
    if (const KeyStatus s = identify(mr, r.mr_token); s != KeyStatus::kOk) return s;
    if (mr.state != MptState::kValid) return KeyStatus::kNotValid;
    if (mr.pd != mw.pd) return KeyStatus::kPdMismatch;
    if ((mr.access & hw::kAccessMwBind) == 0) return KeyStatus::kNoBindRight;
    if ((r.access & hw::kAccessRemoteWrite) != 0 && (mr.access & hw::kAccessLocalWrite) == 0) {
        return KeyStatus::kInvalidAccess;
    }
    if (!range_within(r.iova, r.length, mr.iova, mr.length)) return KeyStatus::kOutOfRange;

    drop_window_binding(mw);  // type-1 rebind: leave the old parent first
    mr.bound_windows.fetch_add(1, std::memory_order_relaxed);  // MR stripe held
    mw.make_valid(new_variant);
    mw.access = r.access;
    mw.iova = r.iova;
    mw.length = r.length;
    mw.parent = mr_index;
    mw.bound_qp = mw.type == MptType::kMwType2 ? r.qp_number : kNoQp;
    retired = std::exchange(mw.translation, mr.translation);
    return KeyStatus::kOk;
}

KeyStatus MemoryProtectionTable::invalidate(std::uint32_t token, std::uint32_t qp_number,
                                            std::uint32_t qp_pd, AccessOrigin origin) {
    const std::uint32_t index = token_index(token);
    if (!index_in_range(index)) return KeyStatus::kIndexOutOfRange;
    std::shared_ptr<const Translation> retired;
    Entry *slot = entry_at(index);
    if (slot == nullptr) return KeyStatus::kNotAllocated;
    Entry &e = *slot;
    std::unique_lock lock(stripe_of(index));
    if (const KeyStatus s = identify(e, token); s != KeyStatus::kOk) return s;
    if (e.type != MptType::kFastRegMr && e.type != MptType::kMwType2) {
        return KeyStatus::kWrongType;
    }
    if (e.state != MptState::kValid) return KeyStatus::kNotValid;
    if (e.pd != qp_pd) return KeyStatus::kPdMismatch;
    if (e.type == MptType::kMwType2 && e.bound_qp != qp_number) return KeyStatus::kWrongQp;
    if (origin == AccessOrigin::kRemote && (e.access & kRemoteRights) == 0) {
        return KeyStatus::kAccessDenied;
    }
    if (e.type == MptType::kFastRegMr && e.bound_windows.load(std::memory_order_acquire) != 0) {
        return KeyStatus::kBoundWindows;
    }
    if (e.type == MptType::kMwType2) drop_window_binding(e);
    e.state = MptState::kFree;  // rights and range stay for inspect(); bytes do not
    const bool stable_token =
        e.type == MptType::kFastRegMr && e.fast_register_keys == FastRegisterKeys::kStable;
    if (!stable_token) e.variant = e.next_variant();
    retired = std::exchange(e.translation, nullptr);
    lock.unlock();
    return KeyStatus::kOk;
}

KeyStatus MemoryProtectionTable::local_invalidate(std::uint32_t token, std::uint32_t qp_number,
                                                  std::uint32_t qp_pd) {
    return invalidate(token, qp_number, qp_pd, AccessOrigin::kLocal);
}

KeyStatus MemoryProtectionTable::remote_invalidate(std::uint32_t token, std::uint32_t qp_number,
                                                   std::uint32_t qp_pd) {
    return invalidate(token, qp_number, qp_pd, AccessOrigin::kRemote);
}

// ---------------------------------------------------------------------------
// Data path
// ---------------------------------------------------------------------------
namespace {

// Step 7: the rights an entry can grant to an access from `origin`.
std::uint8_t granted_rights(MptType type, std::uint8_t access, AccessOrigin origin) noexcept {
    std::uint8_t mask = origin == AccessOrigin::kLocal ? kLocalRights : kRemoteRights;
    if (is_window(type)) mask &= kRemoteRights;  // an MW token is never an L_Key
    if (type == MptType::kPrivileged) mask &= kPrivilegedRights;
    return access & mask;
}

}  // namespace

KeyCheck MemoryProtectionTable::check(std::uint32_t token, std::uint32_t pd,
                                      std::uint8_t required_access, std::uint64_t iova,
                                      std::uint64_t length, std::uint32_t accessing_qp,
                                      AccessOrigin origin) const {
    // Step 0 (IBA C9-88; see mpt.hpp).
    if (length == 0) return KeyCheck{};

    const auto fail = [origin](KeyStatus status) {
        return KeyCheck{status,
                        origin == AccessOrigin::kLocal ? hw::Syndrome::kLocalProtection
                                                       : hw::Syndrome::kRemoteAccess,
                        DmaRange()};
    };

    const std::uint32_t index = token_index(token);
    if (!index_in_range(index)) return fail(KeyStatus::kIndexOutOfRange);  // 1

    std::shared_ptr<const Translation> translation;
    {
        const Entry *slot = entry_at(index);
        if (slot == nullptr) return fail(KeyStatus::kNotAllocated);  // 2: never allocated
        const Entry &e = *slot;
        std::shared_lock lock(stripe_of(index));
        if (e.type == MptType::kUnallocated) return fail(KeyStatus::kNotAllocated);       // 2
        if (e.variant != token_variant(token)) return fail(KeyStatus::kVariantMismatch);  // 3
        if (e.state != MptState::kValid) return fail(KeyStatus::kNotValid);               // 4
        if (e.pd != pd) return fail(KeyStatus::kPdMismatch);                              // 5
        if (e.type == MptType::kMwType2 && e.bound_qp != accessing_qp) {
            return fail(KeyStatus::kWrongQp);  // 6
        }
        const std::uint8_t granted = granted_rights(e.type, e.access, origin);
        if (required_access == 0 || (required_access & ~granted) != 0) {
            return fail(KeyStatus::kAccessDenied);  // 7
        }
        if (!range_within(iova, length, e.iova, e.length)) {
            return fail(KeyStatus::kOutOfRange);  // 8
        }
        translation = e.translation;  // pins it: the only shared write on this path
    }
    if (translation->kind() == Translation::Kind::kLogical &&
        !translation->is_mapped(iova, length)) {
        return fail(KeyStatus::kUnmappedPage);  // 9, outside the lock (calls the LAM block)
    }
    return KeyCheck{KeyStatus::kOk, hw::Syndrome::kSuccess,
                    DmaRange(std::move(translation), iova, length)};
}

std::optional<EntryInfo> MemoryProtectionTable::inspect(std::uint32_t index) const {
    if (index >= limits_.entries) return std::nullopt;
    static const Entry kNeverAllocated;
    const Entry *slot = entry_at(index);
    const Entry &e = slot != nullptr ? *slot : kNeverAllocated;
    std::shared_lock lock(stripe_of(index));
    EntryInfo info;
    info.type = e.type;
    info.state = e.state;
    info.variant = e.variant;
    info.access = e.access;
    info.remote_access_enabled = e.remote_access_enabled;
    info.pd = e.pd;
    info.bound_qp = e.bound_qp;
    info.parent_index = e.parent;
    info.bound_windows = e.bound_windows.load(std::memory_order_acquire);
    info.max_pages = e.max_pages;
    info.iova = e.iova;
    info.length = e.length;
    info.translation = e.translation;
    info.token = make_token(index, e.variant);
    return info;
}

}  // namespace softndk::emu
