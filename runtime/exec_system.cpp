// Processors, NUMA nodes and group affinity; DPC extras; ticks; floating point state; probing;
// DbgBreakPoint; stack back traces. Contracts are in softndk_wdm_exec.h.
#include <execinfo.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kTimeIncrement = 156'250;  // 15.625 ms in 100 ns units
constexpr ULONG kProcessorsPerGroup = 64;

// Parses a /sys list of numbers ("0-3,8,10-11").
std::vector<ULONG> parse_cpu_list(const std::string &text) {
    std::vector<ULONG> cpus;
    std::stringstream items(text);
    std::string item;
    while (std::getline(items, item, ',')) {
        unsigned long first = 0;
        unsigned long last = 0;
        const int fields = std::sscanf(item.c_str(), "%lu-%lu", &first, &last);
        if (fields < 1) continue;
        if (fields == 1) last = first;
        for (unsigned long cpu = first; cpu <= last; ++cpu) {
            cpus.push_back(static_cast<ULONG>(cpu));
        }
    }
    return cpus;
}

std::string read_line(const std::string &path) {
    std::ifstream file(path);
    std::string line;
    std::getline(file, line);
    return line;
}

// The host's processors and NUMA nodes, read once.
struct Topology {
    ULONG processors = 1;
    std::vector<std::vector<ULONG>> nodes;  // node number -> processor indexes (may be empty)

    Topology() {
        const long online = sysconf(_SC_NPROCESSORS_ONLN);
        processors = online > 0 ? static_cast<ULONG>(online) : 1;
        // "0" or "0-1,3": the online nodes; each one's processors are in nodeN/cpulist.
        for (ULONG node : parse_cpu_list(read_line("/sys/devices/system/node/online"))) {
            if (node >= 1024) break;
            if (nodes.size() <= node) nodes.resize(node + 1);
            std::vector<ULONG> cpus = parse_cpu_list(
                read_line(fmt::format("/sys/devices/system/node/node{}/cpulist", node)));
            std::erase_if(cpus, [&](ULONG cpu) { return cpu >= processors; });
            nodes[node] = std::move(cpus);
        }
        if (nodes.empty()) {
            nodes.emplace_back();
            for (ULONG cpu = 0; cpu < processors; ++cpu)
                nodes[0].push_back(cpu);
        }
    }
};

const Topology &topology() {
    static const Topology *const instance = new Topology;
    return *instance;
}

ULONG current_index() {
    const int cpu = sched_getcpu();
    if (cpu < 0) return 0;
    return std::min(static_cast<ULONG>(cpu), topology().processors - 1);
}

PROCESSOR_NUMBER number_of(ULONG index) {
    PROCESSOR_NUMBER number{};
    number.Group = static_cast<USHORT>(index / kProcessorsPerGroup);
    number.Number = static_cast<UCHAR>(index % kProcessorsPerGroup);
    return number;
}

bool exists(const PROCESSOR_NUMBER &number) {
    return number.Number < kProcessorsPerGroup &&
           ULONG{number.Group} * kProcessorsPerGroup + number.Number < topology().processors;
}

GROUP_AFFINITY affinity_of_this_thread() {
    GROUP_AFFINITY affinity{};
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return affinity;
    for (ULONG cpu = 0; cpu < kProcessorsPerGroup && cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) affinity.Mask |= KAFFINITY{1} << cpu;
    }
    return affinity;
}

void set_affinity_of_this_thread(const GROUP_AFFINITY &affinity, const char *caller) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (ULONG bit = 0; bit < kProcessorsPerGroup; ++bit) {
        const ULONG index = ULONG{affinity.Group} * kProcessorsPerGroup + bit;
        if ((affinity.Mask & (KAFFINITY{1} << bit)) != 0 && index < topology().processors &&
            index < CPU_SETSIZE) {
            CPU_SET(index, &set);
        }
    }
    if (CPU_COUNT(&set) == 0 || sched_setaffinity(0, sizeof(set), &set) != 0) {
        fatal(fmt::format("{}: group {} mask 0x{:x} names no processor this thread may run on",
                          caller, affinity.Group, affinity.Mask));
    }
}

