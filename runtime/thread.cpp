// System threads, the kernel handle table, and object references (contract in wdm.h above
// ACCESS_MASK and in softndk_wdm_system.h). A thread object is a dispatcher object
// (DISPATCHER_HEADER first, Type 6) that its thread signals when it ends; it is
// reference-counted by its running thread, its open handles and ObReferenceObject[ByHandle]
// callers. Threads the runtime did not create get a thread object at their first
// PsGetCurrentThread. The handle table holds every kind of object: threads, and the
// KernelObjects of object.cpp (keys, files, directories, ...), whose references object.cpp
// counts.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <new>
#include <unordered_map>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

// The thread object. Only PETHREAD pointers leave the runtime.
struct _ETHREAD {
    DISPATCHER_HEADER Header;  // first, so KeWaitForSingleObject takes a PETHREAD
    ULONG magic;
    std::atomic<LONG_PTR> references;
    PKSTART_ROUTINE routine;
    PVOID context;
    NTSTATUS exit_status;
    softndk::sim::Ticket sim_ticket;  // simulated time: the thread as the scheduler knows it
};

namespace softndk::wdk {
namespace {

constexpr ULONG kThreadMagic = 0x44525448;  // "THRD"
// Kernel handles on x64 Windows have the top bits set; these look the same and can never be
// mistaken for a pointer or a small user-mode handle.
constexpr ULONG_PTR kFirstHandle = 0xFFFFFFFF80000004ULL;
constexpr ULONG_PTR kHandleStep = 4;

_OBJECT_TYPE g_thread_type{"Thread"};
POBJECT_TYPE g_thread_type_pointer = &g_thread_type;

// The thread object of the system thread running here; NULL on other threads.
thread_local PETHREAD t_current = nullptr;

PETHREAD checked_thread(PVOID object, const char *caller) {
    auto *thread = static_cast<PETHREAD>(object);
    if (thread == nullptr || thread->Header.Type != kThreadObject ||
        thread->magic != kThreadMagic) {
        fatal(
            fmt::format("{}: {} is not an object SoftNDK's object manager knows", caller, object));
    }
    return thread;
}

LONG_PTR reference(PETHREAD thread) {
    return thread->references.fetch_add(1, std::memory_order_relaxed) + 1;
}

LONG_PTR dereference(PETHREAD thread, const char *caller) {
    const LONG_PTR remaining = thread->references.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if (remaining < 0) {
        fatal(fmt::format("{}: thread object {} dereferenced more often than referenced", caller,
                          static_cast<void *>(thread)));
    }
    if (remaining == 0) {
        thread->magic = 0;
        delete thread;
    }
    return remaining;
}

// Open kernel handles, of every object (threads and KernelObjects). Each holds one
// reference on its object.
class HandleTable {
  public:
    HANDLE insert(PVOID object) {
        std::lock_guard guard(lock_);
        const ULONG_PTR value = next_;
        next_ += kHandleStep;
        handles_.emplace(value, object);
        return reinterpret_cast<HANDLE>(value);
    }

    // The object behind `handle`, with a new reference; NULL if the handle is not open.
    PVOID reference_object(HANDLE handle) {
        std::lock_guard guard(lock_);
        auto found = handles_.find(reinterpret_cast<ULONG_PTR>(handle));
        if (found == handles_.end()) return nullptr;
        object_reference(found->second, "handle");
        return found->second;
    }

    // Closes `handle`; the caller now owns the handle's reference. NULL if it was not open.
    PVOID remove(HANDLE handle) {
        std::lock_guard guard(lock_);
        auto found = handles_.find(reinterpret_cast<ULONG_PTR>(handle));
        if (found == handles_.end()) return nullptr;
        PVOID object = found->second;
        handles_.erase(found);
        return object;
    }

