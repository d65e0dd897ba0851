// wdk_internal.hpp - what the WDK runtime's translation units share: the "wdk" logger,
// the fatal-error paths (bug checks, failed runtime checks), the Windows printf formatter
// and timeout conversion. Not part of the consumer-facing API (that is include/ndkpi/wdm.h).
#pragma once

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <wdm.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// The kernel's view of a thread (exec_sync.cpp): what KeGetCurrentThread returns, one per
// thread, living as long as the thread. Only its owner thread changes the region counts.
struct _KTHREAD {
    ULONG critical_regions = 0;  // KeEnterCriticalRegion depth (and KMUTEXes held)
    ULONG guarded_regions = 0;   // KeEnterGuardedRegion depth
    KPRIORITY priority = 8;      // KeSetPriorityThread
    LONG base_increment = 0;     // KeSetBasePriorityThread
};

namespace softndk::wdk {

// Appends character `c` as UTF-8 (U+FFFD for what is not a Unicode scalar value): how
// the runtime turns WCHAR text into the narrow strings it logs and converts (debug.cpp).
void append_utf8(std::string &out, uint32_t c);

// The spdlog logger "wdk": stderr, level from SOFTNDK_LOG_LEVEL (default warn), created at
// first use, registered with spdlog (spdlog::get("wdk") finds it) and never destroyed, so
// threads may log during process exit.
spdlog::logger &logger();

// The level SOFTNDK_LOG_LEVEL asks for (trace, debug, info, warn, error, critical, off);
// warn when it is unset or not a level name. Read once, when the logger is created.
spdlog::level::level_enum log_level_from_environment();

// Reports `message` on stderr and through the logger (critical), then abort()s.
[[noreturn]] void fatal(std::string_view message);

// A Windows bug check raised by the runtime: "*** BUGCHECK 0x0000000A
// (IRQL_NOT_LESS_OR_EQUAL) (p1, p2, p3, p4): <why>", then fatal().
[[noreturn]] void bugcheck(ULONG code, ULONG_PTR p1, ULONG_PTR p2, ULONG_PTR p3, ULONG_PTR p4,
                           std::string_view why);

// Formats like Windows' DbgPrint: "l" is 32 bits, I64/I32/I size prefixes, %ws/%ls/%S wide
// strings, %wZ/%Z counted strings, %n ignored. Consumes `args`.
std::string format_windows_printf(const char *format, va_list args);

// A wait or delay timeout (NULL, 0, negative relative or positive absolute, in 100 ns units)
// turned into a point on the steady clock. Relative timeouts above 100 years are infinite.
struct Deadline {
    enum class Kind { kPoll, kInfinite, kAt } kind;
    std::chrono::steady_clock::time_point at;
};
Deadline deadline_from_timeout(const LARGE_INTEGER *timeout);

// System time now: 100 ns units since 1601-01-01 UTC.
LONGLONG system_time_now();

// The CPU's spin-wait hint (x86 PAUSE).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Live pool allocations (ExAllocatePool* minus ExFreePool*), for leak checks in tests.
std::size_t pool_live_allocations();

// The process-wide instance of T, created at first use and never destroyed (runtime threads may
// use it during process exit). A forked child does not inherit it: its first use creates a
// fresh T, because the parent's runtime threads do not exist in the child and the parent's
// instance may be locked by one of them. T's constructor must be cheap and start no thread
// (two racing first uses may both construct one; the loser is deleted).
template <class T>
T &fork_local_instance() {
    static std::atomic<T *> instance{nullptr};
    [[maybe_unused]] static const bool reset_in_child = [] {
        pthread_atfork(nullptr, nullptr,
                       [] { instance.store(nullptr, std::memory_order_relaxed); });
        return true;
    }();
    T *current = instance.load(std::memory_order_acquire);
    if (current != nullptr) return *current;
    T *fresh = new T;
    if (instance.compare_exchange_strong(current, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;
    return *current;
}

// ---- The object manager (object.cpp; threads in thread.cpp). Contract in
// softndk_wdm_system.h. Every object a handle or an Ob* call can name is either a thread
// (_ETHREAD, a dispatcher object) or a KernelObject.

// Bug-checks IRQL_NOT_LESS_OR_EQUAL, naming `caller`, when the IRQL is above `highest` (the
// IRQL a WDK routine documents as its maximum). (object.cpp)
void require_irql_at_most(KIRQL highest, const char *caller);
inline void require_passive(const char *caller) {
    require_irql_at_most(PASSIVE_LEVEL, caller);
}

// An object type: its name, for messages.
}  // namespace softndk::wdk
struct _OBJECT_TYPE {
    const char *name;
};
namespace softndk::wdk {

// Every object other than a thread. Created with one reference (the creator's); the last
// dereference destroys it (its name, if any, goes first). Subclasses release what they own
// in their destructor.
class KernelObject {
  public:
    explicit KernelObject(POBJECT_TYPE type);
    virtual ~KernelObject();
    KernelObject(const KernelObject &) = delete;
    KernelObject &operator=(const KernelObject &) = delete;

    POBJECT_TYPE type() const { return type_; }
    // The name in the object namespace (normalised, original case), empty if unnamed.
    const std::wstring &name() const { return name_; }

  private:
    friend class ObjectNamespace;
    friend LONG_PTR object_reference(PVOID, const char *);
    friend LONG_PTR object_dereference(PVOID, const char *);
    friend bool try_reference(KernelObject *);
    POBJECT_TYPE type_;
    std::atomic<LONG_PTR> references_{1};
    std::wstring name_;
    bool permanent_ = false;  // the namespace holds a reference (OBJ_PERMANENT)
};

// Object types (object.cpp). The thread type is *PsThreadType.
extern _OBJECT_TYPE g_process_type, g_file_type, g_callback_type, g_key_type, g_directory_type,
    g_symbolic_link_type, g_transaction_type, g_transaction_manager_type, g_resource_manager_type,
    g_enlistment_type, g_wmi_block_type;

// The object at `object`, thread or KernelObject, with one more / one fewer reference; the
// new count. Anything else is reported and aborts (`caller` names the call).
LONG_PTR object_reference(PVOID object, const char *caller);
LONG_PTR object_dereference(PVOID object, const char *caller);
// The object's type; aborts like the above for an unknown pointer.
POBJECT_TYPE object_type(PVOID object, const char *caller);
// The KernelObject at `object` if it is a live one (not a thread, not unknown).
KernelObject *as_kernel_object(PVOID object);
// A thread object? (thread.cpp)
bool is_thread_object(PVOID object);
LONG_PTR thread_reference(PVOID thread);
LONG_PTR thread_dereference(PVOID thread, const char *caller);

// A new kernel handle for `object`; takes over one reference the caller holds (thread.cpp).
HANDLE insert_handle(PVOID object);
// The object behind `handle` with a new reference. STATUS_INVALID_HANDLE if it is not open,
// STATUS_OBJECT_TYPE_MISMATCH if `type` is not NULL and not the object's type (no reference
// is kept then).
NTSTATUS reference_handle(HANDLE handle, POBJECT_TYPE type, PVOID *object);

// A KernelObject of class T behind `handle` (of `type`), holding a reference while alive.
template <class T>
class HandleRef {
  public:
    HandleRef(HANDLE handle, POBJECT_TYPE type) {
        PVOID object = nullptr;
        status_ = reference_handle(handle, type, &object);
        if (NT_SUCCESS(status_)) object_ = static_cast<T *>(as_kernel_object(object));
    }
    ~HandleRef() {
        if (object_ != nullptr) object_dereference(object_, "HandleRef");
    }
    HandleRef(const HandleRef &) = delete;
    HandleRef &operator=(const HandleRef &) = delete;
    NTSTATUS status() const { return status_; }
    T *get() const { return object_; }
    T *operator->() const { return object_; }

  private:
    NTSTATUS status_;
    T *object_ = nullptr;
};

// The process-wide object namespace: names are compared case-insensitively; "\DosDevices\"
// and "\GLOBAL??\" are read as "\??\" (normalize_object_name).
std::wstring normalize_object_name(std::wstring_view name);
// Names `object` (normalised `name`). STATUS_OBJECT_NAME_COLLISION if the name is used,
// STATUS_OBJECT_PATH_NOT_FOUND if its parent directory does not exist. `permanent`: the
// namespace keeps a reference until make_temporary.
NTSTATUS insert_named_object(KernelObject *object, const std::wstring &name, bool permanent);
// The object named `name`, with a new reference, or NULL.
KernelObject *lookup_named_object(const std::wstring &name);
// Drops the namespace's reference of a permanent object (ZwMakeTemporaryObject).
void make_temporary(KernelObject *object);

// The name an OBJECT_ATTRIBUTES carries, as a wide string ("" if none).
std::wstring object_name(const OBJECT_ATTRIBUTES *attributes);
// A UNICODE_STRING's text.
std::wstring to_wstring(const UNICODE_STRING *string);
// Upper-cased as object and registry names compare.
std::wstring upcase_name(std::wstring_view text);

// ---- Registry (registry.cpp).

// Loads registry text (format in registry.cpp's header comment) into the registry;
// false with `error` set on a syntax error (what was read before stays).
bool load_registry_text(std::string_view text, std::string &error);
// Creates \Registry\Machine\System\CurrentControlSet\Services\<name> if missing.
void ensure_service_key(const std::wstring &service_name);
// Removes every key and value and restores the initial tree (tests).
void reset_registry();

// ---- Driver reinitialization (notify.cpp): calls the routines registered with
// IoRegister[Boot]DriverReinitialization for `driver`, boot ones first; returns how many
// calls were made.
int run_driver_reinitialization(PDRIVER_OBJECT driver);

// ---- Dispatcher objects (dispatcher.cpp).

// DISPATCHER_HEADER.Type of the objects the dispatcher knows: Windows' KOBJECTS values.
inline constexpr UCHAR kEventNotificationObject = 0;
inline constexpr UCHAR kEventSynchronizationObject = 1;
inline constexpr UCHAR kMutantObject = 2;
inline constexpr UCHAR kSemaphoreObject = 5;
inline constexpr UCHAR kThreadObject = 6;
inline constexpr UCHAR kTimerNotificationObject = 8;
inline constexpr UCHAR kTimerSynchronizationObject = 9;

// Signals a dispatcher object as KeSetEvent signals an event of the same kind (a
// synchronization object goes to one waiter, or stays signalled until a wait consumes it) and
// returns the previous SignalState. Takes the dispatcher lock and, if `then` is given, calls
// then(context) after the signal, still under that lock: the threads the signal released cannot
// run before `then` returns (the timer queues its DPC this way, so a waiter that frees the timer
// and its DPC cannot race with the queueing). Lock order: timer -> dispatcher -> DPC queue, and
// dispatcher -> worker pool.
LONG signal_object(DISPATCHER_HEADER *object, void (*then)(void *) = nullptr,
                   void *context = nullptr);
// Makes a dispatcher object unsignalled. Takes the dispatcher lock.
void reset_object(DISPATCHER_HEADER *object);
// For KMUTEX and KSEMAPHORE (exec_sync.cpp): under the dispatcher lock, calls
// change(object, context), which returns FALSE to leave the object alone or TRUE after raising
// its SignalState; then hands the object to the waiters it now satisfies (FIFO), consuming it as
// each wait does (a semaphore unit, a mutex ownership), until it is no longer signalled.
// Returns what `change` returned. Mutex waits satisfied this way, and all waits that acquire a
// KMUTEX, make the new owner enter a critical region when it resumes.
bool change_and_release_waiters(DISPATCHER_HEADER *object,
                                bool (*change)(DISPATCHER_HEADER *object, void *context),
                                void *context);

// ---- Is the driver's work done? (the driver runner, driver_main.cpp). Each is a snapshot
// under its own lock: no work item queued or running; no DPC queued or running; no KTIMER
// set; every system thread from PsCreateSystemThread has finished.
bool work_items_idle();
bool dpcs_idle();
bool no_timers_set();
bool system_threads_idle();

// ---- Worker pool (worker.cpp).

// A system worker thread about to block in a runtime wait (KeWaitFor*, KeDelayExecutionThread)
// tells the pool, which may release another worker, as a KQUEUE does; it reports back when it
// runs again. No-ops on every other thread. May be called under the dispatcher lock.
void note_thread_blocking();
void note_thread_unblocked();

// Brackets a blocking wait with note_thread_blocking / note_thread_unblocked.
class BlockingScope {
  public:
    BlockingScope() { note_thread_blocking(); }
    ~BlockingScope() { note_thread_unblocked(); }
    BlockingScope(const BlockingScope &) = delete;
    BlockingScope &operator=(const BlockingScope &) = delete;
};

// ---- The I/O manager (io_manager.cpp, with irp.cpp).

// Enters a device from IoCreateDevice in the name space (name may be NULL or empty: unnamed).
// STATUS_OBJECT_NAME_COLLISION when the name is taken, STATUS_OBJECT_NAME_INVALID when it does
// not start with a backslash.
NTSTATUS register_device(PDEVICE_OBJECT device, PCUNICODE_STRING name);
// IoDeleteDevice's part: removes the name; true when the device may be freed now, false when
// references remain (the last ObDereferenceObject then calls free_device_object).
bool unregister_device(PDEVICE_OBJECT device);
// Frees a DEVICE_OBJECT from IoCreateDevice (irp.cpp).
void free_device_object(PDEVICE_OBJECT device);
// Drops what the I/O manager keeps beside an IRP (attributes, a system buffer it allocated).
// IoFreeIrp and IoReuseIrp call it.
void forget_irp(PIRP irp);
// IoCompleteRequest's last step for an IRP that reached the top: if the I/O manager built it
// with an event (IoBuildDeviceIoControlRequest, IoBuildSynchronousFsdRequest), copies buffered
// output back, frees buffer and MDLs, fills the status block, FREES the IRP, sets the event
// and returns true; otherwise false (irp.cpp then does the plain UserIosb / UserEvent part).
bool complete_built_irp(PIRP irp);
// Object references on device and file objects (ObReferenceObject / ObDereferenceObject).
bool is_io_object(PVOID object);
LONG_PTR reference_io_object(PVOID object);
LONG_PTR dereference_io_object(PVOID object);

}  // namespace softndk::wdk
