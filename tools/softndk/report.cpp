#include "report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string_view>

namespace softndk::tool {

const char kLatencyHeader[] =
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
    "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
const char kRule[] =
    "---------------------------------------------------------------------------------------";

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Nearest rank: the smallest sample with at least p of all samples <= it.
double percentile(const std::vector<double> &sorted, double p) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// Places each value at the column where its header field starts (at least one
// space after the previous value), so rows line up under perftest's header and
// split on whitespace like perftest's.
std::string align(std::string_view header, const std::vector<std::string_view> &fields,
                  const std::vector<std::string> &values) {
    std::string row;
    size_t from = 0;
    for (size_t i = 0; i < fields.size() && i < values.size(); ++i) {
        const size_t column = header.find(fields[i], from);
        from = column + fields[i].size();
        if (row.size() < column)
            row.append(column - row.size(), ' ');
        else
            row.push_back(' ');
        row += values[i];
    }
    return row;
}

std::string fixed(double v, int digits) {
    return fmt::format("{:.{}f}", v, digits);
}

}  // namespace

LatencyRow latency_row(uint64_t bytes, std::vector<double> &samples, double divisor) {
    LatencyRow r;
    r.bytes = bytes;
    r.iterations = samples.size();
    if (samples.empty()) return r;
    for (double &s : samples)
        s /= divisor;
    std::sort(samples.begin(), samples.end());
    const double n = static_cast<double>(samples.size());
    r.t_min = samples.front();
    r.t_max = samples.back();
    r.t_typical = samples[samples.size() / 2];
    r.t_avg = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
    double squares = 0;
    for (double s : samples)
        squares += (s - r.t_avg) * (s - r.t_avg);
    r.t_stdev = std::sqrt(squares / n);
    r.p99 = percentile(samples, 0.99);
    r.p999 = percentile(samples, 0.999);
    return r;
}

double best_message_time(const std::vector<double> &posted, const std::vector<double> &completed,
                         size_t n, double &count) {
    // The best average over a run i..j is the least slope from a point (i, posted[i]) to
    // the point (j + 1, completed[j]), over i <= j. For a given j that point is the
    // tangent from (j + 1, completed[j]) to the upper convex hull of the points
    // (0, posted[0]) .. (j, posted[j]): the hull is built as j grows (monotone chain),
    // and the tangent found by bisection, as the slope to the query point falls along
    // the hull until the tangent and rises after it. O(n log n), exact for every n.
    struct Point {
        double x, y;
    };
    // Whether b lies on or below the line from a to c (a, b, c by increasing x).
    auto on_or_below = [](const Point &a, const Point &b, const Point &c) {
        return (b.y - a.y) * (c.x - a.x) <= (c.y - a.y) * (b.x - a.x);
    };
    std::vector<Point> hull;
    hull.reserve(n);
    double best = 0;
    count = 0;
    for (size_t j = 0; j < n; ++j) {
        const Point p{static_cast<double>(j), posted[j]};
        while (hull.size() >= 2 && on_or_below(hull[hull.size() - 2], hull.back(), p))
            hull.pop_back();
        hull.push_back(p);
        const Point q{static_cast<double>(j + 1), completed[j]};
        // The first hull point from which the slope to q does not fall any more: the
        // slope falls from hull[k] to hull[k + 1] while hull[k + 1] is above the line
        // from hull[k] to q.
        size_t lo = 0, hi = hull.size() - 1;
        while (lo < hi) {
            const size_t mid = (lo + hi) / 2;
            if (!on_or_below(hull[mid], hull[mid + 1], q))
                lo = mid + 1;
            else
                hi = mid;
        }
        const double t = q.y - hull[lo].y;
        const double messages = q.x - hull[lo].x;
        if (count == 0 || t * count < best * messages) {
            best = t;
            count = messages;
        }
    }
    return best;
}

BandwidthRow bandwidth_row(uint64_t bytes, const std::vector<double> &posted,
                           const std::vector<double> &completed, bool report_gbits, bool peak) {
    BandwidthRow r;
    r.bytes = bytes;
    r.iterations = posted.size();
    const size_t n = std::min(posted.size(), completed.size());
    if (n == 0) return r;
    // The last completion: with several QPs the last message posted need not
    // be the last to complete.
    const double last = *std::max_element(completed.begin(), completed.begin() + n);
    const double total = last - posted[0];
    const double byte_count = static_cast<double>(bytes);
    auto rate = [&](double seconds, double messages) {
        if (seconds <= 0) return 0.0;
        const double bytes_per_second = byte_count * messages / seconds;
        return report_gbits ? bytes_per_second * 8 / 1e9 : bytes_per_second / kMiB;
    };
    if (peak) {
        double best_count = 0;
        const double best = best_message_time(posted, completed, n, best_count);
        r.bw_peak = rate(best, best_count);
    }
    r.bw_average = rate(total, static_cast<double>(n));
    r.msg_rate = total > 0 ? static_cast<double>(n) / total / 1e6 : 0;
    return r;
}

std::string bandwidth_header(bool report_gbits) {
    return report_gbits
               ? " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
               : " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
}

std::string format_row(const LatencyRow &r) {
    return align(kLatencyHeader,
                 {"#bytes", "#iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "99%",
                  "99.9%"},
                 {std::to_string(r.bytes), std::to_string(r.iterations), fixed(r.t_min, 2),
                  fixed(r.t_max, 2), fixed(r.t_typical, 2), fixed(r.t_avg, 2), fixed(r.t_stdev, 2),
                  fixed(r.p99, 2), fixed(r.p999, 2)});
}

std::string format_row(const BandwidthRow &r) {
    return align(bandwidth_header(false),
                 {"#bytes", "#iterations", "BW peak", "BW average", "MsgRate"},
                 {std::to_string(r.bytes), std::to_string(r.iterations), fixed(r.bw_peak, 2),
                  fixed(r.bw_average, 2), fixed(r.msg_rate, 6)});
}

std::string json_object(const LatencyRow &r) {
    return fmt::format(
        "{{\"MsgSize\": {}, \"n_iterations\": {}, \"t_min\": {:.2f}, \"t_max\": {:.2f}, "
        "\"t_typical\": {:.2f}, \"t_avg\": {:.2f}, \"t_stdev\": {:.2f}, \"percentile_99\": "
        "{:.2f}, \"percentile_99.9\": {:.2f}}}",
        r.bytes, r.iterations, r.t_min, r.t_max, r.t_typical, r.t_avg, r.t_stdev, r.p99, r.p999);
}

std::string json_object(const BandwidthRow &r) {
    return fmt::format(
        "{{\"MsgSize\": {}, \"n_iterations\": {}, \"BW_peak\": {:.2f}, \"BW_average\": {:.2f}, "
        "\"MsgRate\": {:.6f}}}",
        r.bytes, r.iterations, r.bw_peak, r.bw_average, r.msg_rate);
}

std::string json_string(const std::string &text) {
    std::string out = "\"";
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            out += fmt::format("\\u{:04x}", u);
        } else {
            out += c;
        }
    }
    return out + "\"";
}

void print_json_array(const std::vector<std::string> &objects) {
    std::string array("[");
    for (size_t i = 0; i < objects.size(); ++i)
        array += (i == 0 ? "" : ",\n ") + objects[i];
    array += "]\n";
    std::fputs(array.c_str(), stdout);
}

}  // namespace softndk::tool