  private:
    std::mutex lock_;
    std::unordered_map<ULONG_PTR, PVOID> handles_;
    ULONG_PTR next_ = kFirstHandle;
};

HandleTable &handles() {
    return fork_local_instance<HandleTable>();
}

std::atomic<ULONG_PTR> g_next_thread_id{4};

// The exit status PsTerminateSystemThread passes to the thread's end.
thread_local NTSTATUS t_exit_status = STATUS_SUCCESS;

// The thread's end, run as system_thread_main's stack unwinds - after a normal return, or after
// pthread_exit (PsTerminateSystemThread) has unwound the routine's frames, so destructors there
// have run before anyone sees the thread object signalled. The object becomes signalled, then
// the running thread's reference goes.
// System threads created and not yet finished (the driver runner's "work is done").
std::atomic<long> g_live_threads{0};

struct ThreadExit {
    PETHREAD self;
    ~ThreadExit() {
        t_current = nullptr;
        self->exit_status = t_exit_status;
        signal_object(&self->Header);
        dereference(self, "system thread exit");
        g_live_threads.fetch_sub(1, std::memory_order_acq_rel);
        sim::depart();  // thread exit: a control transfer point in simulated time
    }
};

// The thread object of a thread PsCreateSystemThread did not create (the driver runner's,
// a test's, a worker's): made at its first PsGetCurrentThread, held by the thread, and
// signalled and released when the thread ends.
struct AdoptedThread {
    PETHREAD self = nullptr;
    ~AdoptedThread() {
        if (self == nullptr) return;
        signal_object(&self->Header);
        dereference(self, "thread exit");
    }
};
thread_local AdoptedThread t_adopted;

PETHREAD new_thread_object(LONG_PTR references) {
    auto *thread = new _ETHREAD{};
    thread->Header.Type = kThreadObject;
    thread->Header.Size = sizeof(DISPATCHER_HEADER) / sizeof(LONG);
    thread->Header.WaitListHead.Flink = thread->Header.WaitListHead.Blink =
        &thread->Header.WaitListHead;
    thread->magic = kThreadMagic;
    thread->references.store(references, std::memory_order_relaxed);
    thread->exit_status = STATUS_PENDING;
    return thread;
}

void *system_thread_main(void *argument) {
    auto *thread = static_cast<PETHREAD>(argument);
    sim::arrive(thread->sim_ticket);  // runs when the scheduler picks it (simulated time)
    t_current = thread;
    const ThreadExit exit{thread};
    thread->routine(thread->context);
    return nullptr;
}

void check_passive(const char *caller, const void *object) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql != PASSIVE_LEVEL) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(object), irql, 0, 0,
                 fmt::format("{} at IRQL {} (it needs PASSIVE_LEVEL)", caller, irql));
    }
}

}  // namespace

bool system_threads_idle() {
    return g_live_threads.load(std::memory_order_acquire) == 0;
}

bool is_thread_object(PVOID object) {
    auto *thread = static_cast<PETHREAD>(object);
    return thread != nullptr && thread->Header.Type == kThreadObject &&
           thread->magic == kThreadMagic;
}

LONG_PTR thread_reference(PVOID thread) {
    return reference(checked_thread(thread, "ObReferenceObject"));
}

LONG_PTR thread_dereference(PVOID thread, const char *caller) {
    return dereference(checked_thread(thread, caller), caller);
}

HANDLE insert_handle(PVOID object) {
    return handles().insert(object);
}

NTSTATUS reference_handle(HANDLE handle, POBJECT_TYPE type, PVOID *object) {
    *object = nullptr;
    PVOID found = handles().reference_object(handle);
    if (found == nullptr) return STATUS_INVALID_HANDLE;
    if (type != nullptr && object_type(found, "reference_handle") != type) {
        object_dereference(found, "reference_handle");
        return STATUS_OBJECT_TYPE_MISMATCH;
    }
    *object = found;
    return STATUS_SUCCESS;
}

