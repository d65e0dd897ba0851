// Shared endpoints: not built yet. NdkCreateSharedEndpoint (adapter.cpp) and
// NdkConnectWithSharedEndpoint (connector.cpp) answer STATUS_NOT_SUPPORTED, so
// no shared-endpoint object can exist; the table is complete so that it has
// the right shape.
#include "provider.hpp"
#include "stubs.hpp"

namespace softndk::provider {

const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch = {
    .NdkCloseSharedEndpoint =
        not_built<"NDK_SHARED_ENDPOINT_DISPATCH", "NdkCloseSharedEndpoint", NDK_FN_CLOSE_OBJECT>,
    .NdkQueryExtension = not_built<"NDK_SHARED_ENDPOINT_DISPATCH", "NdkQueryExtension",
                                   NDK_FN_QUERY_EXTENSION_INTERFACE>,
    .NdkGetLocalAddress = not_built<"NDK_SHARED_ENDPOINT_DISPATCH", "NdkGetLocalAddress",
                                    NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS>,
};

}  // namespace softndk::provider
