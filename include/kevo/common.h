/*
 * kevo/common.h: what every kevo header needs: the visibility macro and the
 * version of the library.
 */
#ifndef KEVO_COMMON_H
#define KEVO_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <kevo/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* KEVO_API marks every public declaration. The library is built with
 * -fvisibility=hidden, so only what carries this macro is exported. */
#if defined(KEVO_BUILDING_LIBRARY) && defined(__GNUC__)
#define KEVO_API __attribute__((visibility("default")))
#else
#define KEVO_API
#endif

/*
 * kevo_version: the version of the library that is loaded, as
 * KEVO_VERSION_NUMBER computes it (0xMMmmpp: major, minor, patch). Compare
 * it with KEVO_VERSION_NUMBER to detect a program built against headers of a
 * different release than the library it runs with.
 */
KEVO_API unsigned kevo_version(void);

/*
 * kevo_version_string: the version of the loaded library as text, such as
 * "0.1.0". The string is static; the caller must not free it.
 */
KEVO_API const char *kevo_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
