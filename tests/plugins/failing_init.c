/* failing_init.c: a plugin whose init refuses its config, with a message.
 * Its fini must never be called (init failed), and neither its propose. */
#include "never_called.h"

static kevo_status failing_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                                const char *config_json, void **state)
{
    (void)state;
    api->error(ctx, "the endpoint in config %s cannot be reached",
               config_json ? config_json : "(none)");
    return KEVO_EINVALID;
}

static const kevo_operator_desc desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "failing_init",
    .version = "1.0",
    .init = failing_init,
    .propose = never_propose,
    .fini = never_fini,
};

KEVO_OPERATOR_ENTRY(desc)
