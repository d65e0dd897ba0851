// System worker threads: ExQueueWorkItem / WORK_QUEUE_ITEM and IoAllocateWorkItem /
// IoQueueWorkItem[Ex] / IoFreeWorkItem. What the routine sees (thread, IRQL, arguments, the
// item's state), requeueing and freeing from inside the routine, the device reference, work
// items that wait for each other, and the misuse that bug-checks.
#include <wdm.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"
#include "wdk_internal.hpp"

using softndk::test::eventually;
using softndk::test::wait_ms;

namespace {

constexpr ULONG kTag = 0x74736554;  // "Test"

struct Observation {
    KEVENT done;
    std::thread::id thread;
    KIRQL irql = HIGH_LEVEL;
    PVOID parameter = nullptr;
    bool list_cleared = false;
    PWORK_QUEUE_ITEM item = nullptr;
};

VOID observe(PVOID parameter) {
    auto *seen = static_cast<Observation *>(parameter);
    seen->thread = std::this_thread::get_id();
    seen->irql = KeGetCurrentIrql();
    seen->parameter = parameter;
    seen->list_cleared = seen->item->List.Flink == nullptr;
    KeSetEvent(&seen->done, IO_NO_INCREMENT, FALSE);
}

}  // namespace

TEST_CASE("ExQueueWorkItem: the routine runs on a worker thread at PASSIVE_LEVEL") {
    STATIC_REQUIRE(sizeof(WORK_QUEUE_ITEM) == 32);
    WORK_QUEUE_ITEM item;
    Observation seen;
    seen.item = &item;
    KeInitializeEvent(&seen.done, NotificationEvent, FALSE);
    ExInitializeWorkItem(&item, observe, &seen);
    CHECK(item.List.Flink == nullptr);
    CHECK(item.WorkerRoutine == observe);
    CHECK(item.Parameter == &seen);

    // Queueing is allowed at DISPATCH_LEVEL; the routine still runs at PASSIVE_LEVEL.
    const KIRQL old = KeRaiseIrqlToDpcLevel();
    ExQueueWorkItem(&item, DelayedWorkQueue);
    KeLowerIrql(old);
    REQUIRE(wait_ms(&seen.done) == STATUS_SUCCESS);
    CHECK(seen.thread != std::this_thread::get_id());
    CHECK(seen.irql == PASSIVE_LEVEL);
    CHECK(seen.parameter == &seen);
    CHECK(seen.list_cleared);  // off the queue before the routine runs

    // The same item may be queued again once its routine has started.
    KeClearEvent(&seen.done);
    ExQueueWorkItem(&item, CriticalWorkQueue);
    CHECK(wait_ms(&seen.done) == STATUS_SUCCESS);
}

namespace {

struct Requeue {
    WORK_QUEUE_ITEM item;
    std::atomic<int> runs{0};
    KEVENT done;
};

VOID requeue_three_times(PVOID parameter) {
    auto *state = static_cast<Requeue *>(parameter);
    if (++state->runs < 3) {
        ExQueueWorkItem(&state->item, DelayedWorkQueue);
    } else {
        KeSetEvent(&state->done, IO_NO_INCREMENT, FALSE);
    }
}

struct Freed {
    WORK_QUEUE_ITEM item;
    PRKEVENT done;
};

VOID free_own_item(PVOID parameter) {
    auto *self = static_cast<Freed *>(parameter);
    PRKEVENT done = self->done;
    ExFreePoolWithTag(self, kTag);
    KeSetEvent(done, IO_NO_INCREMENT, FALSE);
}

}  // namespace

