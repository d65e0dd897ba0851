#include "provider.hpp"

namespace softndk::provider {

namespace {

constexpr ULONG kMrFlags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                           NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK;

uint8_t access_of(ULONG flags) {
    uint8_t a = hw::kAccessLocalRead;
    if ((flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE) != 0) a |= hw::kAccessLocalWrite;
    if ((flags & NDK_MR_FLAG_ALLOW_REMOTE_READ) != 0) a |= hw::kAccessRemoteRead;
    if ((flags & NDK_MR_FLAG_ALLOW_REMOTE_WRITE) == NDK_MR_FLAG_ALLOW_REMOTE_WRITE)
        a |= hw::kAccessRemoteWrite | hw::kAccessLocalWrite;
    if ((flags & NDK_MR_FLAG_RDMA_READ_SINK) != 0) a |= hw::kAccessReadSink;
    return a;
}

}  // namespace

bool mdl_contiguous(const MDL *mdl, SIZE_T length) {
    auto next = reinterpret_cast<uintptr_t>(MmGetMdlVirtualAddress(mdl));
    SIZE_T covered = 0;
    for (const MDL *m = mdl; m != nullptr && covered < length; m = m->Next) {
        if (reinterpret_cast<uintptr_t>(MmGetMdlVirtualAddress(m)) != next) return false;
        covered += MmGetMdlByteCount(m);
        next += MmGetMdlByteCount(m);
    }
    return covered >= length;
}

Mr::Mr(Adapter *a, Pd *pd, uint32_t index, uint32_t token, bool fast_register)
    : Object(a, fmt::format("{} mr#{:#x}", a->name(), token)),
      index_(index),
      token_(token),
      fast_register_(fast_register) {
    publish(*static_cast<Embedded<NDK_MR> *>(this), kType, a->version(), &kMrDispatch);
    depend_on(pd);
}

NTSTATUS create_mr(Pd *pd, bool fast_register, Mr **out) {
    hw::ObjectResponse response{};
    // ObjectRequest::reserved = 1 asks for a fast-register MR (hw_interface.hpp).
    const NTSTATUS status = pd->adapter()->execute_object(hw::CommandOpcode::kAllocMr, pd->number(),
                                                          fast_register ? 1 : 0, &response);
    if (!NT_SUCCESS(status)) return status;
    *out = new Mr(pd->adapter(), pd, response.object, response.token, fast_register);
    return STATUS_SUCCESS;
}

void Mr::on_final() {
    if (registered) adapter()->execute_object(hw::CommandOpcode::kDeregisterMr, index_);
    adapter()->execute_object(hw::CommandOpcode::kFreeMr, index_);
}

namespace {

NTSTATUS close_mr(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Mr *mr = from_header<Mr>(h);
    if (mr == nullptr) return STATUS_INVALID_PARAMETER;
    return mr->close(cb, ctx);
}

NTSTATUS mr_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                            NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Mr>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

NTSTATUS register_mr(NDK_MR *pMr, MDL *Mdl, SIZE_T Length, ULONG Flags,
                     NDK_FN_REQUEST_COMPLETION cb, PVOID) {
    Mr *mr = from_ndk<Mr>(pMr);
    if (mr == nullptr || Mdl == nullptr || cb == nullptr || Length == 0 || (Flags & ~kMrFlags) != 0)
        return STATUS_INVALID_PARAMETER;
    if (Length > mr->adapter()->info().MaxRegistrationSize) return STATUS_INVALID_PARAMETER;
    const auto va = reinterpret_cast<uintptr_t>(MmGetMdlVirtualAddress(Mdl));
    if (va == 0 || !mdl_contiguous(Mdl, Length)) return STATUS_INVALID_PARAMETER;
    if (mr->fast_register()) return STATUS_INVALID_DEVICE_REQUEST;
    {
        std::lock_guard lock(mr->mutex);
        if (mr->registered || mr->busy) return STATUS_INVALID_DEVICE_STATE;
        mr->busy = true;
    }
    hw::RegisterMrRequest request{};
    request.mpt_index = mr->index();
    request.access = access_of(Flags);
    request.iova = va;
    request.length = Length;
    request.memory = hw::MemoryHandle{hw::kNoFd, 0, 0, Length, va};
    hw::ObjectResponse response{};
    const NTSTATUS status =
        mr->adapter()->execute(hw::CommandOpcode::kRegisterMr, request, response);
    std::lock_guard lock(mr->mutex);
    mr->busy = false;
    mr->registered = NT_SUCCESS(status);
    if (mr->registered) mr->access = request.access;
    if (mr->registered && response.token != 0) mr->set_token(response.token);
    log().debug("{}: register {:#x}+{} flags {:#x}: {:#x}", mr->name(), va, Length, Flags,
                static_cast<uint32_t>(status));
    return status;
}

NTSTATUS deregister_mr(NDK_MR *pMr, NDK_FN_REQUEST_COMPLETION cb, PVOID) {
    Mr *mr = from_ndk<Mr>(pMr);
    if (mr == nullptr || cb == nullptr) return STATUS_INVALID_PARAMETER;
    {
        std::lock_guard lock(mr->mutex);
        if (!mr->registered || mr->busy) return STATUS_INVALID_DEVICE_STATE;
        mr->busy = true;
    }
    const NTSTATUS status =
        mr->adapter()->execute_object(hw::CommandOpcode::kDeregisterMr, mr->index());
    std::lock_guard lock(mr->mutex);
    mr->busy = false;
    if (NT_SUCCESS(status)) mr->registered = false;
    return status;
}

NTSTATUS initialize_fast_register_mr(NDK_MR *pMr, ULONG AdapterPageCount, BOOLEAN RemoteAccess,
                                     NDK_FN_REQUEST_COMPLETION cb, PVOID) {
    Mr *mr = from_ndk<Mr>(pMr);
    if (mr == nullptr || cb == nullptr || AdapterPageCount == 0) return STATUS_INVALID_PARAMETER;
    if (!mr->fast_register()) return STATUS_INVALID_DEVICE_REQUEST;
    if (AdapterPageCount > mr->adapter()->info().FRMRPageCount) return STATUS_IMPLEMENTATION_LIMIT;
    hw::InitFastRegMrRequest request{};
    request.mpt_index = mr->index();
    request.max_pages = AdapterPageCount;
    request.remote_access = RemoteAccess != FALSE ? 1 : 0;
    hw::ObjectResponse response{};
    // May be called again while no registration is valid (the device answers
    // INVALID_DEVICE_STATE while one is): the last call sets the limits.
    const NTSTATUS status =
        mr->adapter()->execute(hw::CommandOpcode::kInitFastRegMr, request, response);
    if (NT_SUCCESS(status)) {
        std::lock_guard lock(mr->mutex);
        mr->fast_register_pages = AdapterPageCount;
        mr->fast_register_remote = RemoteAccess != FALSE;
    }
    return status;
}

UINT32 local_token(NDK_MR *pMr) {
    Mr *mr = from_ndk<Mr>(pMr);
    return mr == nullptr ? 0 : mr->token();
}

UINT32 remote_token(NDK_MR *pMr) {
    Mr *mr = from_ndk<Mr>(pMr);
    return mr == nullptr ? 0 : mr->token();
}

}  // namespace

const NDK_MR_DISPATCH kMrDispatch = {
    .NdkCloseMr = close_mr,
    .NdkQueryExtension = mr_query_extension,
    .NdkRegisterMr = register_mr,
    .NdkDeregisterMr = deregister_mr,
    .NdkInitializeFastRegisterMr = initialize_fast_register_mr,
    .NdkGetRemoteTokenFromMr = remote_token,
    .NdkGetLocalTokenFromMr = local_token,
};

}  // namespace softndk::provider
