/*
 * kevo_cli.c: what the driver's commands share.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kevo_cli.h"

#ifndef KEVO_BUILD_PROMPTS_DIR
#define KEVO_BUILD_PROMPTS_DIR NULL
#endif

const char *program = "kevo";

void cli_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            printf("\\n");
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

bool cli_parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return false;
    *out = v;
    return true;
}

void cli_on_signals(void (*handler)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool cli_parse_real(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* The root of the build tree this program runs from (examples/kevo, or
 * examples/.libs/kevo under libtool), in buf: the directory above that
 * holds config.status. NULL for an installed program. */
static const char *build_tree_root(char *buf, size_t size)
{
    char exe[PATH_MAX - 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    static const char *const up[] = {"/..", "/../.."};
    for (size_t i = 0; i < sizeof up / sizeof *up; i++) {
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof probe, "%s%s/config.status", exe, up[i]);
        if (access(probe, F_OK) == 0) {
            char *root = realpath(dirname(probe), NULL);
            if (!root)
                return NULL;
            snprintf(buf, size, "%s", root);
            free(root);
            return buf;
        }
    }
    return NULL;
}

void cli_use_build_tree(char *worker, size_t size, const char **prompts)
{
    char root[PATH_MAX], path[PATH_MAX + 64];
    worker[0] = '\0';
    if (!build_tree_root(root, sizeof root))
        return;
    const char *env = getenv("KEVO_WORKER");
    snprintf(path, sizeof path, "%s/worker/kevo-worker", root);
    if ((!env || !env[0]) && access(path, X_OK) == 0)
        snprintf(worker, size, "%s", path);
    snprintf(path, sizeof path, "%s/operators/.libs/params.so", root);
    if (access(path, R_OK) == 0) {
        const char *old = getenv(KEVO_OPERATOR_PATH_ENV);
        char dirs[2 * PATH_MAX + 128];
        snprintf(dirs, sizeof dirs, "%s/operators/.libs%s%s", root,
                 old && old[0] ? ":" : "", old && old[0] ? old : "");
        setenv(KEVO_OPERATOR_PATH_ENV, dirs, 1);
    }
    env = getenv("KEVO_PROMPT_DIR");
    if (prompts && (!env || !env[0]) && KEVO_BUILD_PROMPTS_DIR)
        *prompts = KEVO_BUILD_PROMPTS_DIR;
}

bool cli_start_evaluator(kevo_evaluator *ev, const char *worker)
{
    kevo_error err;
    kevo_error_init(&err);
    if (worker[0] && kevo_evaluator_set_string(ev, KEVO_EVAL_WORKER_PATH,
                                               worker, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        return false;
    }
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc != KEVO_OK) {
        fprintf(stderr, "%s: cannot evaluate on a GPU: %s\n", program,
                err.text[0] ? err.text : kevo_strerror(rc));
        return false;
    }
    return true;
}
