#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "report.hpp"

using softndk::tool::bandwidth_row;
using softndk::tool::best_message_time;
using softndk::tool::latency_row;

namespace {
// The definition: every run i..j tried.
double brute_force_best(const std::vector<double> &posted, const std::vector<double> &completed,
                        double &count) {
    double best = 0;
    count = 0;
    for (size_t i = 0; i < posted.size(); ++i) {
        for (size_t j = i; j < completed.size(); ++j) {
            const double t = completed[j] - posted[i];
            const double messages = static_cast<double>(j - i + 1);
            if (count == 0 || t * count < best * messages) {
                best = t;
                count = messages;
            }
        }
    }
    return best;
}
}  // namespace

TEST_CASE("BW peak of one message is that message's time", "[report]") {
    double count = 0;
    CHECK(best_message_time({1.0}, {3.0}, 1, count) == 2.0);
    CHECK(count == 1);
}

TEST_CASE("BW peak finds a fast stretch in the middle of a slow run", "[report]") {
    // Messages 0-2 take 10 s each; 3-5 are posted together and complete within 3 s;
    // 6-7 are slow again.
    const std::vector<double> posted{0, 10, 20, 30, 30, 30, 40, 50};
    const std::vector<double> completed{10, 20, 30, 32, 32.5, 33, 50, 60};
    double count = 0;
    const double best = best_message_time(posted, completed, posted.size(), count);
    CHECK(best / count == Approx(1.0));  // posted[3] .. completed[5]: 3 s for 3 messages
    CHECK(count == 3);
}

TEST_CASE("BW peak agrees with a search of every run on random timings", "[report]") {
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> gap(0, 2), latency(0.5, 5);
    for (int round = 0; round < 200; ++round) {
        const size_t n = 1 + random() % 60;
        std::vector<double> posted(n), completed(n);
        double at = 0;
        for (size_t i = 0; i < n; ++i) {
            at += round % 3 == 0 ? 1.0 : gap(random);  // every third round: ties everywhere
            posted[i] = at;
            completed[i] = at + (round % 3 == 0 ? 2.0 : latency(random));
        }
        double count = 0, expected_count = 0;
        const double best = best_message_time(posted, completed, n, count);
        const double expected = brute_force_best(posted, completed, expected_count);
        INFO("round " << round << ", " << n << " messages");
        CHECK(best / count == Approx(expected / expected_count).epsilon(1e-12));
    }
}

TEST_CASE("bandwidth_row leaves BW peak 0 when asked not to compute it", "[report]") {
    const std::vector<double> posted{0, 1, 2}, completed{1, 2, 3};
    const auto with = bandwidth_row(1024 * 1024, posted, completed, false, true);
    const auto without = bandwidth_row(1024 * 1024, posted, completed, false, false);
    CHECK(with.bw_peak == Approx(1.0));  // 1 MiB a second
    CHECK(without.bw_peak == 0);
    CHECK(without.bw_average == with.bw_average);
    CHECK(with.bw_average == Approx(1.0));  // 3 MiB in 3 s
    CHECK(with.msg_rate == Approx(1e-6));
}

TEST_CASE("latency_row halves round trips and sorts for the percentiles", "[report]") {
    std::vector<double> samples{4, 2, 8, 6};
    const auto row = latency_row(8, samples, 2);
    CHECK(row.t_min == 1);
    CHECK(row.t_max == 4);
    CHECK(row.t_typical == 3);  // the upper median: the third of 1, 2, 3, 4
    CHECK(row.t_avg == 2.5);
}
