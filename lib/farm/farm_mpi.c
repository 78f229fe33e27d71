/*
 * farm_mpi.c: a farm over MPI_COMM_WORLD. A message is the JSON text of
 * one object, sent with MPI_Isend under its own tag; a rank keeps each
 * send's buffer until MPI says it is done, so that two ranks writing to
 * each other never wait on one another. Receiving probes for any rank's
 * message, and sleeps briefly between probes while it waits.
 *
 * MPI says nothing of a rank that dies: Open MPI ends the whole job by
 * default (kevo_farm_mpi(3) says what is lost: the work in flight since
 * the last checkpoint).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "farm_private.h"

#ifdef KEVO_WITH_MPI
#include <mpi.h>
#include <time.h>

#include "proc/ipc.h"

#define FARM_TAG 0x6b66 /* "kf" */

typedef struct pending {
    MPI_Request req;
    char *text;
} pending;

typedef struct mpi_state {
    bool finalize; /* MPI was initialised here */
    pending *sends;
    size_t nsends, csends;
} mpi_state;

static kevo_status mpi_error(kevo_error *err, int code, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", code);
    return kevo__error_set(err, KEVO_EEXTERNAL, "MPI: %s: %s", what, text);
}

/* Frees the buffers of the sends that are done. */
static void progress(mpi_state *m)
{
    size_t k = 0;
    for (size_t i = 0; i < m->nsends; i++) {
        int done = 0;
        MPI_Test(&m->sends[i].req, &done, MPI_STATUS_IGNORE);
        if (done)
            free(m->sends[i].text);
        else
            m->sends[k++] = m->sends[i];
    }
    m->nsends = k;
}

static kevo_status mpi_send(kevo_farm *f, int to, const json_t *msg,
                            kevo_error *err)
{
    mpi_state *m = f->state;
    progress(m);
    if (m->nsends == m->csends) {
        size_t c = m->csends ? 2 * m->csends : 16;
        pending *s = realloc(m->sends, c * sizeof *s);
        if (!s)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        m->sends = s;
        m->csends = c;
    }
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    size_t len = strlen(text);
    if (len > (size_t)0x7fffffff) {
        free(text);
        return kevo__error_set(err, KEVO_ELIMIT,
                               "a message to rank %d is over 2 GiB", to);
    }
    pending *s = &m->sends[m->nsends];
    int rc = MPI_Isend(text, (int)len, MPI_CHAR, to, FARM_TAG, MPI_COMM_WORLD,
                       &s->req);
    if (rc != MPI_SUCCESS) {
        free(text);
        return mpi_error(err, rc, "sending to a rank");
    }
    s->text = text;
    m->nsends++;
    return KEVO_OK;
}

static kevo_status mpi_recv(kevo_farm *f, int timeout_ms, int *from,
                            json_t **msg, kevo_error *err)
{
    mpi_state *m = f->state;
    int64_t until = kevo__now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        progress(m);
        int flag = 0;
        MPI_Status st;
        int rc =
            MPI_Iprobe(MPI_ANY_SOURCE, FARM_TAG, MPI_COMM_WORLD, &flag, &st);
        if (rc != MPI_SUCCESS)
            return mpi_error(err, rc, "probing for a message");
        if (flag) {
            int count = 0;
            MPI_Get_count(&st, MPI_CHAR, &count);
            char *text = malloc((size_t)count + 1);
            if (!text)
                return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            rc = MPI_Recv(text, count, MPI_CHAR, st.MPI_SOURCE, FARM_TAG,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                free(text);
                return mpi_error(err, rc, "receiving a message");
            }
            text[count] = '\0';
            *from = st.MPI_SOURCE;
            json_error_t je;
            *msg = json_loadb(text, (size_t)count, 0, &je);
            free(text);
            if (!json_is_object(*msg)) {
                json_decref(*msg);
                *msg = NULL;
                return kevo__error_set(err, KEVO_EFORMAT,
                                       "rank %d sent a message that is not "
                                       "a JSON object: %s",
                                       st.MPI_SOURCE, je.text);
            }
            return KEVO_OK;
        }
        if (kevo__ms_left(until) == 0)
            return KEVO_OK;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

static void mpi_close(kevo_farm *f)
{
    mpi_state *m = f->state;
    if (f->rank == 0) {
        json_t *stop = kevo__farm_stop_message(f);
        for (int r = 1; stop && r < f->size; r++)
            mpi_send(f, r, stop, NULL);
        json_decref(stop);
    }
    for (size_t i = 0; i < m->nsends; i++) {
        MPI_Wait(&m->sends[i].req, MPI_STATUS_IGNORE);
        free(m->sends[i].text);
    }
    free(m->sends);
    if (m->finalize)
        MPI_Finalize();
    free(m);
}

static const kevo__farm_transport mpi_transport = {
    .name = "MPI",
    .send = mpi_send,
    .recv = mpi_recv,
    .ended = NULL,
    .close = mpi_close,
};

kevo_status kevo_farm_mpi(kevo_farm **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_farm_mpi: NULL out");
    *out = NULL;
    mpi_state *m = calloc(1, sizeof *m);
    if (!m)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided = 0;
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) {
            free(m);
            return mpi_error(err, rc, "MPI_Init_thread");
        }
        m->finalize = true;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kevo_farm *f = kevo__farm_new(rank, size, &mpi_transport, m);
    if (!f) {
        if (m->finalize)
            MPI_Finalize();
        free(m);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    *out = f;
    return KEVO_OK;
}

#else /* !KEVO_WITH_MPI */

kevo_status kevo_farm_mpi(kevo_farm **out, kevo_error *err)
{
    if (out)
        *out = NULL;
    return kevo__error_set(err, KEVO_EEXTERNAL,
                           "kevo was built without MPI: configure it with "
                           "--with-mpi (Open MPI's or MPICH's development "
                           "files are needed)");
}

#endif
