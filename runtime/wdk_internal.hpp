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

namespace softndk::wdk {

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

// ---- Dispatcher objects (dispatcher.cpp).

// DISPATCHER_HEADER.Type of the objects the dispatcher knows: Windows' KOBJECTS values.
inline constexpr UCHAR kEventNotificationObject = 0;
inline constexpr UCHAR kEventSynchronizationObject = 1;
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
