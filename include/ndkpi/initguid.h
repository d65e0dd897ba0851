/*
 * initguid.h - SoftNDK user-mode stand-in: makes every DEFINE_GUID that follows
 * define its GUID (with storage) instead of declaring it, as the WDK's does.
 */
#ifndef INITGUID
#define INITGUID
#endif
#include <guiddef.h>
