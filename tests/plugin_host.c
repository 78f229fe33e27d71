/*
 * plugin_host.c: a real operator host for the tests of a plugin's own code
 * (see plugin_host.h).
 */
#include "plugin_host.h"

#include <stdio.h>
#include <string.h>

/* The operator whose instance hands its table and ctx over. */
static plugin_host *opening;

static kevo_status keeper_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                               const char *config_json, void **state)
{
    (void)config_json;
    opening->api = api;
    opening->ctx = ctx;
    *state = NULL;
    return KEVO_OK;
}

static kevo_status keeper_propose(void *state, const kevo_operator_request *req)
{
    (void)state;
    (void)req;
    return KEVO_EINVAL; /* never asked: the tests call the table only */
}

static void keeper_fini(void *state)
{
    (void)state;
}

static const kevo_operator_desc keeper_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "keeper",
    .version = "1",
    .init = keeper_init,
    .propose = keeper_propose,
    .fini = keeper_fini,
};

kevo_status plugin_host_open(plugin_host *ph)
{
    kevo_error err;
    kevo_error_init(&err);
    memset(ph, 0, sizeof *ph);
    kevo_operator *op = NULL;
    opening = ph;
    kevo_status rc = kevo_task_new("plugin_host", &ph->task, &err);
    if (rc == KEVO_OK)
        rc = kevo_task_add_dim(ph->task, "n", &err);
    if (rc == KEVO_OK)
        rc = kevo_task_add_buffer(ph->task, "x", KEVO_DTYPE_F32,
                                  KEVO_ROLE_INOUT, "n", &err);
    if (rc == KEVO_OK)
        rc = kevo_operator_host_new(ph->task, 1, &ph->host, &err);
    if (rc == KEVO_OK)
        rc = kevo_operator_host_register(ph->host, &keeper_desc, NULL, &err);
    if (rc == KEVO_OK)
        rc = kevo_operator_host_add(ph->host, "keeper", NULL, NULL, &op, &err);
    opening = NULL;
    if (rc != KEVO_OK) {
        fprintf(stderr, "plugin_host_open: %s\n", err.text);
        plugin_host_close(ph);
    }
    return rc;
}

void plugin_host_close(plugin_host *ph)
{
    kevo_operator_host_free(ph->host);
    kevo_task_free(ph->task);
    memset(ph, 0, sizeof *ph);
}
