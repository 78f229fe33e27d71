/* abi_1_1.c: a plugin of operator ABI 1.1, loaded by a newer host. Its
 * descriptor says minor version 1: it revises prompts, and the slot that
 * ABI 1.2 gave to repair() was reserved in 1.1, so this plugin leaves
 * something other than NULL in it, which the host must never take for a
 * repair function. Its propose says it has nothing new and ends the
 * request. */
#include "never_called.h"

static const kevo_host_api *the_api;

static kevo_status old_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                            const char *config_json, void **state)
{
    (void)config_json;
    the_api = api;
    *state = ctx;
    return KEVO_OK;
}

static kevo_status old_propose(void *state, const kevo_operator_request *req)
{
    kevo_host_ctx *ctx = state;
    the_api->fail(ctx, req->id, KEVO_FAIL_EXHAUSTED, "a 1.1 plugin");
    the_api->done(ctx, req->id);
    return KEVO_OK;
}

static kevo_status old_revise(void *state, const kevo_operator_revision *rev)
{
    kevo_host_ctx *ctx = state;
    the_api->fail(ctx, rev->id, KEVO_FAIL_UNSUPPORTED, "a 1.1 plugin");
    the_api->done(ctx, rev->id);
    return KEVO_OK;
}

static void old_fini(void *state)
{
    (void)state;
}

/* What a 1.1 plugin may have left in its first reserved slot: if the host
 * ever called it as repair(), the test would abort. */
static kevo_status not_repair(void *state,
                              const kevo_operator_repair_request *rep)
{
    (void)state;
    (void)rep;
    abort();
}

static const kevo_operator_desc desc = {
    .abi_major = 1,
    .abi_minor = 1,
    .struct_size = KEVO_OPERATOR_DESC_SIZE_1_0,
    .name = "abi_1_1",
    .version = "1.1",
    .description = "a plugin built against operator ABI 1.1",
    .init = old_init,
    .propose = old_propose,
    .fini = old_fini,
    .revise = old_revise,
    .repair = not_repair,
};

KEVO_OPERATOR_ENTRY(desc)