TEST_CASE("ExQueueWorkItem: a routine may requeue its own item, or free it") {
    Requeue state;
    KeInitializeEvent(&state.done, NotificationEvent, FALSE);
    ExInitializeWorkItem(&state.item, requeue_three_times, &state);
    ExQueueWorkItem(&state.item, DelayedWorkQueue);
    REQUIRE(wait_ms(&state.done) == STATUS_SUCCESS);
    CHECK(state.runs == 3);

    const auto live = softndk::wdk::pool_live_allocations();
    KEVENT done;
    KeInitializeEvent(&done, NotificationEvent, FALSE);
    auto *freed = static_cast<Freed *>(ExAllocatePoolWithTag(NonPagedPoolNx, sizeof(Freed), kTag));
    REQUIRE(freed != nullptr);
    freed->done = &done;
    ExInitializeWorkItem(&freed->item, free_own_item, freed);
    ExQueueWorkItem(&freed->item, DelayedWorkQueue);
    REQUIRE(wait_ms(&done) == STATUS_SUCCESS);
    CHECK(softndk::wdk::pool_live_allocations() == live);
}

namespace {

// Work items that wait for one another: item i (i < kChained - 1) waits for gates[i], which
// item i + 1 opens. Only the last item can make progress on its own, so every item must be
// running at the same time - more than the pool's concurrency level.
constexpr int kChained = 8;

struct Chain {
    KEVENT gates[kChained];
    WORK_QUEUE_ITEM items[kChained];
    std::atomic<int> timed_out{0};
    std::atomic<int> finished{0};
    KEVENT all_done;
};

struct Link {
    Chain *chain;
    int index;
};

VOID chained(PVOID parameter) {
    const Link &link = *static_cast<Link *>(parameter);
    Chain &chain = *link.chain;
    if (link.index < kChained - 1 && wait_ms(&chain.gates[link.index]) != STATUS_SUCCESS) {
        ++chain.timed_out;
    }
    if (link.index > 0) KeSetEvent(&chain.gates[link.index - 1], IO_NO_INCREMENT, FALSE);
    if (++chain.finished == kChained) KeSetEvent(&chain.all_done, IO_NO_INCREMENT, FALSE);
}

}  // namespace

TEST_CASE("work items: a routine blocked in a wait lets another worker run") {
    // On the heap, and leaked if the chain stalls: its items may still run after a failure.
    auto *chain = new Chain;
    auto *links = new Link[kChained];
    KeInitializeEvent(&chain->all_done, NotificationEvent, FALSE);
    for (int i = 0; i < kChained; ++i) {
        KeInitializeEvent(&chain->gates[i], NotificationEvent, FALSE);
        links[i] = {chain, i};
        ExInitializeWorkItem(&chain->items[i], chained, &links[i]);
    }
    for (int i = 0; i < kChained; ++i) {
        ExQueueWorkItem(&chain->items[i], DelayedWorkQueue);
    }
    REQUIRE(wait_ms(&chain->all_done, 3 * softndk::test::kPatienceMs) == STATUS_SUCCESS);
    CHECK(chain->timed_out == 0);
    // all_done is set by the last routine to finish; it touches nothing after that.
    delete[] links;
    delete chain;
}

namespace {

struct IoObservation {
    KEVENT done;
    PDEVICE_OBJECT device = nullptr;
    PVOID context = nullptr;
    PVOID io_object = nullptr;
    PIO_WORKITEM work_item = nullptr;
    LONG references_while_running = -1;
    KIRQL irql = HIGH_LEVEL;
};

VOID observe_io(PDEVICE_OBJECT DeviceObject, PVOID Context) {
    auto *seen = static_cast<IoObservation *>(Context);
    seen->device = DeviceObject;
    seen->context = Context;
    seen->irql = KeGetCurrentIrql();
    if (DeviceObject != nullptr) seen->references_while_running = DeviceObject->ReferenceCount;
    KeSetEvent(&seen->done, IO_NO_INCREMENT, FALSE);
}

VOID observe_io_ex(PVOID IoObject, PVOID Context, PIO_WORKITEM IoWorkItem) {
    auto *seen = static_cast<IoObservation *>(Context);
    seen->io_object = IoObject;
    seen->context = Context;
    seen->work_item = IoWorkItem;
    KeSetEvent(&seen->done, IO_NO_INCREMENT, FALSE);
}

}  // namespace

