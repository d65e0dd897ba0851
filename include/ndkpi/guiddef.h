/*
 * guiddef.h - SoftNDK user-mode stand-in for the SDK's GUID header.
 *
 * GUID itself is in ntdef.h. DEFINE_GUID(name, l, w1, w2, b1..b8) declares
 * `extern const GUID name` - unless INITGUID is defined (or <initguid.h> was
 * included) when this header is included, in which case it defines the GUID, as
 * the WDK does. Like the WDK's, the DEFINE_GUID part is outside the include guard,
 * so including <initguid.h> after <wdm.h> switches later DEFINE_GUIDs to
 * definitions. Definitions are weak (DECLSPEC_SELECTANY), so a GUID defined in
 * several translation units links once.
 *
 * IsEqualGUID / InlineIsEqualGUID compare two GUIDs: in C they take pointers
 * (REFGUID is `const GUID *const`), in C++ references, and C++ also gets == and !=.
 */
#ifndef SOFTNDK_GUIDDEF_H
#define SOFTNDK_GUIDDEF_H

#include <string.h>

#include <ntdef.h>

#ifndef EXTERN_C
#ifdef __cplusplus
#define EXTERN_C extern "C"
#else
#define EXTERN_C extern
#endif
#endif

#ifndef FAR
#define FAR
#endif

#ifdef __cplusplus
inline bool IsEqualGUID(REFGUID rguid1, REFGUID rguid2) {
    return memcmp(&rguid1, &rguid2, sizeof(GUID)) == 0;
}
inline bool InlineIsEqualGUID(REFGUID rguid1, REFGUID rguid2) {
    return IsEqualGUID(rguid1, rguid2);
}
inline bool operator==(REFGUID guidOne, REFGUID guidOther) {
    return IsEqualGUID(guidOne, guidOther);
}
inline bool operator!=(REFGUID guidOne, REFGUID guidOther) {
    return !(guidOne == guidOther);
}
#else
#define IsEqualGUID(rguid1, rguid2)       (!memcmp((rguid1), (rguid2), sizeof(GUID)))
#define InlineIsEqualGUID(rguid1, rguid2) IsEqualGUID((rguid1), (rguid2))
#endif
#define IsEqualIID(riid1, riid2) IsEqualGUID(riid1, riid2)

#endif /* SOFTNDK_GUIDDEF_H */

/* Outside the guard: re-evaluated at every inclusion (see above). */
#ifdef DEFINE_GUID
#undef DEFINE_GUID
#endif
#ifdef INITGUID
/* In C a const object at file scope already has external linkage, and gcc warns about
 * an initialised `extern`; so only C++ gets the extern "C". */
#ifdef __cplusplus
#define SOFTNDK_GUID_DEFINITION extern "C"
#else
#define SOFTNDK_GUID_DEFINITION
#endif
#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
    SOFTNDK_GUID_DEFINITION const GUID DECLSPEC_SELECTANY name = {   \
        l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}
#else
#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) EXTERN_C const GUID FAR name
#endif
