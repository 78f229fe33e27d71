/* unresolved.c: a plugin that needs a symbol nothing defines, so that
 * dlopen(RTLD_NOW) fails. */
#include "never_called.h"

/* Defined nowhere. */
extern int kevo_test_no_such_function(void);

static kevo_status unresolved_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                                   const char *config_json, void **state)
{
    (void)api;
    (void)ctx;
    (void)config_json;
    *state = NULL;
    return kevo_test_no_such_function() ? KEVO_OK : KEVO_EINVAL;
}

static const kevo_operator_desc desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "unresolved",
    .version = "1.0",
    .init = unresolved_init,
    .propose = never_propose,
    .fini = never_fini,
};

KEVO_OPERATOR_ENTRY(desc)