bool debugger_attached() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("TracerPid:", 0) == 0) {
            return std::stol(line.substr(10)) != 0;
        }
    }
    return false;
}

[[noreturn]] void raise_status(NTSTATUS status, const volatile void *address,
                               std::string_view why) {
    bugcheck(KMODE_EXCEPTION_NOT_HANDLED, static_cast<ULONG_PTR>(static_cast<ULONG>(status)),
             reinterpret_cast<ULONG_PTR>(address), 0, 0, why);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

// ---- Processors and nodes.

ULONG NTAPI KeGetCurrentProcessorIndex(VOID) {
    return wdk::current_index();
}

ULONG NTAPI KeGetCurrentProcessorNumber(VOID) {
    return wdk::current_index();
}

ULONG NTAPI KeGetCurrentProcessorNumberEx(PPROCESSOR_NUMBER ProcNumber) {
    const ULONG index = wdk::current_index();
    if (ProcNumber != nullptr) *ProcNumber = wdk::number_of(index);
    return index;
}

ULONG NTAPI KeQueryActiveProcessorCountEx(USHORT GroupNumber) {
    const ULONG total = wdk::topology().processors;
    if (GroupNumber == ALL_PROCESSOR_GROUPS) return total;
    const ULONG first = ULONG{GroupNumber} * wdk::kProcessorsPerGroup;
    if (first >= total) return 0;
    return std::min(total - first, wdk::kProcessorsPerGroup);
}

USHORT NTAPI KeQueryActiveGroupCount(VOID) {
    return static_cast<USHORT>((wdk::topology().processors + wdk::kProcessorsPerGroup - 1) /
                               wdk::kProcessorsPerGroup);
}

NTSTATUS NTAPI KeGetProcessorNumberFromIndex(ULONG ProcIndex, PPROCESSOR_NUMBER ProcNumber) {
    if (ProcIndex >= wdk::topology().processors) return STATUS_INVALID_PARAMETER;
    *ProcNumber = wdk::number_of(ProcIndex);
    return STATUS_SUCCESS;
}

ULONG NTAPI KeGetProcessorIndexFromNumber(PPROCESSOR_NUMBER ProcNumber) {
    if (ProcNumber == nullptr || !wdk::exists(*ProcNumber)) return INVALID_PROCESSOR_INDEX;
    return ULONG{ProcNumber->Group} * wdk::kProcessorsPerGroup + ProcNumber->Number;
}

USHORT NTAPI KeGetCurrentNodeNumber(VOID) {
    const ULONG index = wdk::current_index();
    const auto &nodes = wdk::topology().nodes;
    for (size_t node = 0; node < nodes.size(); ++node) {
        if (std::find(nodes[node].begin(), nodes[node].end(), index) != nodes[node].end()) {
            return static_cast<USHORT>(node);
        }
    }
    return 0;
}

USHORT NTAPI KeQueryHighestNodeNumber(VOID) {
    return static_cast<USHORT>(wdk::topology().nodes.size() - 1);
}

VOID NTAPI KeQueryNodeActiveAffinity(USHORT NodeNumber, PGROUP_AFFINITY Affinity, PUSHORT Count) {
    GROUP_AFFINITY result{};
    USHORT count = 0;
    const auto &nodes = wdk::topology().nodes;
    if (NodeNumber < nodes.size() && !nodes[NodeNumber].empty()) {
        const std::vector<ULONG> &cpus = nodes[NodeNumber];
        result.Group = static_cast<USHORT>(cpus.front() / wdk::kProcessorsPerGroup);
        for (ULONG cpu : cpus) {
            if (cpu / wdk::kProcessorsPerGroup != result.Group) continue;
            result.Mask |= KAFFINITY{1} << (cpu % wdk::kProcessorsPerGroup);
            ++count;
        }
    }
    if (Affinity != nullptr) *Affinity = result;
    if (Count != nullptr) *Count = count;
}

VOID NTAPI KeSetSystemGroupAffinityThread(PGROUP_AFFINITY Affinity,
                                          PGROUP_AFFINITY PreviousAffinity) {
    const GROUP_AFFINITY previous = wdk::affinity_of_this_thread();
    wdk::set_affinity_of_this_thread(*Affinity, "KeSetSystemGroupAffinityThread");
    if (PreviousAffinity != nullptr) *PreviousAffinity = previous;
}

VOID NTAPI KeRevertToUserGroupAffinityThread(PGROUP_AFFINITY PreviousAffinity) {
    wdk::set_affinity_of_this_thread(*PreviousAffinity, "KeRevertToUserGroupAffinityThread");
}

ULONG NTAPI KeGetRecommendedSharedDataAlignment(VOID) {
    const long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    return line > 0 ? static_cast<ULONG>(line) : 64;
}

// ---- DPC extras.

VOID NTAPI KeInitializeThreadedDpc(PRKDPC Dpc, PKDEFERRED_ROUTINE DeferredRoutine,
                                   PVOID DeferredContext) {
    KeInitializeDpc(Dpc, DeferredRoutine, DeferredContext);
    Dpc->Type = 24;  // ThreadedDpcObject
}

VOID NTAPI KeSetImportanceDpc(PRKDPC Dpc, KDPC_IMPORTANCE Importance) {
    Dpc->Importance = static_cast<UCHAR>(Importance);
}

VOID NTAPI KeSetTargetProcessorDpc(PRKDPC Dpc, CCHAR Number) {
    Dpc->Number = static_cast<USHORT>(static_cast<UCHAR>(Number) + MAXIMUM_PROCESSORS);
}

NTSTATUS NTAPI KeSetTargetProcessorDpcEx(PKDPC Dpc, PPROCESSOR_NUMBER ProcNumber) {
    if (ProcNumber == nullptr || !wdk::exists(*ProcNumber)) return STATUS_INVALID_PARAMETER;
    const ULONG index = KeGetProcessorIndexFromNumber(ProcNumber);
    Dpc->Number = static_cast<USHORT>(index + MAXIMUM_PROCESSORS);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI KeQueryDpcWatchdogInformation(PKDPC_WATCHDOG_INFORMATION WatchdogInformation) {
    *WatchdogInformation = KDPC_WATCHDOG_INFORMATION{};
    return STATUS_SUCCESS;
}

// ---- Ticks and timers.

BOOLEAN NTAPI KeSetCoalescableTimer(PKTIMER Timer, LARGE_INTEGER DueTime, ULONG Period,
                                    ULONG TolerableDelay, PKDPC Dpc) {
    (void)TolerableDelay;
    return KeSetTimerEx(Timer, DueTime, static_cast<LONG>(Period), Dpc);
}

ULONG NTAPI KeQueryTimeIncrement(VOID) {
    return wdk::kTimeIncrement;
}

VOID NTAPI KeQueryTickCount(PLARGE_INTEGER CurrentCount) {
    CurrentCount->QuadPart = static_cast<LONGLONG>(KeQueryInterruptTime() / wdk::kTimeIncrement);
}

ULONG64 NTAPI KeQueryUnbiasedInterruptTimePrecise(PULONG64 QpcTimeStamp) {
    const ULONG64 unbiased = KeQueryUnbiasedInterruptTime();
    *QpcTimeStamp = static_cast<ULONG64>(KeQueryPerformanceCounter(nullptr).QuadPart);
    return unbiased;
}

// ---- Floating point state.

NTSTATUS NTAPI KeSaveFloatingPointState(PKFLOATING_SAVE FloatSave) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > DISPATCH_LEVEL) {
        wdk::bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(FloatSave), irql, 0, 0,
                      "KeSaveFloatingPointState above DISPATCH_LEVEL");
    }
