/* small_struct.c: a plugin whose descriptor claims to be smaller than an
 * ABI 1.0 descriptor (as one built from a truncated header would). */
#include <stddef.h>

#include "never_called.h"

static const kevo_operator_desc desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = offsetof(kevo_operator_desc, fini),
    .name = "small_struct",
    .version = "1.0",
    .init = never_init,
    .propose = never_propose,
    .fini = never_fini,
};

KEVO_OPERATOR_ENTRY(desc)
