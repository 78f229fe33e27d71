/* bad_major.c: a plugin built for a future ABI major version. */
#include "never_called.h"

static const kevo_operator_desc desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR + 1,
    .abi_minor = 0,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "bad_major",
    .version = "1.0",
    .init = never_init,
    .propose = never_propose,
    .fini = never_fini,
};

KEVO_OPERATOR_ENTRY(desc)
