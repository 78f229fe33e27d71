/*
 * version.c: the version of the loaded library.
 */
#include "config.h"

#include "kevo_private.h"

unsigned kevo_version(void)
{
    return KEVO_VERSION_NUMBER;
}

const char *kevo_version_string(void)
{
    return KEVO_VERSION_STRING;
}
