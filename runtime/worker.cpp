// System worker threads: ExQueueWorkItem and the IO_WORKITEM calls. One pool of threads serves
// every WORK_QUEUE_TYPE; it behaves like a Windows KQUEUE (see wdm.h above WORK_QUEUE_TYPE):
// at most `concurrency` workers run at once, and a worker that blocks in a runtime wait lets
// another one go. Idle workers sleep, each on its own condition variable, so a wake-up goes to
// exactly the worker that was chosen for it.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

// The runtime's IO_WORKITEM (opaque to consumers). Allocated from pool, so tests' leak checks
// see it.
struct _IO_WORKITEM {
    WORK_QUEUE_ITEM item;  // WorkerRoutine = run_io_work_item, Parameter = this
    ULONG magic;
    PDEVICE_OBJECT device;
    PIO_WORKITEM_ROUTINE routine;
    PIO_WORKITEM_ROUTINE_EX routine_ex;
    PVOID context;
    bool references_device;  // device is a DEVICE_OBJECT whose ReferenceCount the item holds
    bool caller_owned;       // IoInitializeWorkItem's: the caller's memory, not pool
};

namespace softndk::wdk {
namespace {

constexpr ULONG kIoWorkItemTag = 0x6B576F49;    // "IoWk"
constexpr ULONG kIoWorkItemMagic = 0x4B52574F;  // live IO_WORKITEM
// Windows allows a few dozen dynamic workers per queue; enough for work items that wait on
// one another, few enough for a 2-core machine.
constexpr unsigned kMaxThreads = 64;
// Workers above the concurrency level exit after this long without work.
constexpr auto kIdleRetirement = std::chrono::seconds(10);

void insert_tail(LIST_ENTRY &head, LIST_ENTRY &entry) {
    entry.Flink = &head;
    entry.Blink = head.Blink;
    head.Blink->Flink = &entry;
    head.Blink = &entry;
}

class WorkerPool {
  public:
    // Simulated time runs on no particular machine: a fixed level, so a seed replays the
    // same anywhere.
    WorkerPool()
        : concurrency_(sim::enabled() ? 2U : std::max(2U, std::thread::hardware_concurrency())) {
        queue_.Flink = queue_.Blink = &queue_;
    }

    // Queues `item` (its List.Flink must be NULL: not queued) and releases a worker if the
    // concurrency level allows one more.
    void enqueue(PWORK_QUEUE_ITEM item) {
        std::lock_guard guard(lock_);
        if (item->List.Flink != nullptr) {
            bugcheck(WORKER_INVALID, reinterpret_cast<ULONG_PTR>(item),
                     reinterpret_cast<ULONG_PTR>(item->WorkerRoutine), 0, 0,
                     "a work item was queued while it is still queued");
        }
        insert_tail(queue_, item->List);
        ++pending_;
        release_workers();
    }

    // No item queued and no routine running (the driver runner's "work is done").
    bool idle() {
        std::lock_guard guard(lock_);
        return pending_ == 0 && running_ == 0;
    }

    bool is_queued(const WORK_QUEUE_ITEM &item) {
        std::lock_guard guard(lock_);
        return item.List.Flink != nullptr;
    }

    // A running work routine blocks: one fewer worker counts against the concurrency level.
    void blocking() {
        std::lock_guard guard(lock_);
        --active_;
        release_workers();
    }

    // ... and runs again; the level may now be exceeded until a worker finishes, as with a
    // KQUEUE.
    void unblocked() {
        std::lock_guard guard(lock_);
        ++active_;
    }

  private:
    // An idle worker; lives on its stack while it sleeps.
    struct Parking {
        sim::ConditionVariable wake{"work queue (idle worker)"};
        bool woken = false;
    };

