// HostClock (provider/model_time.hpp): the consumer's clock in model time, and the rule
// by which a CQ poll that finds nothing due moves it. No device: the clock alone, fed
// the completion times a CQ's ring would hold.
#include <catch2/catch.hpp>

#include <vector>

#include "model_time.hpp"

using softndk::provider::HostClock;
namespace hw = softndk::hw;

namespace {

// Two CQs, as far as the clock is concerned: only their addresses are compared.
int cq_a = 0;
int cq_b = 0;

// Polls for a CQE dated `t` until one poll takes it; `between` runs after every poll
// that found nothing due (what the consumer does between its polls). Returns the polls
// made.
template <class Between>
int poll_until_taken(HostClock &clock, uint64_t t, uint32_t &empty, const void *cq,
                     Between between) {
    for (int polls = 1; polls < 100; ++polls) {
        if (clock.poll(t, true, empty, cq)) {
            clock.consume(t);
            return polls;
        }
        between();
    }
    FAIL("the CQE was never taken");
    return 0;
}

}  // namespace

TEST_CASE("HostClock: a due CQE is taken at once and the clock does not move back",
          "[provider][time]") {
    HostClock clock;
    uint32_t empty = 0;
    clock.observe(5'000);
    CHECK(clock.poll(4'000, true, empty, &cq_a));
    clock.consume(4'000);
    CHECK(clock.now() == 5'000 + HostClock::kCqeNs);
    CHECK(empty == 0);
}

TEST_CASE("HostClock: polls with a post between them step the clock by kPollNs doubling",
          "[provider][time]") {
    // A bandwidth loop: post, poll, post, poll. Each empty poll moves the clock by its
    // step, and the posts between them are dated by those steps.
    HostClock clock;
    uint32_t empty = 0;
    const uint64_t t = 1'000'000;
    std::vector<uint64_t> stamps;
    const int polls =
        poll_until_taken(clock, t, empty, &cq_a, [&] { stamps.push_back(clock.now()); });
    REQUIRE(stamps.size() >= 4);
    CHECK(stamps[0] == 100);
    CHECK(stamps[1] == 300);
    CHECK(stamps[2] == 700);
    CHECK(stamps[3] == 1'500);
    // 100 << n passes 1 ms at n = 14 (cumulative 100 * (2^n - 1)): the 14th empty poll's
    // step reaches t, and that poll takes it.
    CHECK(polls == 14);
    CHECK(clock.now() == t + HostClock::kCqeNs);
}

TEST_CASE("HostClock: after kPollsBeforeWait empty polls in a row the consumer has waited",
          "[provider][time]") {
    HostClock clock;
    uint32_t empty = 0;
    const uint64_t t = uint64_t{1} << 60;  // beyond every step
    const int polls = poll_until_taken(clock, t, empty, &cq_a, [&] { (void)clock.now(); });
    CHECK(polls == static_cast<int>(HostClock::kPollsBeforeWait) + 1);
    CHECK(clock.now() == t + HostClock::kCqeNs);
    CHECK(empty == 0);
}

TEST_CASE(
    "HostClock: a consumer spinning on one CQ takes the CQE on its second poll, at "
    "its completion time",
    "[provider][time]") {
    HostClock clock;
    uint32_t empty = 0;
    const uint64_t t = 1'000'000;
    const int polls = poll_until_taken(clock, t, empty, &cq_a, [] {});
    CHECK(polls == 2);
    // The same time as the steps would have reached: nothing saw the steps between.
    CHECK(clock.now() == t + HostClock::kCqeNs);
    CHECK(empty == 0);
}

TEST_CASE("HostClock: anything done with the clock between two polls ends a spin",
          "[provider][time]") {
    HostClock clock;
    uint32_t empty = 0;
    const uint64_t t = 1'000'000;
    SECTION("a poll of another CQ, even one that finds nothing") {
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
        clock.polling(&cq_b);
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
        CHECK(clock.now() == 300);  // two steps
    }
    SECTION("a poll of the same CQ does not") {
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
        clock.polling(&cq_a);
        CHECK(clock.poll(t, true, empty, &cq_a));
    }
    SECTION("a read of the clock (a post's stamp, the model-time extension)") {
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
        CHECK(clock.now() == 100);
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
    }
    SECTION("an event the consumer saw") {
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
        clock.observe(150);
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
    }
    SECTION("a CQE the consumer took") {
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
        clock.consume(150);
        CHECK_FALSE(clock.poll(t, true, empty, &cq_a));
    }
}

TEST_CASE("HostClock: a later CQE of the same poll waits for a later poll", "[provider][time]") {
    HostClock clock;
    uint32_t empty = 0;
    CHECK(clock.poll(0, true, empty, &cq_a));
    clock.consume(0);
    CHECK_FALSE(clock.poll(1'000'000, false, empty, &cq_a));
    CHECK(clock.now() == HostClock::kCqeNs);  // not moved by it
}

TEST_CASE(
    "HostClock: paced mode lets every poll through and leaves the steps to the wall "
    "clock",
    "[provider][time]") {
    HostClock clock(hw::TimeMode::kPaced);
    uint32_t empty = 0;
    CHECK(clock.poll(uint64_t{1} << 60, true, empty, &cq_a));
    CHECK(empty == 0);
}

TEST_CASE(
    "HostClock::of_interface: one clock per interface while a handle holds it, a new one "
    "after the last or in another mode",
    "[provider][time]") {
    // Interface numbers no device of the tests uses: the registry is the process's.
    constexpr uint32_t kOne = 0x7fff0001, kTwo = 0x7fff0002;
    auto first = HostClock::of_interface(kOne, hw::TimeMode::kFunctional);
    auto second = HostClock::of_interface(kOne, hw::TimeMode::kFunctional);
    CHECK(first == second);  // what one handle saw, the other's posts follow
    first->observe(5'000);
    CHECK(second->now() == 5'000);
    auto other = HostClock::of_interface(kTwo, hw::TimeMode::kFunctional);
    CHECK(other != first);  // another interface, another host
    CHECK(other->now() == 0);
    first.reset();
    second.reset();
    // Every handle closed: the next open starts at model time 0.
    auto again = HostClock::of_interface(kOne, hw::TimeMode::kFunctional);
    CHECK(again->now() == 0);
    // The device reconfigured in another time mode under the same number.
    auto paced = HostClock::of_interface(kOne, hw::TimeMode::kPaced);
    CHECK(paced != again);
    CHECK(paced->mode() == hw::TimeMode::kPaced);
}
