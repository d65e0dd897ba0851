// The translation unit that defines the test GUID: <initguid.h> after <wdm.h> switches the
// DEFINE_GUIDs that follow to definitions (system_info_test.cpp only declares it).
#include <wdm.h>

#include <initguid.h>

#include "guid_test_guids.h"