    // Wakes or starts workers for queued items, while the concurrency level allows. `waking_`
    // counts workers that were released but have not looked at the queue yet, so two quick
    // enqueues do not both claim the same idle worker's capacity.
    void release_workers() {
        while (pending_ > waking_ && active_ + waking_ < concurrency_) {
            if (!idle_.empty()) {
                Parking *parking = idle_.back();  // the most recently idle: its cache is warm
                idle_.pop_back();
                parking->woken = true;
                parking->wake.notify_one();
            } else if (threads_ < kMaxThreads) {
                try {
                    sim::start_detached("worker " + std::to_string(threads_ + 1),
                                        [this] { worker_main(); });
                } catch (const std::system_error &error) {
                    logger().error(
                        "work items: cannot start a worker thread ({}); {} item(s) "
                        "wait for a running one",
                        error.what(), pending_);
                    return;
                }
                ++threads_;
            } else {
                return;
            }
            ++waking_;
        }
    }

    PWORK_QUEUE_ITEM pop() {
        LIST_ENTRY *entry = queue_.Flink;
        entry->Blink->Flink = entry->Flink;
        entry->Flink->Blink = entry->Blink;
        // Windows' rule: List.Flink is NULL once the item is off the queue, so the routine may
        // queue the item again (or free it).
        entry->Flink = entry->Blink = nullptr;
        --pending_;
        return CONTAINING_RECORD(entry, WORK_QUEUE_ITEM, List);
    }

    void worker_main();

    std::mutex lock_;
    LIST_ENTRY queue_;  // WORK_QUEUE_ITEMs, FIFO, through List
    size_t pending_ = 0;
    unsigned threads_ = 0;
    unsigned active_ = 0;   // running a routine and not blocked in a runtime wait
    unsigned running_ = 0;  // running a routine, blocked or not
    unsigned waking_ = 0;
    std::vector<Parking *> idle_;
    const unsigned concurrency_;
};

// The pool whose routine this thread is running; NULL on every other thread.
thread_local WorkerPool *t_running_for = nullptr;

WorkerPool &pool() {
    return fork_local_instance<WorkerPool>();
}

}  // namespace

bool work_items_idle() {
    return pool().idle();
}

namespace {

void WorkerPool::worker_main() {
    std::unique_lock guard(lock_);
    --waking_;  // a new worker starts released
    for (;;) {
        if (pending_ > 0 && active_ < concurrency_) {
            PWORK_QUEUE_ITEM item = pop();
            ++active_;
            ++running_;
            const PWORKER_THREAD_ROUTINE routine = item->WorkerRoutine;
            const PVOID parameter = item->Parameter;
            guard.unlock();
            sim::yield("work item dispatch");
            // From here on `item` belongs to the routine: it may free or requeue it.
            t_running_for = this;
            routine(parameter);
            t_running_for = nullptr;
            const KIRQL irql = KeGetCurrentIrql();
            if (irql != PASSIVE_LEVEL) {
                bugcheck(WORKER_THREAD_RETURNED_AT_BAD_IRQL, reinterpret_cast<ULONG_PTR>(routine),
                         irql, reinterpret_cast<ULONG_PTR>(parameter),
                         reinterpret_cast<ULONG_PTR>(item),
                         fmt::format("a work routine returned at IRQL {}", irql));
            }
            guard.lock();
            --active_;
            --running_;
            continue;
        }
        Parking parking;
        idle_.push_back(&parking);
        while (!parking.woken) {
            // Workers within the concurrency level sleep until woken; extra ones (started while
            // others were blocked) wake once to retire after kIdleRetirement without work.
            if (threads_ <= concurrency_) {
                parking.wake.wait(guard);
            } else if (parking.wake.wait_for(guard, kIdleRetirement) == std::cv_status::timeout &&
                       !parking.woken && threads_ > concurrency_) {
                idle_.erase(std::find(idle_.begin(), idle_.end(), &parking));
                --threads_;
                return;
            }
        }
        --waking_;
    }
}

void check_queue_irql(const char *caller, const void *item) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > DISPATCH_LEVEL) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(item), irql, 0, 0,
                 fmt::format("{} at IRQL {} (above DISPATCH_LEVEL)", caller, irql));
    }
}