TEST_CASE("IoQueueWorkItem: the routine gets the device and context, the device is referenced") {
    DEVICE_OBJECT device{};
    const auto live = softndk::wdk::pool_live_allocations();
    PIO_WORKITEM work_item = IoAllocateWorkItem(&device);
    REQUIRE(work_item != nullptr);
    CHECK(softndk::wdk::pool_live_allocations() == live + 1);  // from pool, as on Windows

    IoObservation seen;
    KeInitializeEvent(&seen.done, NotificationEvent, FALSE);
    IoQueueWorkItem(work_item, observe_io, NormalWorkQueue, &seen);
    REQUIRE(wait_ms(&seen.done) == STATUS_SUCCESS);
    CHECK(seen.device == &device);
    CHECK(seen.context == &seen);
    CHECK(seen.irql == PASSIVE_LEVEL);
    CHECK(seen.references_while_running == 1);
    // The reference goes once the routine has returned.
    CHECK(eventually([&] { return std::atomic_ref<LONG>(device.ReferenceCount).load() == 0; }));

    // Ex: the routine also receives the IO_WORKITEM; the device is the IoObject.
    KeClearEvent(&seen.done);
    IoQueueWorkItemEx(work_item, observe_io_ex, DelayedWorkQueue, &seen);
    REQUIRE(wait_ms(&seen.done) == STATUS_SUCCESS);
    CHECK(seen.io_object == &device);
    CHECK(seen.work_item == work_item);
    CHECK(eventually([&] { return std::atomic_ref<LONG>(device.ReferenceCount).load() == 0; }));

    IoFreeWorkItem(work_item);
    CHECK(softndk::wdk::pool_live_allocations() == live);
}

TEST_CASE("IoQueueWorkItem: a NULL device object is accepted and passed through") {
    PIO_WORKITEM work_item = IoAllocateWorkItem(nullptr);
    REQUIRE(work_item != nullptr);
    IoObservation seen;
    seen.device = reinterpret_cast<PDEVICE_OBJECT>(&seen);  // overwritten with NULL
    KeInitializeEvent(&seen.done, NotificationEvent, FALSE);
    IoQueueWorkItem(work_item, observe_io, DelayedWorkQueue, &seen);
    REQUIRE(wait_ms(&seen.done) == STATUS_SUCCESS);
    CHECK(seen.device == nullptr);
    IoFreeWorkItem(work_item);
}

namespace {

struct SelfFreeing {
    PIO_WORKITEM work_item;
    int runs = 0;
    KEVENT done;
};

// Requeues its IO_WORKITEM once, then frees it from inside the routine - the usual pattern
// for a one-shot work item allocated per request.
VOID requeue_then_free(PDEVICE_OBJECT DeviceObject, PVOID Context) {
    (void)DeviceObject;
    auto *state = static_cast<SelfFreeing *>(Context);
    if (++state->runs == 1) {
        IoQueueWorkItem(state->work_item, requeue_then_free, DelayedWorkQueue, state);
        return;
    }
    IoFreeWorkItem(state->work_item);
    KeSetEvent(&state->done, IO_NO_INCREMENT, FALSE);
}

}  // namespace

TEST_CASE("IoFreeWorkItem: callable from inside the routine, after requeueing from it") {
    DEVICE_OBJECT device{};
    const auto live = softndk::wdk::pool_live_allocations();
    SelfFreeing state;
    KeInitializeEvent(&state.done, NotificationEvent, FALSE);
    state.work_item = IoAllocateWorkItem(&device);
    REQUIRE(state.work_item != nullptr);
    IoQueueWorkItem(state.work_item, requeue_then_free, DelayedWorkQueue, &state);
    REQUIRE(wait_ms(&state.done) == STATUS_SUCCESS);
    CHECK(state.runs == 2);
    CHECK(softndk::wdk::pool_live_allocations() == live);
    CHECK(eventually([&] { return std::atomic_ref<LONG>(device.ReferenceCount).load() == 0; }));
}

