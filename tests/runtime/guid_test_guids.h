// A driver-style GUID header: declares the GUID, or defines it where <initguid.h> came first.
#pragma once
#include <guiddef.h>

// {2F7A3F0C-5B8E-4C4A-9C39-6E9E5D0B1A01}
DEFINE_GUID(GUID_SOFTNDK_TEST_INTERFACE, 0x2f7a3f0c, 0x5b8e, 0x4c4a, 0x9c, 0x39, 0x6e, 0x9e, 0x5d,
            0x0b, 0x1a, 0x01);
