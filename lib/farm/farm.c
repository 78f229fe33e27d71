/*
 * farm.c: the farm object every transport shares: ranks, the calls that
 * move messages, and the end.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "farm_private.h"

kevo_farm *kevo__farm_new(int rank, int size,
                          const kevo__farm_transport *transport, void *state)
{
    kevo_farm *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->rank = rank;
    f->size = size;
    f->transport = transport;
    f->state = state;
    return f;
}

int kevo_farm_rank(const kevo_farm *farm)
{
    return farm ? farm->rank : 0;
}

int kevo_farm_size(const kevo_farm *farm)
{
    return farm ? farm->size : 1;
}

const char *kevo_farm_transport(const kevo_farm *farm)
{
    return farm ? farm->transport->name : NULL;
}

kevo_status kevo__farm_send(kevo_farm *f, int to, const json_t *msg,
                            kevo_error *err)
{
    if (to < 0 || to >= f->size || to == f->rank)
        return kevo__error_set(err, KEVO_ERANGE,
                               "farm: no rank %d to send to (ranks 0..%d, "
                               "this is %d)",
                               to, f->size - 1, f->rank);
    return f->transport->send(f, to, msg, err);
}

kevo_status kevo__farm_recv(kevo_farm *f, int timeout_ms, int *from,
                            json_t **msg, kevo_error *err)
{
    *msg = NULL;
    *from = -1;
    return f->transport->recv(f, timeout_ms, from, msg, err);
}

const char *kevo__farm_ended(kevo_farm *f, int r, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    return f->transport->ended ? f->transport->ended(f, r, buf, size) : buf;
}

json_t *kevo__farm_stop_message(const kevo_farm *f)
{
    json_t *msg = json_pack("{s:s}", "op", KEVO__FARM_STOP);
    if (msg && f->stop_reason[0])
        json_object_set_new(msg, "reason", json_string(f->stop_reason));
    return msg;
}

void kevo__farm_set_stop_reason(kevo_farm *f, const char *reason)
{
    snprintf(f->stop_reason, sizeof f->stop_reason, "%s", reason);
}

void kevo_farm_free(kevo_farm *farm)
{
    if (!farm)
        return;
    farm->transport->close(farm);
    free(farm);
}
