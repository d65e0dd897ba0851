// NT_ASSERT / NT_VERIFY / ASSERT and KeBugCheckEx: never compiled out, abort with the facts.
#include <wdm.h>

#include <string>

#include <catch2/catch.hpp>

#include "death.hpp"

namespace {

// The NT_ASSERT below sits on line kFailingAssertLine; keep the two together.
constexpr int kFailingAssertLine = __LINE__ + 2;
[[gnu::noinline]] void failing_assert(int two) {
    NT_ASSERT(two + two == 5);
}

constexpr int kFailingVerifyLine = __LINE__ + 2;
[[gnu::noinline]] void failing_verify_with_message(int value) {
    NT_VERIFYMSG("the value must be even", value % 2 == 0);
}

}  // namespace

TEST_CASE("assert: a passing NT_ASSERT evaluates its expression once and yields TRUE") {
    int evaluations = 0;
    CHECK(NT_ASSERT(++evaluations == 1) == TRUE);
    CHECK(evaluations == 1);
    CHECK(NT_VERIFY(++evaluations == 2) == TRUE);
    CHECK(evaluations == 2);
    CHECK(ASSERT(evaluations == 2) == TRUE);
    NT_ASSERTMSG("never shown", evaluations == 2);
    PAGED_CODE();
}

TEST_CASE("assert: a failing NT_ASSERT aborts with expression, file, line and function") {
    const auto child = softndk::test::run_in_child([] { failing_assert(2); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("two + two == 5"));
    CHECK_THAT(child.err,
               Catch::Contains(std::string(__FILE__) + ":" + std::to_string(kFailingAssertLine)));
    CHECK_THAT(child.err, Catch::Contains("failing_assert"));
}

TEST_CASE("assert: a failing NT_VERIFYMSG includes its message") {
    const auto child = softndk::test::run_in_child([] { failing_verify_with_message(3); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("value % 2 == 0"));
    CHECK_THAT(child.err, Catch::Contains("the value must be even"));
    CHECK_THAT(child.err, Catch::Contains(":" + std::to_string(kFailingVerifyLine)));
}

TEST_CASE("assert: PAGED_CODE above APC_LEVEL fails") {
    const auto child = softndk::test::run_in_child([] {
        KIRQL old;
        KeRaiseIrql(DISPATCH_LEVEL, &old);
        PAGED_CODE();
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("KeGetCurrentIrql() <= APC_LEVEL"));
}

TEST_CASE("assert: KeBugCheckEx reports the code, its name and the parameters") {
    const auto child = softndk::test::run_in_child([] { KeBugCheckEx(0xE2, 1, 2, 3, 0xABC); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("*** BUGCHECK 0x000000E2 (MANUALLY_INITIATED_CRASH) "
                                          "(0x1, 0x2, 0x3, 0xabc)"));
}
