/*
 * wdmsec.h - SoftNDK user-mode stand-in for the WDK's secure device-object header
 * (also reachable as <Wdmsec.h>).
 *
 * IoCreateDeviceSecure is IoCreateDevice with a default security descriptor given in
 * SDDL. SoftNDK has one user and no access checks, so the descriptor is checked and
 * then not applied: DefaultSDDLString must be a device-object SDDL string - "D:",
 * an optional "P", then one or more ACEs "(A|D;flags;rights;;;sid)" with non-empty
 * rights and SID - else STATUS_INVALID_PARAMETER and no device is created.
 * DeviceClassGuid is accepted and not used (there is no class key to read an
 * override from). Everything else is IoCreateDevice's contract (wdm.h).
 *
 * The SDDL_DEVOBJ_* strings are Windows' (defined in the runtime, like wdmsec.lib).
 */
#ifndef _WDMSEC_H_
#define _WDMSEC_H_

#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

extern const UNICODE_STRING SDDL_DEVOBJ_KERNEL_ONLY;
#define SDDL_DEVOBJ_INF_SUPPLIED SDDL_DEVOBJ_KERNEL_ONLY
extern const UNICODE_STRING SDDL_DEVOBJ_SYS_ALL;
extern const UNICODE_STRING SDDL_DEVOBJ_SYS_ALL_ADM_ALL;
extern const UNICODE_STRING SDDL_DEVOBJ_SYS_ALL_ADM_RX;
extern const UNICODE_STRING SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_R;
extern const UNICODE_STRING SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_RW_RES_R;
extern const UNICODE_STRING SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_RWX_RES_RWX;

_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoCreateDeviceSecure(_In_ PDRIVER_OBJECT DriverObject, _In_ ULONG DeviceExtensionSize,
                         _In_opt_ PUNICODE_STRING DeviceName, _In_ DEVICE_TYPE DeviceType,
                         _In_ ULONG DeviceCharacteristics, _In_ BOOLEAN Exclusive,
                         _In_ PCUNICODE_STRING DefaultSDDLString, _In_opt_ LPCGUID DeviceClassGuid,
                         _Out_ PDEVICE_OBJECT *DeviceObject);

#ifdef __cplusplus
}
#endif

#endif /* _WDMSEC_H_ */
