#include "provider.hpp"

namespace softndk::provider {

Mw::Mw(Adapter *a, Pd *pd, uint32_t index, uint32_t token, uint8_t type)
    : Object(a, fmt::format("{} mw{}#{:#x}", a->name(), type, token)),
      index_(index),
      token_(token),
      type_(type) {
    publish(*static_cast<Embedded<NDK_MW> *>(this), kType, a->version(), &kMwDispatch);
    depend_on(pd);
}

NTSTATUS create_mw(Pd *pd, uint8_t type, Mw **out) {
    hw::ObjectResponse response{};
    const NTSTATUS status =
        pd->adapter()->execute_object(hw::CommandOpcode::kAllocMw, pd->number(), type, &response);
    if (!NT_SUCCESS(status)) return status;
    *out = new Mw(pd->adapter(), pd, response.object, response.token, type);
    return STATUS_SUCCESS;
}

void Mw::on_final() {
    adapter()->execute_object(hw::CommandOpcode::kFreeMw, index_);
}

namespace {

NTSTATUS close_mw(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Mw *mw = from_header<Mw>(h);
    if (mw == nullptr) return STATUS_INVALID_PARAMETER;
    return mw->close(cb, ctx);
}

NTSTATUS mw_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                            NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Mw>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

// Valid once NdkBind returned; before that the window has no token to hand out.
UINT32 remote_token(NDK_MW *pMw) {
    Mw *mw = from_ndk<Mw>(pMw);
    if (mw == nullptr) return 0;
    if (!mw->bound.load(std::memory_order_acquire)) {
        log().warn("{}: NdkGetRemoteTokenFromMw before NdkBind", mw->name());
        return 0;
    }
    return mw->token();
}

}  // namespace

const NDK_MW_DISPATCH kMwDispatch = {
    .NdkCloseMw = close_mw,
    .NdkQueryExtension = mw_query_extension,
    .NdkGetRemoteTokenFromMw = remote_token,
};

}  // namespace softndk::provider
