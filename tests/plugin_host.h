/*
 * plugin_host.h: a real operator host whose table the tests of a plugin's
 * own code call, where that code asks kevo (the llm operator's reply
 * parser asks which headers a kernel may include and where blocks are).
 * plugin_host_open() makes a host for a small task of its own and an
 * instance of an in-process operator whose init keeps the table and the
 * ctx it is given.
 */
#ifndef KEVO_TESTS_PLUGIN_HOST_H
#define KEVO_TESTS_PLUGIN_HOST_H

#include <kevo.h>

typedef struct plugin_host {
    kevo_task *task;
    kevo_operator_host *host;
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
} plugin_host;

/* Opens ph. Returns KEVO_OK, or the failure's code (with its message on
 * stderr). */
kevo_status plugin_host_open(plugin_host *ph);

/* Frees what ph holds; a closed or never opened one does nothing. */
void plugin_host_close(plugin_host *ph);

#endif
