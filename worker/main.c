/*
 * main.c: the kevo-worker program: argument parsing, the descriptor
 * shuffle that protects the message stream, and the modes.
 *
 *   kevo-worker compile
 *   kevo-worker gpu --device N
 *
 * stdin and stdout carry frames (lib/proc/ipc.h); stderr is for diagnostics.
 * The program is started by the core (lib/proc/procpool.c), not by people.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "kevo-worker: %s\n", why);
    fprintf(stderr, "usage: kevo-worker compile\n"
                    "       kevo-worker gpu --device N\n"
                    "kevo-worker is started by libkevo; it speaks frames on "
                    "stdin and stdout.\n");
    return 2;
}

kevo_status kevo__worker_reply_error(int out_fd, const char *op, uint64_t id,
                                     const char *text, kevo_error *err)
{
    json_t *msg = json_pack("{s:s, s:b, s:s}", "op", op, "ok", 0, "error",
                            text ? text : "");
    kevo_status rc;
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (id && json_object_set_new(msg, "id", json_integer((json_int_t)id))) {
        json_decref(msg);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    rc = kevo__ipc_send(out_fd, msg, NULL, 0, -1, err);
    json_decref(msg);
    return rc;
}

/* Moves the message pipes off 0 and 1: in_fd and out_fd get new
 * descriptors, 0 reads /dev/null and 1 writes to stderr. */
static bool move_pipes(int *in_fd, int *out_fd)
{
    int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
    int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0) {
        fprintf(stderr, "kevo-worker: cannot set up the pipes: %s\n",
                strerror(errno));
        return false;
    }
    close(null);
    *in_fd = in;
    *out_fd = out;
    return true;
}

int main(int argc, char **argv)
{
    int in_fd = -1, out_fd = -1, rc;
    long device = -1;

    if (argc < 2)
        return usage(NULL);
    if (strcmp(argv[1], "compile") == 0) {
        if (argc != 2)
            return usage("compile takes no options");
    } else if (strcmp(argv[1], "gpu") == 0) {
        for (int i = 2; i < argc; i++) {
            char *end;
            if (strcmp(argv[i], "--device") != 0 || i + 1 >= argc)
                return usage("gpu needs --device N");
            errno = 0;
            device = strtol(argv[++i], &end, 10);
            if (errno || end == argv[i] || *end || device < 0 ||
                device > INT_MAX)
                return usage("--device needs a device index (0, 1, ...)");
        }
        if (device < 0)
            return usage("gpu needs --device N");
    } else {
        return usage("unknown mode");
    }
    if (!move_pipes(&in_fd, &out_fd))
        return 1;
    if (device < 0)
        rc = kevo__worker_compile_main(in_fd, out_fd);
    else
        rc = kevo__worker_gpu_main(in_fd, out_fd, (int)device);
    close(in_fd);
    close(out_fd);
    return rc;
}
