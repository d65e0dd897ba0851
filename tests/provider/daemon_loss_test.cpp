// The daemon dies under its consumers (issue 16, item 4): a SIGKILL of `softndk rnic`
// must reach every consumer at once. Hidden ("[.daemon_loss]"): the test starts its own
// daemon (SOFTNDK_TEST_SOFTNDK names the binary) and kills it, so it cannot run under
// with-daemon.sh, which fails any test whose daemon died. CTest runs it on its own.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ndk_test.hpp"

using namespace ndktest;
using Clock = std::chrono::steady_clock;

namespace {

// `softndk rnic --socket DIR/rnic.sock` in a child process, killed (SIGKILL) by kill().
struct Daemon {
    std::string dir;
    std::string socket;
    pid_t pid = -1;

    Daemon() {
        const char *softndk = std::getenv("SOFTNDK_TEST_SOFTNDK");
        REQUIRE(softndk != nullptr);
        std::string pattern = std::filesystem::temp_directory_path() / "softndk-loss-XXXXXX";
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        dir = pattern;
        socket = dir + "/rnic.sock";
        pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            // Dies with the test: a daemon left by a failed REQUIRE would hold ctest's
            // stderr pipe, and ctest would wait for it.
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, STDOUT_FILENO);
            ::execl(softndk, softndk, "rnic", "--socket", socket.c_str(), "--log-level", "error",
                    static_cast<char *>(nullptr));
            ::_exit(127);
        }
        REQUIRE(wait_listening());
    }
    ~Daemon() {
        kill();
        std::filesystem::remove_all(dir);
    }
    bool wait_listening() const {
        const auto deadline = Clock::now() + std::chrono::seconds(10);
        while (Clock::now() < deadline) {
            sockaddr_un address{};
            address.sun_family = AF_UNIX;
            std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket.c_str());
            const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            const bool up =
                ::connect(s, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
            ::close(s);
            if (up) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    void kill() {
        if (pid <= 0) return;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }
};

struct Seen {
    std::atomic<int> disconnects{0};
    std::atomic<NTSTATUS> cq_status{STATUS_PENDING};
    static void disconnected(PVOID ctx) { static_cast<Seen *>(ctx)->disconnects.fetch_add(1); }
    static void notified(PVOID ctx, NTSTATUS s) { static_cast<Seen *>(ctx)->cq_status.store(s); }
};

template <class Predicate>
bool wait_for(Predicate done, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (!done()) {
        if (Clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace

TEST_CASE(
    "daemon killed: pending requests fail, CQs and disconnects notify, calls fail, all "
    "within 1 s",
    "[.daemon_loss]") {
    Daemon daemon;
    ::setenv("SOFTNDK_MODE", "daemon", 1);
    ::setenv("SOFTNDK_SOCKET", daemon.socket.c_str(), 1);

    Seen client_seen, server_seen;
    ConnectOptions options;
    options.client_disconnect = Seen::disconnected;
    options.client_disconnect_context = &client_seen;
    options.server_disconnect = Seen::disconnected;
    options.server_disconnect_context = &server_seen;
    Clock::time_point killed;
    {
        Pair p(options);
        // The event-driven consumer: receives posted, its CQ armed. The polling one: a
        // receive posted, polling.
        constexpr int kReceives = 8;
        for (int i = 0; i < kReceives; ++i) {
            NDK_SGE sge = p.server.sge(static_cast<size_t>(i) * 64, 64);
            REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, &p.server.buffer[i], &sge, 1) ==
                    STATUS_SUCCESS);
        }
        NDK_SGE client_sge = p.client.sge(0, 64);
        REQUIRE(p.client.qp->Dispatch->NdkReceive(p.client.qp, &p.client.buffer[0], &client_sge,
                                                  1) == STATUS_SUCCESS);
        p.server.on_notify_context.store(&server_seen);
        p.server.on_notify.store(Seen::notified);
        p.server.cq->Dispatch->NdkArmCq(p.server.cq, NDK_CQ_NOTIFY_ANY);

        daemon.kill();
        killed = Clock::now();

        // The polling consumer sees its receive fail.
        NDK_RESULT_EX polled{};
        REQUIRE(wait_for(
            [&] { return p.client.cq->Dispatch->NdkGetCqResultsEx(p.client.cq, &polled, 1) == 1; },
            std::chrono::milliseconds(1000)));
        CHECK(polled.Status == STATUS_CANCELLED);
        CHECK(polled.RequestContext == &p.client.buffer[0]);
        CHECK(polled.Type == NdkOperationTypeReceive);
        CHECK(polled.ProviderErrorCode == static_cast<ULONG>(STATUS_DEVICE_REMOVED));

        // The event-driven one is woken, and every receive it posted fails, in order.
        REQUIRE(wait_for([&] { return server_seen.cq_status.load() != STATUS_PENDING; },
                         std::chrono::milliseconds(1000)));
        CHECK(server_seen.cq_status.load() == STATUS_INTERNAL_ERROR);
        std::vector<NDK_RESULT_EX> results;
        REQUIRE(p.server.drain(results, kReceives) == kReceives);
        for (int i = 0; i < kReceives; ++i) {
            CHECK(results[i].Status == STATUS_CANCELLED);
            CHECK(results[i].RequestContext == &p.server.buffer[i]);
        }
        NDK_RESULT_EX none{};
        CHECK(p.server.cq->Dispatch->NdkGetCqResultsEx(p.server.cq, &none, 1) == 0);

        // Both connections' disconnect callbacks ran.
        REQUIRE(wait_for(
            [&] {
                return client_seen.disconnects.load() == 1 && server_seen.disconnects.load() == 1;
            },
            std::chrono::milliseconds(1000)));

        // Later calls fail: posts, commands, a disconnect.
        NDK_SGE sge = p.client.sge(0, 8);
        CHECK(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &sge, 1, 0) ==
              STATUS_DEVICE_REMOVED);
        CHECK(p.client.qp->Dispatch->NdkReceive(p.client.qp, nullptr, &sge, 1) ==
              STATUS_DEVICE_REMOVED);
        NDK_PD *pd = nullptr;
        CHECK(p.client.adapter->Dispatch->NdkCreatePd(p.client.adapter, Done::create, nullptr,
                                                      &pd) == STATUS_DEVICE_REMOVED);
        Done done;
        CHECK(p.client.connector->Dispatch->NdkDisconnect(p.client.connector, Done::request,
                                                          &done) == STATUS_DEVICE_REMOVED);
        // A later arm is notified at once: nothing else will ever satisfy it.
        server_seen.cq_status.store(STATUS_PENDING);
        p.server.cq->Dispatch->NdkArmCq(p.server.cq, NDK_CQ_NOTIFY_SOLICITED);
        REQUIRE(wait_for([&] { return server_seen.cq_status.load() != STATUS_PENDING; },
                         std::chrono::milliseconds(1000)));
        CHECK(server_seen.cq_status.load() == STATUS_INTERNAL_ERROR);
    }  // every object closes, every adapter closes: the consumer could exit now
    const auto to_exit = Clock::now() - killed;
    const double ms = std::chrono::duration<double, std::milli>(to_exit).count();
    std::printf("daemon SIGKILL -> errors, notifications, disconnects and every close: %.1f ms\n",
                ms);
    CHECK(to_exit < std::chrono::seconds(1));
    ::unsetenv("SOFTNDK_MODE");
    ::unsetenv("SOFTNDK_SOCKET");
}

// Connection-manager commands go through the context's command slot in shared memory,
// not the socket (hw_interface.hpp §8): a command waiting there must notice the daemon's
// death as one waiting on the socket does.
TEST_CASE("daemon killed while a command waits in the command slot: the command fails within 1 s",
          "[.daemon_loss]") {
    Daemon daemon;
    ::setenv("SOFTNDK_MODE", "daemon", 1);
    ::setenv("SOFTNDK_SOCKET", daemon.socket.c_str(), 1);
    {
        Pair p;
        REQUIRE(::kill(daemon.pid, SIGSTOP) == 0);  // it answers nothing from now on
        Done done;
        std::atomic<NTSTATUS> returned{STATUS_PENDING};
        std::atomic<bool> returned_yet{false};
        std::thread caller([&] {
            returned = p.client.connector->Dispatch->NdkDisconnect(p.client.connector,
                                                                   Done::request, &done);
            returned_yet = true;
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        CHECK_FALSE(returned_yet.load());  // waiting for the stopped daemon's answer
        const auto killed = Clock::now();
        daemon.kill();
        caller.join();
        const auto waited = Clock::now() - killed;
        INFO("NdkDisconnect returned " << std::hex << returned.load());
        CHECK(waited < std::chrono::seconds(1));
        if (returned.load() == STATUS_PENDING) {
            // The removal completed the request before the command returned.
            REQUIRE(done.wait());
            CHECK_FALSE(NT_SUCCESS(done.status));
        } else {
            CHECK(returned.load() == STATUS_DEVICE_REMOVED);
        }
    }
    ::unsetenv("SOFTNDK_MODE");
    ::unsetenv("SOFTNDK_SOCKET");
}
