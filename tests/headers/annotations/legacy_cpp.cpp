/*
 * legacy_cpp.cpp - the C++ driver mode (SOFTNDK_LEGACY_SAL, which the build defines for
 * this file as softndk_add_driver(... CXX) does for C++ drivers): the WDK headers
 * included the way C++ drivers include them, inside extern "C", then every libstdc++
 * header - among them those that use the legacy names (__in, __out, __valid, __bound,
 * __pre) as identifiers or declare and call min()/max() - then code that uses both: legacy
 * annotations, the WDK's min/max macros, and the standard library (with (std::min)(a, b), as on
 * Windows). NULL is still g++'s __null.
 *
 * Built as C++20 with -Wall -Wextra -Werror. Exit status 0 and "N checks passed" when
 * every check holds; otherwise the failed check is on stderr.
 */
extern "C" {
#include <ndkpi.h>
#include <ntddk.h>
#include <wsk.h>
}

/* Every libstdc++ header (g++ 12), after the WDK headers; and <sys/stat.h>, which
 * brings <linux/stat.h> (a __reserved member) under g++'s _GNU_SOURCE. */
#include <algorithm>
#include <any>
#include <array>
#include <atomic>
#include <barrier>
#include <bit>
#include <bitset>
#include <cassert>
#include <ccomplex>
#include <cctype>
#include <cerrno>
#include <cfenv>
#include <cfloat>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <ciso646>
#include <climits>
#include <clocale>
#include <cmath>
#include <codecvt>
#include <compare>
#include <complex>
#include <concepts>
#include <condition_variable>
#include <coroutine>
#include <csetjmp>
#include <csignal>
#include <cstdalign>
#include <cstdarg>
#include <cstdbool>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctgmath>
#include <ctime>
#include <cuchar>
#include <cwchar>
#include <cwctype>
#include <deque>
#include <exception>
#include <execution>
#include <expected>
#include <filesystem>
#include <forward_list>
#include <fstream>
#include <functional>
#include <future>
#include <initializer_list>
#include <iomanip>
#include <ios>
#include <iosfwd>
#include <iostream>
#include <istream>
#include <iterator>
#include <latch>
#include <limits>
#include <list>
#include <locale>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <new>
#include <numbers>
#include <numeric>
#include <optional>
#include <ostream>
#include <queue>
#include <random>
#include <ranges>
#include <ratio>
#include <regex>
#include <scoped_allocator>
#include <semaphore>
#include <set>
#include <shared_mutex>
#include <source_location>
#include <span>
#include <spanstream>
#include <sstream>
#include <stack>
#include <stacktrace>
#include <stdexcept>
#include <stop_token>
#include <streambuf>
#include <string>
#include <string_view>
#include <syncstream>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <valarray>
#include <variant>
#include <vector>
#include <version>

#include <sys/stat.h>

namespace {

int checks = 0;
int failures = 0;

void Check(bool condition, const char *what, int line) {
    ++checks;
    if (!condition) {
        std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, line, what);
        ++failures;
    }
}
#define CHECK(cond) Check((cond), #cond, __LINE__)

/* Legacy and SAL 2 annotations on C++ functions. */
__checkReturn _Must_inspect_result_ ULONG Sum(__in_ecount(Count) const ULONG *Values,
                                              __in ULONG Count, __out PULONG Largest,
                                              __reserved PVOID Reserved) {
    ULONG total = 0;
    *Largest = 0;
    for (ULONG i = 0; i < Count; ++i) {
        total += Values[i];
        *Largest = max(*Largest, Values[i]); /* the WDK's macro */
    }
    return Reserved == NULL ? total : 0;
}

_IRQL_requires_max_(DISPATCH_LEVEL) __drv_raisesIRQL(DISPATCH_LEVEL) VOID
    Touch(__inout PLONG Value, __in_opt __callback PVOID Context) {
    BENIGN_RACE_BEGIN
    *Value += ARGUMENT_PRESENT(Context) ? 2 : 1;
    BENIGN_RACE_END
}

}  // namespace

int main() {
    const ULONG values[] = {4, 9, 2};
    ULONG largest = 0;
    CHECK(Sum(values, 3, &largest, NULL) == 15);
    CHECK(largest == 9);
    CHECK(min(3, 5) == 3 && max(3, 5) == 5);

    LONG touched = 0;
    Touch(&touched, nullptr);
    Touch(&touched, &touched);
    CHECK(touched == 3);

    /* The standard library included after the WDK headers works. */
    std::vector<int> numbers{5, 3, 8, 1};
    std::sort(numbers.begin(), numbers.end());
    CHECK(numbers.front() == 1 && numbers.back() == 8);
    CHECK((std::min)(numbers[1], numbers[2]) == 3);
    CHECK((std::numeric_limits<int>::max)() == 2147483647);
    CHECK(std::ranges::find(numbers, 5) != numbers.end());
    std::map<std::string, int> counts{{"in", 1}, {"out", 2}};
    CHECK(counts.at("out") == 2);
    std::ostringstream text;
    text << "x=" << 42;
    CHECK(text.str() == "x=42");
    std::istringstream input("7 8");
    int a = 0, b = 0;
    input >> a >> b;
    CHECK(a + b == 15);
    CHECK(std::regex_match(std::string("fe80::1"), std::regex("[0-9a-f:]+")));
    std::mt19937 engine(1);
    std::uniform_int_distribution<int> dice(1, 6);
    int roll = dice(engine);
    CHECK(roll >= 1 && roll <= 6);
    auto pair = std::make_tuple(1, std::string("two"));
    CHECK(std::get<1>(pair) == "two");
    std::function<int(int)> twice = [](int v) { return v * 2; };
    CHECK(twice(21) == 42);
    int from_thread = 0;
    std::thread worker([&from_thread] { from_thread = 1; });
    worker.join();
    CHECK(from_thread == 1);
    CHECK(std::chrono::milliseconds(1500) ==
          std::chrono::seconds(1) + std::chrono::milliseconds(500));

    /* <linux/stat.h> was read before __reserved became an annotation. */
#pragma push_macro("__reserved")
#undef __reserved
    CHECK(offsetof(struct statx_timestamp, __reserved) == 12);
#pragma pop_macro("__reserved")

    /* NULL is g++'s __null, not an empty annotation. */
    void *nothing = NULL;
    CHECK(nothing == nullptr);

    if (failures != 0) {
        std::fprintf(stderr, "C++ driver mode: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    std::printf("C++ driver mode: %d checks passed\n", checks);
    return 0;
}
