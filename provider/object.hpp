// object.hpp - how every provider object embeds its public NDK struct, and the
// lifetime rules every object shares (ndkpi-api.md sections 1.3, 7.1, 7.5).
//
// Layout. A provider object `Qp` derives from `Embedded<NDK_QP>` (the public
// struct plus a type tag) and from `Object` (the lifetime machinery). The
// consumer only ever sees `&qp->ndk`. The provider gets back to `Qp` from
// that address with `from_ndk<Qp>(pNdkQp)`: container_of on the
// standard-layout `Embedded<NDK_QP>`, then a checked static downcast. It never
// reads `ndk.Dispatch` (the consumer side may have replaced it) and never
// writes `ndk.Header.NdkReserved` after zeroing it at creation.
//
// Holds. `Object::holds_` counts the reasons the object must stay alive:
//   1   while the consumer has not closed it (released by close);
//   +1  per child (PD -> MR/MW/QP, adapter -> CQ/PD/listener/connector);
//   +1  per successor (CQ -> QP, QP -> connector, listener -> connector);
//   +1  per consumer callback running on it (notification, connect event,
//       disconnect event) and per async request that returned STATUS_PENDING.
// Close marks the object closing, lets the type cancel what it can
// (on_close: flush, disconnect, complete pending requests with
// STATUS_CANCELLED, remove the object from event routing), then drops the
// consumer's hold. If that was the last hold, close finishes inline and
// returns STATUS_SUCCESS; otherwise it returns STATUS_PENDING and the thread
// that drops the last hold hands the object to the adapter's event thread,
// which destroys the device object (on_final), calls the close completion
// with no provider lock held, and only then releases the holds this object
// had on its parent and antecedents, so an antecedent's close completion can
// never overtake a successor's.
//
// Routing. Objects reachable from device events (CQ, QP, listener,
// connector) sit in the adapter's routing maps. A lookup takes a hold while
// holding the map lock, and on_close removes the entry under the same lock
// before the consumer's hold is dropped, so a lookup can never resurrect an
// object whose holds reached zero.
#pragma once

#include <ndkpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace softndk::provider {

class Adapter;

// Object-type tag checked on every entry point: catches a consumer passing
// one of our objects where another type is expected (e.g. a CQ to NdkClosePd).
inline constexpr uint32_t kObjectMagic = 0x4f4b444eu;  // "NDKO"

template <class Public>
struct Embedded {
    Public ndk;  // what the consumer holds a pointer to
    uint32_t magic = 0;
    NDK_OBJECT_TYPE type = NdkObjectTypeUndefined;
};

class Object {
  public:
    Object(Adapter *adapter, std::string name) : adapter_(adapter), name_(std::move(name)) {}
    virtual ~Object();
    Object(const Object &) = delete;
    Object &operator=(const Object &) = delete;

    Adapter *adapter() const { return adapter_; }
    const std::string &name() const { return name_; }
    // Only before the object is published (names appear in every log line).
    void rename(std::string name) { name_ = std::move(name); }
    bool closing() const { return closing_.load(std::memory_order_acquire); }

    // Adds/drops a hold (see the header comment). The last release finalizes
    // the object on the adapter's event thread.
    void hold() { holds_.fetch_add(1, std::memory_order_relaxed); }
    void release();

    // Records that this object keeps `other` alive until it is finalized
    // (parent or antecedent); takes the hold now.
    void depend_on(Object *other);

    // NDK_FN_CLOSE_OBJECT for every type: SUCCESS (finished, no callback) or
    // PENDING (CloseCompletion later, exactly once).
    NTSTATUS close(NDK_FN_CLOSE_COMPLETION completion, void *context);

    // Runs on the event thread (or inline in close) once no hold is left.
    void finalize(bool inline_close);

  protected:
    // Type hooks. on_close runs once, at close, before the consumer's hold is
    // dropped; on_final runs once, when no hold is left, before the close
    // completion. Neither may call consumer code.
    virtual void on_close() {}
    virtual void on_final() {}
    // The last hold went away outside close(): by default, finalize on the
    // adapter's event thread (the adapter itself overrides this).
    virtual void on_last_release();

  private:
    Adapter *adapter_;
    std::string name_;
    std::atomic<uint32_t> holds_{1};
    std::atomic<bool> closing_{false};
    NDK_FN_CLOSE_COMPLETION close_completion_ = nullptr;
    void *close_context_ = nullptr;
    std::vector<Object *> depends_;  // written before publication or under close
};

// Fills the public part of a new object: header version/type, zeroed
// NdkReserved, the provider's dispatch table. Called once, before the object
// is handed out; the provider never reads `Dispatch` back.
// Keeps an object alive for a scope. A slot that starts a request and still
// touches the object after issuing the device command takes one: the request's
// completion callback runs on the event thread, may close the object from
// inside (the reference allows it) and so drop what would otherwise be its last
// hold while the slot is still running.
class ScopedHold {
  public:
    explicit ScopedHold(Object *object) : object_(object) { object_->hold(); }
    ~ScopedHold() { object_->release(); }
    ScopedHold(const ScopedHold &) = delete;
    ScopedHold &operator=(const ScopedHold &) = delete;

  private:
    Object *object_;
};

template <class Public, class Table>
void publish(Embedded<Public> &e, NDK_OBJECT_TYPE type, NDK_VERSION version, const Table *table) {
    e.ndk = {};
    e.ndk.Header.Version = version;
    e.ndk.Header.ObjectType = type;
    e.ndk.Dispatch = table;
    e.magic = kObjectMagic;
    e.type = type;
}

// container_of: public struct address -> provider object, or nullptr if the
// pointer is null or does not carry the expected type tag.
template <class T, class Public>
T *from_ndk(Public *p) {
    static_assert(std::is_standard_layout_v<Embedded<Public>>);
    if (p == nullptr) return nullptr;
    auto *e = reinterpret_cast<Embedded<Public> *>(reinterpret_cast<std::byte *>(p) -
                                                   offsetof(Embedded<Public>, ndk));
    if (e->magic != kObjectMagic || e->type != T::kType) return nullptr;
    return static_cast<T *>(e);
}

// Same, from the header every NDK_FN_CLOSE_OBJECT / NdkQueryExtension gets
// (the header is the first member of every public struct).
template <class T>
T *from_header(NDK_OBJECT_HEADER *h) {
    using Public = typename T::Public;
    static_assert(offsetof(Public, Header) == 0);
    return from_ndk<T>(reinterpret_cast<Public *>(h));
}

}  // namespace softndk::provider