PETHREAD current_thread_object() {
    if (t_current != nullptr) return t_current;
    if (t_adopted.self == nullptr) t_adopted.self = new_thread_object(1);
    return t_adopted.self;
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

POBJECT_TYPE *PsThreadType = &wdk::g_thread_type_pointer;

extern "C" {

NTSTATUS NTAPI PsCreateSystemThread(PHANDLE ThreadHandle, ULONG DesiredAccess,
                                    POBJECT_ATTRIBUTES ObjectAttributes, HANDLE ProcessHandle,
                                    PCLIENT_ID ClientId, PKSTART_ROUTINE StartRoutine,
                                    PVOID StartContext) {
    (void)DesiredAccess;
    (void)ObjectAttributes;
    (void)ProcessHandle;
    wdk::check_passive("PsCreateSystemThread", reinterpret_cast<const void *>(StartRoutine));
    if (ThreadHandle == nullptr || StartRoutine == nullptr) return STATUS_INVALID_PARAMETER;

    PETHREAD thread = wdk::new_thread_object(2);  // the handle and the thread
    thread->routine = StartRoutine;
    thread->context = StartContext;

    const HANDLE handle = wdk::handles().insert(thread);
    wdk::g_live_threads.fetch_add(1, std::memory_order_acq_rel);
    static std::atomic<unsigned> started{0};
    thread->sim_ticket = softndk::sim::prepare_thread(
        "system thread " + std::to_string(started.fetch_add(1, std::memory_order_relaxed) + 1));
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t posix_thread;
    const int error = pthread_create(&posix_thread, &attributes, wdk::system_thread_main, thread);
    pthread_attr_destroy(&attributes);
    if (error != 0) {
        wdk::logger().error("PsCreateSystemThread: pthread_create failed (error {})", error);
        wdk::handles().remove(handle);
        wdk::g_live_threads.fetch_sub(1, std::memory_order_acq_rel);
        softndk::sim::abandon(thread->sim_ticket);
        thread->magic = 0;
        delete thread;
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if (ClientId != nullptr) {
        ClientId->UniqueProcess = reinterpret_cast<HANDLE>(static_cast<ULONG_PTR>(getpid()));
        ClientId->UniqueThread =
            reinterpret_cast<HANDLE>(wdk::g_next_thread_id.fetch_add(4, std::memory_order_relaxed));
    }
    *ThreadHandle = handle;
    softndk::sim::yield("PsCreateSystemThread");  // the new thread may run first
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI PsTerminateSystemThread(NTSTATUS ExitStatus) {
    if (wdk::t_current == nullptr) return STATUS_INVALID_PARAMETER;
    wdk::check_passive("PsTerminateSystemThread", wdk::t_current);
    wdk::t_exit_status = ExitStatus;
    pthread_exit(nullptr);  // unwinds to system_thread_main, whose ThreadExit ends the thread
}

NTSTATUS NTAPI ZwClose(HANDLE Handle) {
    PVOID object = wdk::handles().remove(Handle);
    if (object == nullptr) return STATUS_INVALID_HANDLE;
    wdk::object_dereference(object, "ZwClose");
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ZwWaitForSingleObject(HANDLE Handle, BOOLEAN Alertable, PLARGE_INTEGER Timeout) {
    PVOID thread = nullptr;
    const NTSTATUS referenced = wdk::reference_handle(Handle, *PsThreadType, &thread);
    if (!NT_SUCCESS(referenced)) return referenced;
    const NTSTATUS status =
        KeWaitForSingleObject(thread, Executive, KernelMode, Alertable, Timeout);
    wdk::object_dereference(thread, "ZwWaitForSingleObject");
    return status;
}

NTSTATUS NTAPI ObReferenceObjectByHandle(HANDLE Handle, ACCESS_MASK DesiredAccess,
                                         POBJECT_TYPE ObjectType, KPROCESSOR_MODE AccessMode,
                                         PVOID *Object,
                                         POBJECT_HANDLE_INFORMATION HandleInformation) {
    (void)AccessMode;
    if (Object == nullptr) return STATUS_INVALID_PARAMETER;
    const NTSTATUS status = wdk::reference_handle(Handle, ObjectType, Object);
    if (!NT_SUCCESS(status)) return status;
    if (HandleInformation != nullptr) {
        HandleInformation->HandleAttributes = OBJ_KERNEL_HANDLE;
        HandleInformation->GrantedAccess = DesiredAccess;
    }
    return STATUS_SUCCESS;
}

LONG_PTR NTAPI ObfReferenceObject(PVOID Object) {
    return wdk::object_reference(Object, "ObReferenceObject");
}

LONG_PTR NTAPI ObfDereferenceObject(PVOID Object) {
    return wdk::object_dereference(Object, "ObDereferenceObject");
}

PETHREAD NTAPI PsGetCurrentThread(VOID) {
    return wdk::current_thread_object();
}

HANDLE NTAPI PsGetCurrentThreadId(VOID) {
    return reinterpret_cast<HANDLE>(static_cast<ULONG_PTR>(gettid()));
}

HANDLE NTAPI PsGetThreadProcessId(PETHREAD Thread) {
    wdk::checked_thread(Thread, "PsGetThreadProcessId");
    return reinterpret_cast<HANDLE>(static_cast<ULONG_PTR>(getpid()));
}

}  // extern "C"
