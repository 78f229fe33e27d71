/* wrong_name.c: a valid plugin in a file whose name is not the operator's:
 * loading it by the name "wrong_name" must fail. */
#include "never_called.h"

static const kevo_operator_desc desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "someone_else",
    .version = "1.0",
    .init = never_init,
    .propose = never_propose,
    .fini = never_fini,
};

KEVO_OPERATOR_ENTRY(desc)