PIO_WORKITEM checked_io_work_item(PIO_WORKITEM work_item, const char *caller) {
    if (work_item == nullptr || work_item->magic != kIoWorkItemMagic) {
        fatal(fmt::format("{}: {} is not a live IO_WORKITEM from IoAllocateWorkItem", caller,
                          static_cast<void *>(work_item)));
    }
    return work_item;
}

// The WORK_QUEUE_ITEM routine of every IO_WORKITEM.
VOID run_io_work_item(PVOID parameter) {
    auto *work_item = static_cast<PIO_WORKITEM>(parameter);
    const PDEVICE_OBJECT device = work_item->device;
    const PIO_WORKITEM_ROUTINE routine = work_item->routine;
    const PIO_WORKITEM_ROUTINE_EX routine_ex = work_item->routine_ex;
    const PVOID context = work_item->context;
    const bool references_device = work_item->references_device;
    if (routine_ex != nullptr) {
        routine_ex(device, context, work_item);
    } else {
        routine(device, context);
    }
    // The routine may have freed work_item; only the copies above are used from here on.
    if (references_device) {
        std::atomic_ref<LONG>(device->ReferenceCount).fetch_sub(1, std::memory_order_release);
    }
}

void queue_io_work_item(PIO_WORKITEM work_item, PIO_WORKITEM_ROUTINE routine,
                        PIO_WORKITEM_ROUTINE_EX routine_ex, PVOID context, const char *caller) {
    check_queue_irql(caller, work_item);
    checked_io_work_item(work_item, caller);
    if (routine == nullptr && routine_ex == nullptr) {
        fatal(fmt::format("{}: the WorkerRoutine is NULL", caller));
    }
    WorkerPool &workers = pool();
    // Checked before the routine fields change: they belong to the queued instance until its
    // routine starts.
    if (workers.is_queued(work_item->item)) {
        bugcheck(WORKER_INVALID, reinterpret_cast<ULONG_PTR>(work_item),
                 reinterpret_cast<ULONG_PTR>(work_item->routine), 0, 0,
                 fmt::format("{}: the IO_WORKITEM is still queued", caller));
    }
    work_item->routine = routine;
    work_item->routine_ex = routine_ex;
    work_item->context = context;
    if (work_item->references_device) {
        std::atomic_ref<LONG>(work_item->device->ReferenceCount)
            .fetch_add(1, std::memory_order_relaxed);
    }
    workers.enqueue(&work_item->item);
}

}  // namespace

void note_thread_blocking() {
    if (WorkerPool *running_for = t_running_for) running_for->blocking();
}

