/* LamDefs.h - constants shared by the driver's files, in its own include directory
 * (the .vcxproj's AdditionalIncludeDirectories), included as "LAMDEFS.H". */
#pragma once

#define LAM_POOL_TAG     'maLS' /* multi-character constant, as every WDK pool tag */
#define LAM_FILL_BYTE    0x5A
#define LAM_BLOCK_LENGTH 256
