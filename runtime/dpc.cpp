// Deferred procedure calls: one "DPC processor" thread runs queued KDPCs in FIFO order at
// DISPATCH_LEVEL (contract in wdm.h above KDPC). The queue is intrusive, through the KDPCs'
// own DpcListEntry, so queueing never allocates and is safe at any IRQL.
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

static_assert(sizeof(KDPC) == 64, "KDPC must keep Windows' x64 size");
static_assert(offsetof(KDPC, DeferredRoutine) == 0x18);
static_assert(offsetof(KDPC, DpcData) == 0x38);

constexpr UCHAR kDpcObject = 19;  // Windows' KOBJECTS value for a DPC

PRKDPC dpc_of(SINGLE_LIST_ENTRY *entry) {
    return entry == nullptr ? nullptr : CONTAINING_RECORD(entry, KDPC, DpcListEntry);
}

class DpcProcessor {
  public:
    bool insert(PRKDPC dpc, PVOID argument1, PVOID argument2) {
        std::lock_guard guard(lock_);
        // DpcData is non-NULL exactly while the DPC is on this queue.
        if (dpc->DpcData != nullptr) return false;
        dpc->SystemArgument1 = argument1;
        dpc->SystemArgument2 = argument2;
        dpc->DpcData = this;
        dpc->DpcListEntry.Next = nullptr;
        if (tail_ != nullptr) {
            tail_->DpcListEntry.Next = &dpc->DpcListEntry;
        } else {
            head_ = dpc;
        }
        tail_ = dpc;
        if (!started_) start();
        ready_.notify_one();
        return true;
    }

    bool idle() {
        std::lock_guard guard(lock_);
        return head_ == nullptr && !running_;
    }

    bool remove(PRKDPC dpc) {
        std::lock_guard guard(lock_);
        if (dpc->DpcData == nullptr) return false;
        PRKDPC previous = nullptr;
        PRKDPC current = head_;
        while (current != nullptr && current != dpc) {
            previous = current;
            current = dpc_of(current->DpcListEntry.Next);
        }
        if (current == nullptr) {
            // Queued on a queue this process no longer runs (the parent's, before a fork).
            dpc->DpcData = nullptr;
            return false;
        }
        PRKDPC next = dpc_of(dpc->DpcListEntry.Next);
        if (previous != nullptr) {
            previous->DpcListEntry.Next = dpc->DpcListEntry.Next;
        } else {
            head_ = next;
        }
        if (tail_ == dpc) tail_ = previous;
        dpc->DpcListEntry.Next = nullptr;
        dpc->DpcData = nullptr;
        return true;
    }

  private:
    // Under lock_. If the thread cannot start, the DPCs stay queued and the next insert tries
    // again.
    void start() {
        try {
            sim::start_detached("DPC", [this] { run(); });
            started_ = true;
        } catch (const std::system_error &error) {
            logger().error("DPCs: cannot start the DPC thread ({}); queued DPCs wait",
                           error.what());
        }
    }

    void run() {
        std::unique_lock guard(lock_);
        for (;;) {
            while (head_ == nullptr)
                ready_.wait(guard);
            PRKDPC dpc = head_;
            head_ = dpc_of(dpc->DpcListEntry.Next);
            if (head_ == nullptr) tail_ = nullptr;
            dpc->DpcListEntry.Next = nullptr;
            const PKDEFERRED_ROUTINE routine = dpc->DeferredRoutine;
            const PVOID context = dpc->DeferredContext;
            const PVOID argument1 = dpc->SystemArgument1;
            const PVOID argument2 = dpc->SystemArgument2;
            // Off the queue: the DPC may be queued again, by anyone, its own routine included.
            dpc->DpcData = nullptr;
            running_ = true;
            guard.unlock();
            sim::yield("DPC dispatch");
            const KIRQL old = KfRaiseIrql(DISPATCH_LEVEL);
            routine(dpc, context, argument1, argument2);
            const KIRQL irql = KeGetCurrentIrql();
            if (irql != DISPATCH_LEVEL) {
                fatal(
                    fmt::format("DPC routine {} returned at IRQL {}; it must return at "
                                "DISPATCH_LEVEL, the IRQL it was called at",
                                reinterpret_cast<void *>(routine), irql));
            }
            KeLowerIrql(old);
            guard.lock();
            running_ = false;
        }
    }

    std::mutex lock_;
    sim::ConditionVariable ready_{"DPC queue (idle)"};
    PRKDPC head_ = nullptr;
    bool running_ = false;  // a routine is running (the driver runner's "work is done")
    PRKDPC tail_ = nullptr;
    bool started_ = false;
};

DpcProcessor &processor() {
    return fork_local_instance<DpcProcessor>();
}

}  // namespace

bool dpcs_idle() {
    return processor().idle();
}

namespace {

// KeFlushQueuedDpcs' marker: runs after every DPC queued before it.
VOID set_event_dpc(PKDPC dpc, PVOID context, PVOID argument1, PVOID argument2) {
    (void)dpc;
    (void)argument1;
    (void)argument2;
    KeSetEvent(static_cast<PRKEVENT>(context), IO_NO_INCREMENT, FALSE);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI KeInitializeDpc(PRKDPC Dpc, PKDEFERRED_ROUTINE DeferredRoutine, PVOID DeferredContext) {
    Dpc->TargetInfoAsUlong = 0;
    Dpc->Type = wdk::kDpcObject;
    Dpc->Importance = MediumImportance;
    Dpc->Number = 0;
    Dpc->DpcListEntry.Next = nullptr;
    Dpc->ProcessorHistory = 0;
    Dpc->DeferredRoutine = DeferredRoutine;
    Dpc->DeferredContext = DeferredContext;
    Dpc->SystemArgument1 = nullptr;
    Dpc->SystemArgument2 = nullptr;
    Dpc->DpcData = nullptr;
}

BOOLEAN NTAPI KeInsertQueueDpc(PRKDPC Dpc, PVOID SystemArgument1, PVOID SystemArgument2) {
    if (Dpc == nullptr || Dpc->DeferredRoutine == nullptr) {
        wdk::fatal(
            fmt::format("KeInsertQueueDpc: DPC {} has no DeferredRoutine (use "
                        "KeInitializeDpc)",
                        static_cast<void *>(Dpc)));
    }
    return wdk::processor().insert(Dpc, SystemArgument1, SystemArgument2) ? TRUE : FALSE;
}

BOOLEAN NTAPI KeRemoveQueueDpc(PRKDPC Dpc) {
    return wdk::processor().remove(Dpc) ? TRUE : FALSE;
}

VOID NTAPI KeFlushQueuedDpcs(VOID) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql != PASSIVE_LEVEL) {
        wdk::bugcheck(IRQL_NOT_LESS_OR_EQUAL, 0, irql, 0, 0,
                      fmt::format("KeFlushQueuedDpcs at IRQL {} (it needs PASSIVE_LEVEL)", irql));
    }
    // The queue is FIFO and served by one thread, so a marker queued now runs after every DPC
    // queued before it, and after the one running now.
    KEVENT flushed;
    KeInitializeEvent(&flushed, NotificationEvent, FALSE);
    KDPC marker;
    KeInitializeDpc(&marker, wdk::set_event_dpc, &flushed);
    KeInsertQueueDpc(&marker, nullptr, nullptr);
    KeWaitForSingleObject(&flushed, Executive, KernelMode, FALSE, nullptr);
}

}  // extern "C"
