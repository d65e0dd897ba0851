// DoorbellThread: the daemon's device thread, spin-then-sleep on futex_waitv.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "daemon/doorbell_thread.hpp"
#include "daemon/memfd.hpp"
#include "softndk/hw_interface.hpp"

using namespace softndk;
using namespace softndk::emu::daemon;

namespace {

// Polls `done` for up to 10 s: long enough for any machine, and far beyond the
// thread's 1 s sleep timeout, so a wake-up that only the timeout delivers still
// shows up as a wrong count, not as a slow pass.
template <typename Predicate>
bool eventually(Predicate done) {
    for (int i = 0; i < 10'000; ++i) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done();
}

// A context entry whose control page nobody rings: the thread only sleeps on it.
std::shared_ptr<const DoorbellThread::Entry> idle_context(uint32_t id, uint32_t process_id = 0) {
    std::string error;
    UniqueFd fd = create_sealed_memfd("doorbell-test", hw::kControlPageBytes, 0, error);
    REQUIRE(fd);
    auto mapping = Mapping::map(fd.get(), 0, hw::kControlPageBytes, error);
    REQUIRE(mapping);
    auto entry = std::make_shared<DoorbellThread::Entry>();
    entry->context = id;
    entry->process_id = process_id;
    entry->control = std::move(mapping);
    return entry;
}

}  // namespace

TEST_CASE("A context attached while the device thread sleeps ends that sleep at once",
          "[daemon][doorbell]") {
    DoorbellThread thread(std::chrono::nanoseconds(0));  // no spinning: sleep at once
    REQUIRE(eventually([&] { return thread.sleeps() >= 1; }));
    const uint64_t sleeps = thread.sleeps();

    auto entry = idle_context(7);
    thread.add(entry);
    // add() pokes the control word; the thread must wake from that (not from its
    // timeout), take the new context in and go back to sleep on it too.
    REQUIRE(eventually([&] { return thread.pokes() >= 1 && thread.sleeps() > sleeps; }));
    CHECK(thread.pokes() == 1);
    CHECK(thread.contexts() == 1);
    // It now sleeps with the context's wake word announced.
    REQUIRE(eventually(
        [&] { return std::atomic_ref(entry->page()->wake.device_sleeping.value).load() == 1; }));

    thread.remove(entry.get());
    REQUIRE(eventually([&] { return thread.pokes() >= 2; }));
    CHECK(thread.contexts() == 0);
}

TEST_CASE(
    "With kSpareCore the device thread spins only while the CPUs outnumber the consumer "
    "processes",
    "[daemon][doorbell]") {
    using namespace std::chrono_literals;
    // Two CPUs, whatever the machine has: the policy is weighed against this count.
    DoorbellThread thread(25us, DoorbellThread::SpinPolicy::kSpareCore, 2);
    REQUIRE(eventually([&] { return thread.spin_budget() == 25us; }));  // nobody attached

    // Edge first: contexts of one process count once, whatever their number.
    auto a1 = idle_context(1, 100);
    auto a2 = idle_context(2, 100);
    thread.add(a1);
    thread.add(a2);
    // The thread has taken both in once it sleeps on their wake words.
    REQUIRE(eventually(
        [&] { return std::atomic_ref(a2->page()->wake.device_sleeping.value).load() == 1; }));
    CHECK(thread.spin_budget() == 25us);

    // A second process fills the second CPU: no spinning beside two consumers.
    auto b = idle_context(3, 200);
    thread.add(b);
    REQUIRE(eventually([&] { return thread.spin_budget() == 0ns; }));

    // A context of unknown process (pid 0) is a process of its own.
    thread.remove(b.get());
    REQUIRE(eventually([&] { return thread.spin_budget() == 25us; }));
    auto unknown = idle_context(4, 0);
    thread.add(unknown);
    REQUIRE(eventually([&] { return thread.spin_budget() == 0ns; }));

    thread.remove(unknown.get());
    REQUIRE(eventually([&] { return thread.spin_budget() == 25us; }));
}

TEST_CASE("With kAlways the device thread keeps its spin budget however many consumers attach",
          "[daemon][doorbell]") {
    using namespace std::chrono_literals;
    DoorbellThread thread(25us, DoorbellThread::SpinPolicy::kAlways, 1);
    auto a = idle_context(1, 100);
    auto b = idle_context(2, 200);
    thread.add(a);
    thread.add(b);
    // The thread has taken both in once it sleeps on their wake words.
    REQUIRE(eventually(
        [&] { return std::atomic_ref(b->page()->wake.device_sleeping.value).load() == 1; }));
    CHECK(thread.spin_budget() == 25us);
}