void note_thread_unblocked() {
    if (WorkerPool *running_for = t_running_for) running_for->unblocked();
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI ExQueueWorkItem(PWORK_QUEUE_ITEM WorkItem, WORK_QUEUE_TYPE QueueType) {
    (void)QueueType;  // one pool serves every queue type
    wdk::check_queue_irql("ExQueueWorkItem", WorkItem);
    if (WorkItem == nullptr || WorkItem->WorkerRoutine == nullptr) {
        wdk::fatal(
            fmt::format("ExQueueWorkItem: work item {} has no WorkerRoutine (use "
                        "ExInitializeWorkItem)",
                        static_cast<void *>(WorkItem)));
    }
    wdk::pool().enqueue(WorkItem);
}

PIO_WORKITEM NTAPI IoAllocateWorkItem(PDEVICE_OBJECT DeviceObject) {
    wdk::check_queue_irql("IoAllocateWorkItem", DeviceObject);
    auto *work_item = static_cast<PIO_WORKITEM>(
        ExAllocatePoolWithTag(NonPagedPoolNx, sizeof(IO_WORKITEM), wdk::kIoWorkItemTag));
    if (work_item == nullptr) return nullptr;
    ExInitializeWorkItem(&work_item->item, wdk::run_io_work_item, work_item);
    work_item->magic = wdk::kIoWorkItemMagic;
    work_item->device = DeviceObject;
    work_item->routine = nullptr;
    work_item->routine_ex = nullptr;
    work_item->context = nullptr;
    work_item->references_device = DeviceObject != nullptr;
    work_item->caller_owned = false;
    return work_item;
}

ULONG NTAPI IoSizeofWorkItem(VOID) {
    return sizeof(IO_WORKITEM);
}

VOID NTAPI IoInitializeWorkItem(PVOID IoObject, PIO_WORKITEM IoWorkItem) {
    wdk::check_queue_irql("IoInitializeWorkItem", IoWorkItem);
    // A driver object is not referenced; a device object is, as for IoAllocateWorkItem.
    const bool is_device =
        IoObject != nullptr && static_cast<PDEVICE_OBJECT>(IoObject)->Type == IO_TYPE_DEVICE;
    ExInitializeWorkItem(&IoWorkItem->item, wdk::run_io_work_item, IoWorkItem);
    IoWorkItem->magic = wdk::kIoWorkItemMagic;
    IoWorkItem->device = static_cast<PDEVICE_OBJECT>(IoObject);
    IoWorkItem->routine = nullptr;
    IoWorkItem->routine_ex = nullptr;
    IoWorkItem->context = nullptr;
    IoWorkItem->references_device = is_device;
    IoWorkItem->caller_owned = true;
}

VOID NTAPI IoUninitializeWorkItem(PIO_WORKITEM IoWorkItem) {
    wdk::check_queue_irql("IoUninitializeWorkItem", IoWorkItem);
    wdk::checked_io_work_item(IoWorkItem, "IoUninitializeWorkItem");
    if (!IoWorkItem->caller_owned) {
        wdk::fatal(
            fmt::format("IoUninitializeWorkItem: IO_WORKITEM {} came from "
                        "IoAllocateWorkItem (free it with IoFreeWorkItem)",
                        static_cast<void *>(IoWorkItem)));
    }
    if (wdk::pool().is_queued(IoWorkItem->item)) {
        wdk::fatal(fmt::format("IoUninitializeWorkItem: IO_WORKITEM {} is still queued",
                               static_cast<void *>(IoWorkItem)));
    }
    IoWorkItem->magic = 0;
}

VOID NTAPI IoFreeWorkItem(PIO_WORKITEM IoWorkItem) {
    wdk::check_queue_irql("IoFreeWorkItem", IoWorkItem);
    wdk::checked_io_work_item(IoWorkItem, "IoFreeWorkItem");
    if (IoWorkItem->caller_owned) {
        wdk::fatal(
            fmt::format("IoFreeWorkItem: IO_WORKITEM {} was initialised by the caller "
                        "(IoInitializeWorkItem; end it with IoUninitializeWorkItem)",
                        static_cast<void *>(IoWorkItem)));
    }
    if (wdk::pool().is_queued(IoWorkItem->item)) {
        wdk::fatal(
            fmt::format("IoFreeWorkItem: IO_WORKITEM {} is still queued (its routine has "
                        "not started)",
                        static_cast<void *>(IoWorkItem)));
    }
    IoWorkItem->magic = 0;
    ExFreePoolWithTag(IoWorkItem, wdk::kIoWorkItemTag);
}

VOID NTAPI IoQueueWorkItem(PIO_WORKITEM IoWorkItem, PIO_WORKITEM_ROUTINE WorkerRoutine,
                           WORK_QUEUE_TYPE QueueType, PVOID Context) {
    (void)QueueType;
    wdk::queue_io_work_item(IoWorkItem, WorkerRoutine, nullptr, Context, "IoQueueWorkItem");
}

VOID NTAPI IoQueueWorkItemEx(PIO_WORKITEM IoWorkItem, PIO_WORKITEM_ROUTINE_EX WorkerRoutine,
                             WORK_QUEUE_TYPE QueueType, PVOID Context) {
    (void)QueueType;
    wdk::queue_io_work_item(IoWorkItem, nullptr, WorkerRoutine, Context, "IoQueueWorkItemEx");
}

}  // extern "C"
