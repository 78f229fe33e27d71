/*
 * farm_private.h: the ranks of a farm (include/kevo/farm.h) and the
 * messages between them. A transport moves JSON objects between rank 0
 * and the members: farm_procs.c over sockets to processes forked from
 * the caller, farm_mpi.c over MPI. What the messages say is the search's
 * business (lib/search/search_farm.c); this layer only moves them and
 * says when a member is gone.
 */
#ifndef KEVO_FARM_PRIVATE_H
#define KEVO_FARM_PRIVATE_H

#include <jansson.h>

#include <kevo/farm.h>

#include "core/kevo_private.h"

typedef struct kevo__farm_transport {
    const char *name; /* "processes", "MPI" */
    /* Sends msg (borrowed) to rank to; may return before it arrived. */
    kevo_status (*send)(kevo_farm *f, int to, const json_t *msg,
                        kevo_error *err);
    /* Waits up to timeout_ms (0: not at all) for a message from any rank:
     * KEVO_OK with *msg (the caller's reference) and *from, or with *msg
     * NULL when none came; KEVO_DONE with *from when that rank's
     * connection ended; KEVO_EFORMAT when a rank broke the framing. */
    kevo_status (*recv)(kevo_farm *f, int timeout_ms, int *from, json_t **msg,
                        kevo_error *err);
    /* How rank r ended, in buf ("killed by signal 9 (Killed)"), once
     * recv said it did; "" when the transport cannot tell. */
    const char *(*ended)(kevo_farm *f, int r, char *buf, size_t size);
    /* On rank 0: tells the members to stop and waits for them. On every
     * rank: closes the connections and frees the transport's state. */
    void (*close)(kevo_farm *f);
} kevo__farm_transport;

struct kevo_farm {
    int rank, size;
    const kevo__farm_transport *transport;
    void *state; /* the transport's */
    /* Why rank 0's search stopped, when the members are to know (a
     * kevo_stop_reason_name(), "" otherwise): the stop message says it. */
    char stop_reason[32];
};

/* The stop message rank 0 sends every member at the end:
 * {"op":"stop"}, with "reason" when the farm has one. */
#define KEVO__FARM_STOP "stop"

/* kevo__farm_stop_message: the stop message of f, a new reference (NULL
 * when out of memory). */
json_t *kevo__farm_stop_message(const kevo_farm *f);

/* kevo__farm_set_stop_reason: the reason the stop message will give (a
 * kevo_stop_reason_name()). */
void kevo__farm_set_stop_reason(kevo_farm *f, const char *reason);

/* kevo__farm_send: msg (borrowed) to rank to. Errors name the rank. */
kevo_status kevo__farm_send(kevo_farm *f, int to, const json_t *msg,
                            kevo_error *err);

/* kevo__farm_recv: as the transport's recv. */
kevo_status kevo__farm_recv(kevo_farm *f, int timeout_ms, int *from,
                            json_t **msg, kevo_error *err);

/* kevo__farm_ended: how rank r ended, in buf. */
const char *kevo__farm_ended(kevo_farm *f, int r, char *buf, size_t size);

/* A farm of size ranks on this rank over transport with state; NULL when
 * out of memory. (farm.c) */
kevo_farm *kevo__farm_new(int rank, int size,
                          const kevo__farm_transport *transport, void *state);

#endif