#if defined(__x86_64__) || defined(__i386__)
    // MXCSR's defined bits are 0-15; the x87 control word is 16 bits: both fit in Dummy.
    unsigned short control = 0;
    asm volatile("fnstcw %0" : "=m"(control));
    FloatSave->Dummy = (__builtin_ia32_stmxcsr() & 0xFFFFu) | (ULONG{control} << 16);
#else
    FloatSave->Dummy = 0;
#endif
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI KeRestoreFloatingPointState(PKFLOATING_SAVE FloatSave) {
#if defined(__x86_64__) || defined(__i386__)
    const auto control = static_cast<unsigned short>(FloatSave->Dummy >> 16);
    asm volatile("fldcw %0" : : "m"(control));
    __builtin_ia32_ldmxcsr(FloatSave->Dummy & 0xFFFFu);
#else
    (void)FloatSave;
#endif
    return STATUS_SUCCESS;
}

// ---- Probing.

VOID NTAPI ProbeForRead(const volatile VOID *Address, SIZE_T Length, ULONG Alignment) {
    if (Length == 0) return;
    if (Alignment != 1 && Alignment != 2 && Alignment != 4 && Alignment != 8 && Alignment != 16) {
        wdk::fatal(fmt::format("ProbeForRead: Alignment {} is not 1, 2, 4, 8 or 16", Alignment));
    }
    const auto start = reinterpret_cast<ULONG_PTR>(Address);
    if ((start & (Alignment - 1)) != 0) {
        wdk::raise_status(STATUS_DATATYPE_MISALIGNMENT, Address,
                          fmt::format("ProbeForRead: address 0x{:x} is not {}-byte aligned; "
                                      "STATUS_DATATYPE_MISALIGNMENT raised",
                                      start, Alignment));
    }
    const ULONG_PTR end = start + Length;
    if (end < start || end > MM_USER_PROBE_ADDRESS) {
        wdk::raise_status(STATUS_ACCESS_VIOLATION, Address,
                          fmt::format("ProbeForRead: 0x{:x} + {} bytes leaves the user address "
                                      "space; STATUS_ACCESS_VIOLATION raised",
                                      start, Length));
    }
}

