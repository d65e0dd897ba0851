// SRQ: not built yet. NdkCreateSrq and NdkCreateQpWithSrq (pd.cpp) answer
// STATUS_NOT_SUPPORTED and the adapter reports MaxSrqDepth = 0, so no SRQ
// object can exist; the table is complete so that it has the right shape.
#include "provider.hpp"
#include "stubs.hpp"

namespace softndk::provider {

const NDK_SRQ_DISPATCH kSrqDispatch = {
    .NdkCloseSrq = not_built<"NDK_SRQ_DISPATCH", "NdkCloseSrq", NDK_FN_CLOSE_OBJECT>,
    .NdkQueryExtension =
        not_built<"NDK_SRQ_DISPATCH", "NdkQueryExtension", NDK_FN_QUERY_EXTENSION_INTERFACE>,
    .NdkModifySrq = not_built<"NDK_SRQ_DISPATCH", "NdkModifySrq", NDK_FN_MODIFY_SRQ>,
    .NdkSrqReceive = not_built<"NDK_SRQ_DISPATCH", "NdkSrqReceive", NDK_FN_SRQ_RECEIVE>,
};

}  // namespace softndk::provider
