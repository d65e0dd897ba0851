// Tests for include/softndk/sim.hpp and common/sim.cpp: the scheduler of simulated time.
// CTest runs every case in its own process with SOFTNDK_TIME=simulated (the scheduler is
// process-wide); the cases tagged [.child] are not run directly but started by others,
// as separate processes, to look at what a whole run prints or how it ends.
#include "softndk/sim.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

using namespace softndk;

// Runs this test program's case `name` with `seed`; returns its exit status and output.
std::pair<int, std::string> run_child(const char *name, const char *seed) {
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(pipe_fds[1], STDOUT_FILENO);
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        setenv("SOFTNDK_TIME", "simulated", 1);
        setenv("SOFTNDK_SEED", seed, 1);
        execl("/proc/self/exe", "sim_tests", name, nullptr);
        _exit(127);
    }
    close(pipe_fds[1]);
    std::string output;
    char buffer[4096];
    for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
        output.append(buffer, static_cast<size_t>(n));
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

}  // namespace

TEST_CASE("sim: the environment turns simulation on and the clocks read simulated time") {
    REQUIRE(sim::enabled());
    sim::attach_current("main");
    REQUIRE(sim::attached());
    const uint64_t start = sim::now_ns();
    CHECK(sim::clock_ns() == start);
    CHECK(std::chrono::duration_cast<std::chrono::nanoseconds>(sim::steady_now().time_since_epoch())
              .count() == static_cast<int64_t>(start));
    sim::sleep_until(start + 1500, "test");
    CHECK(sim::now_ns() == start + 1500);  // nobody else runs: time jumps to the deadline
}

TEST_CASE("sim: time moves only when every thread is blocked, to the earliest deadline") {
    sim::attach_current("main");
    const uint64_t t0 = sim::now_ns();
    std::mutex m;
    std::vector<std::pair<std::string, uint64_t>> woke;
    auto sleeper = [&](const char *name, uint64_t delay) {
        return sim::Thread(name, [&, name, delay] {
            sim::sleep_until(t0 + delay, name);
            std::lock_guard lock(m);
            woke.emplace_back(name, sim::now_ns() - t0);
        });
    };
    sim::Thread late = sleeper("late", 300);
    sim::Thread early = sleeper("early", 100);
    // A thread that runs without blocking does not let time pass.
    for (int i = 0; i < 10; ++i)
        sim::yield("test");
    CHECK(sim::now_ns() == t0);
    late.join();
    early.join();
    REQUIRE(woke.size() == 2);
    CHECK(woke[0] == std::make_pair(std::string("early"), uint64_t{100}));
    CHECK(woke[1] == std::make_pair(std::string("late"), uint64_t{300}));
    CHECK(sim::now_ns() == t0 + 300);
}

TEST_CASE("sim: a notified wait returns at the notifier's time and a timed one at its deadline") {
    sim::attach_current("main");
    std::mutex m;
    sim::ConditionVariable cv("test cv");
    bool ready = false;
    uint64_t seen_at = 0;
    const uint64_t t0 = sim::now_ns();
    sim::Thread waiter("waiter", [&] {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return ready; });
        seen_at = sim::now_ns();
    });
    sim::sleep_until(t0 + 700, "test");  // the waiter blocks meanwhile; time moves to 700
    {
        std::lock_guard lock(m);
        ready = true;
    }
    cv.notify_one();
    waiter.join();
    CHECK(seen_at == t0 + 700);

    std::unique_lock lock(m);
    const auto status = cv.wait_for(lock, std::chrono::microseconds(5));
    CHECK(status == std::cv_status::timeout);
    CHECK(sim::now_ns() == t0 + 700 + 5000);
}

// Three threads append their names in turn at transfer points; prints the order.
TEST_CASE("sim child: interleaving", "[.child]") {
    sim::attach_current("main");
    std::mutex m;
    std::string order;
    std::vector<sim::Thread> threads;
    for (const char *name : {"a", "b", "c"}) {
        threads.emplace_back(name, [&, name] {
            for (int i = 0; i < 4; ++i) {
                {
                    std::lock_guard lock(m);
                    order += name;
                }
                sim::yield("test");
            }
        });
    }
    for (auto &t : threads)
        t.join();
    std::printf("order=%s\n", order.c_str());
}

TEST_CASE("sim: a seed fixes the interleaving and other seeds change it") {
    const auto first = run_child("sim child: interleaving", "5");
    const auto again = run_child("sim child: interleaving", "5");
    REQUIRE(first.first == 0);
    const auto order = first.second.substr(first.second.find("order="), 18);
    CHECK(order.size() == 18);
    CHECK(again.second.find(order) != std::string::npos);
    bool differs = false;
    for (const char *seed : {"1", "2", "3", "4", "6", "7"}) {
        if (run_child("sim child: interleaving", seed).second.find(order) == std::string::npos)
            differs = true;
    }
    CHECK(differs);
}

// Two threads wait for each other's event: a deadlock.
TEST_CASE("sim child: deadlock", "[.child]") {
    sim::attach_current("main");
    std::mutex m;
    sim::ConditionVariable first("the first event"), second("the second event");
    bool first_set = false, second_set = false;
    sim::Thread a("a", [&] {
        std::unique_lock lock(m);
        first.wait(lock, [&] { return first_set; });
        second_set = true;
        second.notify_all();
    });
    sim::Thread b("b", [&] {
        std::unique_lock lock(m);
        second.wait(lock, [&] { return second_set; });
        first_set = true;
        first.notify_all();
    });
    a.join();
    b.join();
    std::printf("not deadlocked\n");
}

TEST_CASE("sim: a deadlock ends the run with its exit code and names every thread's wait") {
    const auto [status, output] = run_child("sim child: deadlock", "1");
    CHECK(status == sim::kDeadlockExitCode);
    CHECK(output.find("deadlock") != std::string::npos);
    CHECK(output.find("#1 main") != std::string::npos);
    CHECK(output.find("blocked in join") != std::string::npos);
    CHECK(output.find("#2 a") != std::string::npos);
    CHECK(output.find("blocked in the first event") != std::string::npos);
    CHECK(output.find("blocked in the second event") != std::string::npos);
    CHECK(output.find("not deadlocked") == std::string::npos);
}

TEST_CASE("sim: a thread that is never started does not hold up the run") {
    sim::attach_current("main");
    sim::abandon(sim::prepare_thread("never started"));
    const uint64_t t0 = sim::now_ns();
    sim::sleep_until(t0 + 10, "test");
    CHECK(sim::now_ns() == t0 + 10);
}
