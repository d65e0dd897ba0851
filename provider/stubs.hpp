// stubs.hpp - the one stub every not-yet-built dispatch slot points to.
//
//   .NdkBind = not_built<"NDK_QP_DISPATCH", "NdkBind", NDK_FN_BIND>,
//
// The stub logs once (per slot) and returns STATUS_NOT_SUPPORTED, or 0 for
// UINT32/ULONG slots, or nothing for VOID slots. A static_assert ties each
// use to kSlots (slots.hpp): pointing a slot marked kBuilt at the stub, or
// naming a slot that does not exist, does not compile.
#pragma once

#include <ndkpi.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "log.hpp"
#include "slots.hpp"

namespace softndk::provider {

template <size_t N>
struct FixedString {
    char text[N]{};
    constexpr FixedString(const char (&s)[N]) { std::copy_n(s, N, text); }
    constexpr std::string_view view() const { return {text, N - 1}; }
};

template <FixedString Table, FixedString Name, class Fn>
struct NotBuilt;

template <FixedString Table, FixedString Name, class R, class... Args>
struct NotBuilt<Table, Name, R (*)(Args...)> {
    static_assert(slot_exists(Table.view(), Name.view()), "no such slot");
    static_assert(!slot_built(Table.view(), Name.view()), "slot is marked built in slots.hpp");

    static R fn(Args...) {
        static const std::string label =
            std::string(Table.view()) + "::" + std::string(Name.view());
        log_once(label.c_str());
        if constexpr (std::is_same_v<R, NTSTATUS>) {
            return STATUS_NOT_SUPPORTED;
        } else if constexpr (!std::is_void_v<R>) {
            return R{};
        }
    }
};

template <FixedString Table, FixedString Name, class Fn>
inline constexpr Fn not_built = &NotBuilt<Table, Name, Fn>::fn;

}  // namespace softndk::provider
