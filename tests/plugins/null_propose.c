/* null_propose.c: a plugin whose descriptor lacks a required function. */
#include "never_called.h"

static const kevo_operator_desc desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "null_propose",
    .version = "1.0",
    .init = never_init,
    .propose = NULL,
    .fini = never_fini,
};

KEVO_OPERATOR_ENTRY(desc)
