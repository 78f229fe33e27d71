/*
 * never_called.h: functions for the deliberately broken test plugins. The
 * host must refuse those plugins before calling anything but the entry
 * point, so each of these aborts the test program if it is ever called.
 */
#ifndef KEVO_TEST_NEVER_CALLED_H
#define KEVO_TEST_NEVER_CALLED_H

#include <stdlib.h>

#include <kevo/operator.h>

#if defined(__GNUC__)
#define NEVER_UNUSED __attribute__((unused))
#else
#define NEVER_UNUSED
#endif

static NEVER_UNUSED kevo_status never_init(const kevo_host_api *api,
                                           kevo_host_ctx *ctx,
                                           const char *config_json,
                                           void **state)
{
    (void)api;
    (void)ctx;
    (void)config_json;
    (void)state;
    abort();
}

static NEVER_UNUSED kevo_status never_propose(void *state,
                                              const kevo_operator_request *req)
{
    (void)state;
    (void)req;
    abort();
}

static NEVER_UNUSED void never_fini(void *state)
{
    (void)state;
    abort();
}

#endif