namespace {

// Occupies a worker without a runtime wait (which would let the pool release another one).
struct Occupier {
    std::mutex *gate;
    std::atomic<int> *running;
};

VOID occupy(PVOID parameter) {
    auto *occupier = static_cast<Occupier *>(parameter);
    ++*occupier->running;
    std::lock_guard hold(*occupier->gate);
}

VOID never_runs(PDEVICE_OBJECT, PVOID) {}

// In a forked child: keeps every worker the pool will run busy, so that the next item stays
// queued.
void saturate_workers(std::mutex &gate, std::atomic<int> &running,
                      std::vector<WORK_QUEUE_ITEM> &items, std::vector<Occupier> &occupiers) {
    const int concurrency = static_cast<int>(std::max(2U, std::thread::hardware_concurrency()));
    gate.lock();
    items.resize(static_cast<size_t>(concurrency));
    occupiers.assign(static_cast<size_t>(concurrency), Occupier{&gate, &running});
    for (int i = 0; i < concurrency; ++i) {
        ExInitializeWorkItem(&items[static_cast<size_t>(i)], occupy,
                             &occupiers[static_cast<size_t>(i)]);
        ExQueueWorkItem(&items[static_cast<size_t>(i)], DelayedWorkQueue);
    }
    while (running.load() < concurrency)
        std::this_thread::yield();
}

}  // namespace

TEST_CASE("work items: queueing a queued item bug-checks WORKER_INVALID") {
    auto child = softndk::test::run_in_child([] {
        WORK_QUEUE_ITEM item;
        ExInitializeWorkItem(
            &item, [](PVOID) {}, nullptr);
        item.List.Flink = &item.List;  // what a queued item looks like
        ExQueueWorkItem(&item, DelayedWorkQueue);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("WORKER_INVALID"));

    child = softndk::test::run_in_child([] {
        std::mutex gate;
        std::atomic<int> running{0};
        std::vector<WORK_QUEUE_ITEM> items;
        std::vector<Occupier> occupiers;
        saturate_workers(gate, running, items, occupiers);
        PIO_WORKITEM work_item = IoAllocateWorkItem(nullptr);
        IoQueueWorkItem(work_item, never_runs, DelayedWorkQueue, nullptr);
        IoQueueWorkItem(work_item, never_runs, DelayedWorkQueue, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("WORKER_INVALID"));
}

TEST_CASE("work items: freeing a queued IO_WORKITEM or returning at raised IRQL aborts") {
    auto child = softndk::test::run_in_child([] {
        std::mutex gate;
        std::atomic<int> running{0};
        std::vector<WORK_QUEUE_ITEM> items;
        std::vector<Occupier> occupiers;
        saturate_workers(gate, running, items, occupiers);
        PIO_WORKITEM work_item = IoAllocateWorkItem(nullptr);
        IoQueueWorkItem(work_item, never_runs, DelayedWorkQueue, nullptr);
        IoFreeWorkItem(work_item);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("still queued"));

    child = softndk::test::run_in_child([] {
        WORK_QUEUE_ITEM item;
        ExInitializeWorkItem(
            &item, [](PVOID) { KeRaiseIrqlToDpcLevel(); }, nullptr);
        ExQueueWorkItem(&item, DelayedWorkQueue);
        KEVENT never;
        KeInitializeEvent(&never, NotificationEvent, FALSE);
        KeWaitForSingleObject(&never, Executive, KernelMode, FALSE, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("WORKER_THREAD_RETURNED_AT_BAD_IRQL"));

    child = softndk::test::run_in_child([] {
        const KIRQL old = KfRaiseIrql(HIGH_LEVEL);
        (void)old;
        WORK_QUEUE_ITEM item;
        ExInitializeWorkItem(
            &item, [](PVOID) {}, nullptr);
        ExQueueWorkItem(&item, DelayedWorkQueue);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
}
