/* abi_1_0.c: a plugin of operator ABI 1.0, loaded by a newer host. Its
 * descriptor says minor version 0 and has the size of a 1.0 descriptor;
 * the slot that ABI 1.1 gave to revise() was reserved in 1.0, and this
 * plugin leaves something other than NULL in it, which the host must never
 * take for a revise function. The host table it gets must still work as a
 * 1.0 table: it proposes nothing new, says so with api->fail() and ends
 * each request with api->done(). */
#include <stdio.h>

#include "never_called.h"

static const kevo_host_api *the_api;

static kevo_status old_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                            const char *config_json, void **state)
{
    (void)config_json;
    if (api->abi_major != 1 || api->size < sizeof(kevo_host_api)) {
        api->error(ctx, "unexpected host table (ABI %u.%u, %zu bytes)",
                   api->abi_major, api->abi_minor, api->size);
        return KEVO_EINVALID;
    }
    the_api = api;
    *state = ctx;
    return KEVO_OK;
}

static kevo_status old_propose(void *state, const kevo_operator_request *req)
{
    kevo_host_ctx *ctx = state;
    char why[128];
    snprintf(why, sizeof why, "a 1.0 plugin on a host of ABI %u.%u",
             the_api->abi_major, the_api->abi_minor);
    the_api->fail(ctx, req->id, KEVO_FAIL_EXHAUSTED, why);
    the_api->done(ctx, req->id);
    return KEVO_OK;
}

static void old_fini(void *state)
{
    (void)state;
}

/* What a 1.0 plugin may have left in its first reserved slot: if the host
 * ever called it as revise(), the test would abort. */
static kevo_status not_revise(void *state, const kevo_operator_revision *rev)
{
    (void)state;
    (void)rev;
    abort();
}

static const kevo_operator_desc desc = {
    .abi_major = 1,
    .abi_minor = 0,
    .struct_size = KEVO_OPERATOR_DESC_SIZE_1_0,
    .name = "abi_1_0",
    .version = "1.0",
    .description = "a plugin built against operator ABI 1.0",
    .init = old_init,
    .propose = old_propose,
    .fini = old_fini,
    .revise = not_revise,
};

KEVO_OPERATOR_ENTRY(desc)
