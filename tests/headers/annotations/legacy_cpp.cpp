/*
 * legacy_cpp.cpp - the C++ driver mode (SOFTNDK_LEGACY_SAL, which the build defines for
 * this file as softndk_add_driver(... CXX) does for C++ drivers): the WDK headers
 * included the way C++ drivers include them, inside extern "C", then libstdc++ headers
 * that use the legacy names (__in, __out, __valid, __bound, __pre) as identifiers or
 * declare and call min()/max(), then code that uses both: legacy annotations, the
 * WDK's min/max macros, and the standard library (with (std::min)(a, b), as on Windows).
 * NULL is still g++'s __null.
 *
 * Built as C++20 with -Wall -Wextra -Werror. Exit status 0 and "N checks passed" when
 * every check holds; otherwise the failed check is on stderr.
 */
extern "C" {
#include <ndkpi.h>
#include <ntddk.h>
#include <wsk.h>
}

#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <ranges>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

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
