// typedefs_cpp.cpp - every NDK_FN_* typedef, from C++20: the function written
// out with the documented prototype (ndkpi_prototypes.inc, shared with
// typedefs_c.c) is assigned to a variable of the typedef's type (a mismatch
// is a hard error in C++), and its type must be exactly the typedef's.
// Then the traps of reference sections 0.1 and 3.0, spelled out.
#include <ndkpi.h>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "ndkpi_prototypes.inc"

namespace {

#define TYPEDEF(fn_typedef)                                                  \
    static_assert(std::is_same_v<decltype(&Proto_##fn_typedef), fn_typedef>, \
                  #fn_typedef " matches its documented prototype");
#include "ndkpi_layout.def"

// Parameter I of function-pointer type Fn.
template <typename Fn, std::size_t I>
struct Param;
template <typename R, typename... A, std::size_t I>
struct Param<R (*)(A...), I> {
    using type = std::tuple_element_t<I, std::tuple<A...>>;
};
template <typename Fn, std::size_t I>
using ParamT = typename Param<Fn, I>::type;

// `CONST PSOCKADDR p` is a const POINTER: the parameter is `sockaddr*`, and a
// provider function taking `const sockaddr*` does not convert.
static_assert(std::is_same_v<ParamT<NDK_FN_CONNECT, 2>, sockaddr *>);
static_assert(std::is_same_v<ParamT<NDK_FN_CONNECT, 4>, sockaddr *>);
static_assert(std::is_same_v<ParamT<NDK_FN_CONNECT_WITH_SHARED_ENDPOINT, 3>, sockaddr *>);
static_assert(std::is_same_v<ParamT<NDK_FN_LISTEN, 1>, sockaddr *>);
static_assert(std::is_same_v<ParamT<NDK_FN_CREATE_SHARED_ENDPOINT, 1>, sockaddr *>);
static_assert(!std::is_convertible_v<NTSTATUS (*)(NDK_LISTENER *, const sockaddr *, ULONG,
                                                  NDK_FN_REQUEST_COMPLETION, PVOID),
                                     NDK_FN_LISTEN>);
// `CONST PVOID p` likewise is `void*`.
static_assert(std::is_same_v<ParamT<NDK_FN_CONNECT, 8>, void *>);
static_assert(std::is_same_v<ParamT<NDK_FN_CONNECT_WITH_SHARED_ENDPOINT, 7>, void *>);
static_assert(std::is_same_v<ParamT<NDK_FN_ACCEPT, 4>, void *>);
static_assert(std::is_same_v<ParamT<NDK_FN_ACCEPT_EX, 4>, void *>);
static_assert(std::is_same_v<ParamT<NDK_FN_REJECT, 1>, void *>);
// `CONST NDK_SGE*` and `CONST NDK_LOGICAL_ADDRESS*` point to const.
static_assert(std::is_same_v<ParamT<NDK_FN_SEND, 2>, const NDK_SGE *>);
static_assert(std::is_same_v<ParamT<NDK_FN_FAST_REGISTER, 4>, const NDK_LOGICAL_ADDRESS *>);
// NDK_VERSION is passed by value.
static_assert(std::is_same_v<ParamT<NDK_FN_QUERY_EXTENSION_INTERFACE, 2>, NDK_VERSION>);
static_assert(std::is_same_v<ParamT<NDK_FN_QUERY_ADAPTER_INFO_EX, 1>, NDK_VERSION>);
// ULONG is 32-bit, BOOLEAN one byte (not bool), UINT64 remote addresses.
static_assert(std::is_same_v<ParamT<NDK_FN_ARM_CQ, 1>, std::uint32_t>);
static_assert(std::is_same_v<ParamT<NDK_FN_CREATE_MR, 1>, unsigned char>);
static_assert(std::is_same_v<ParamT<NDK_FN_READ, 4>, std::uint64_t>);
// SendAndInvalidate takes RemoteToken last, after Flags.
static_assert(std::is_same_v<NDK_FN_SEND_AND_INVALIDATE,
                             NTSTATUS (*)(NDK_QP *, PVOID, const NDK_SGE *, ULONG, ULONG, UINT32)>);
// The 2.1 variants differ from their 2.0 twins only in the disconnect callback.
static_assert(
    std::is_same_v<ParamT<NDK_FN_COMPLETE_CONNECT_EX, 1>, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX>);
static_assert(std::is_same_v<ParamT<NDK_FN_ACCEPT_EX, 6>, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX>);
static_assert(!std::is_same_v<NDK_FN_ACCEPT, NDK_FN_ACCEPT_EX>);

}  // namespace

int main() {
    int assigned = 0;
#define TYPEDEF(fn_typedef)      \
    {                            \
        fn_typedef fn;           \
        fn = Proto_##fn_typedef; \
        (void)fn;                \
        ++assigned;              \
    }
#include "ndkpi_layout.def"
    return assigned == 63 ? 0 : 1;
}