// ---- Debugger.

VOID NTAPI DbgBreakPoint(VOID) {
    if (wdk::debugger_attached()) {
        raise(SIGTRAP);
        return;
    }
    wdk::logger().warn("DbgBreakPoint without a debugger: ignored");
}

USHORT NTAPI RtlCaptureStackBackTrace(ULONG FramesToSkip, ULONG FramesToCapture, PVOID *BackTrace,
                                      PULONG BackTraceHash) {
    constexpr int kMostFrames = 256;
    void *frames[kMostFrames];
    const int captured = backtrace(frames, kMostFrames);
    // Frame 0 of the answer is the caller: the return address into it. Find it in the
    // list rather than assume it is frames[1], because a sanitizer's backtrace()
    // interceptor adds frames of its own in front.
    const void *caller = __builtin_return_address(0);
    ULONG own = 1;
    for (int i = 0; i < captured; ++i) {
        if (frames[i] == caller) {
            own = static_cast<ULONG>(i);
            break;
        }
    }
    const ULONG first = own + FramesToSkip;
    ULONG stored = 0;
    ULONG hash = 0;
    for (ULONG i = first; i < static_cast<ULONG>(captured) && stored < FramesToCapture; ++i) {
        BackTrace[stored++] = frames[i];
        hash += static_cast<ULONG>(reinterpret_cast<ULONG_PTR>(frames[i]));
    }
    if (BackTraceHash != nullptr) *BackTraceHash = hash;
    return static_cast<USHORT>(stored);
}

}  // extern "C"
