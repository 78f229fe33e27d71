/* newer_minor.c: a plugin built against a newer minor version of the ABI
 * than the host's. */
#include "never_called.h"

static const kevo_operator_desc desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR + 1,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "newer_minor",
    .version = "1.0",
    .init = never_init,
    .propose = never_propose,
    .fini = never_fini,
};

KEVO_OPERATOR_ENTRY(desc)
