/*
 * winapifamily.h - SoftNDK user-mode stand-in for the SDK's API-partition
 * header.
 *
 * The real header lets one SDK serve desktop, store-app, phone, system and
 * games builds: declarations sit inside
 *     #if WINAPI_FAMILY_PARTITION(WINAPI_PARTITION_DESKTOP)
 * blocks (ndkinfo.h is written that way). SoftNDK has exactly one "family" -
 * everything the stand-in headers declare is meant to be visible - so every
 * partition test is true and every partition name is 1. Code written for the
 * real ndkinfo.h (or any other SDK header) therefore compiles unchanged.
 *
 * The WINAPI_FAMILY_* values are the real ones, for code that compares
 * WINAPI_FAMILY directly; WINAPI_FAMILY is the desktop family, as in an
 * ordinary kernel-mode or desktop build.
 */
#ifndef _INC_WINAPIFAMILY
#define _INC_WINAPIFAMILY

/* ---- Families (values as in the Windows SDK). */
#define WINAPI_FAMILY_PC_APP 2
#define WINAPI_FAMILY_PHONE_APP 3
#define WINAPI_FAMILY_SYSTEM 4
#define WINAPI_FAMILY_SERVER 5
#define WINAPI_FAMILY_GAMES 6
#define WINAPI_FAMILY_DESKTOP_APP 100
#define WINAPI_FAMILY_APP WINAPI_FAMILY_PC_APP

#ifndef WINAPI_FAMILY
#define WINAPI_FAMILY WINAPI_FAMILY_DESKTOP_APP
#endif

/* ---- Partitions: all visible. */
#define WINAPI_PARTITION_DESKTOP 1
#define WINAPI_PARTITION_APP 1
#define WINAPI_PARTITION_PC_APP 1
#define WINAPI_PARTITION_PHONE_APP 1
#define WINAPI_PARTITION_PHONE_RESTRICTED 1
#define WINAPI_PARTITION_PHONE 1
#define WINAPI_PARTITION_SYSTEM 1
#define WINAPI_PARTITION_SERVER 1
#define WINAPI_PARTITION_GAMES 1

/* True for any partition, including ones this header does not name. */
#define WINAPI_FAMILY_PARTITION(Partitions) 1
#define WINAPI_FAMILY_ONE_PARTITION(PartitionSet, Partition) 1

#endif /* _INC_WINAPIFAMILY */
