/*
 * loopback-serve: the loopback LLM server (tests/loopback-server.c) as a
 * program of its own, for runs by hand and for bench/llm-search.sh.
 *
 *   loopback-serve [--batch-looks N] DIR
 *
 * Every DIR/NAME.cu becomes a reply text called NAME: the kernel in a
 * ```cuda block of an LLM reply, with a first line that numbers the reply
 * so that no two replies are the same candidate. Every DIR/NAME.md is a
 * whole reply as a model writes it (reasoning, prose, several fences,
 * diffs), served as it is; the server replaces @SEQ@ in it with the
 * reply's number. Requests take the texts
 * round robin, in the byte order of the file names, for as long as the
 * server runs. The server's URL ("http://127.0.0.1:PORT") is printed on
 * stdout as one line; an llm operator configuration points at it with
 * "base_url": "URL/v1" (OpenAI) or "URL" (Anthropic) and no key_env. It
 * serves until SIGTERM or SIGINT, then prints how many requests it
 * answered, and how many batches of the vendors' batch APIs were created,
 * on stderr and exits 0. Exit status 1: DIR holds no *.cu or the
 * server cannot start; 2: usage.
 *
 * With --batch-looks N (0 to 1000; default 0), each batch of the first
 * BATCH_PLANS that the vendors' batch APIs create is still in progress at
 * its first N looks (GETs) and ends at the next, as a batch that takes a
 * while does: a search with batch_wait_s 0 then stops to wait for it.
 *
 * The server keeps every request it answers in memory (a few tens of
 * kilobytes each): enough for runs of thousands of requests.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loopback-server.h"

/* Script this many rounds of the texts at a time, and script more when
 * fewer than LOW_ROUNDS are left. */
#define ROUNDS 200
#define LOW_ROUNDS 50
/* Batches scripted by --batch-looks. */
#define BATCH_PLANS 10000

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The contents of path in a new string, or NULL (with a message). */
static char *read_file(const char *path)
{
    char *text = NULL;
    long len;
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || !(text = malloc((size_t)len + 1)) ||
        fread(text, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "loopback-serve: %s: %s\n", path,
                errno ? strerror(errno) : "cannot read");
        free(text);
        text = NULL;
    } else {
        text[len] = '\0';
    }
    if (f)
        fclose(f);
    return text;
}

/* The file names (NAME.cu or NAME.md) of dir's replies, sorted, in a new
 * array of *n new strings; NULL with a message when there are none. */
static char **list_kernels(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    struct dirent *e;
    *n = 0;
    if (!d) {
        fprintf(stderr, "loopback-serve: %s: %s\n", dir, strerror(errno));
        return NULL;
    }
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 3 || (strcmp(e->d_name + len - 3, ".cu") != 0 &&
                         strcmp(e->d_name + len - 3, ".md") != 0))
            continue;
        char **more = realloc(names, (*n + 1) * sizeof *names);
        char *name = malloc(len + 1);
        if (!more || !name) {
            fprintf(stderr, "loopback-serve: out of memory\n");
            free(name);
            names = more ? more : names;
            goto fail;
        }
        names = more;
        memcpy(name, e->d_name, len + 1);
        names[(*n)++] = name;
    }
    closedir(d);
    d = NULL;
    if (*n == 0) {
        fprintf(stderr, "loopback-serve: %s holds no *.cu or *.md file\n", dir);
        goto fail;
    }
    qsort(names, *n, sizeof *names, by_name);
    return names;
fail:
    if (d)
        closedir(d);
    for (size_t i = 0; i < *n; i++)
        free(names[i]);
    free(names);
    *n = 0;
    return NULL;
}

/* The reply text that wraps source: the kernel in a ```cuda block, with a
 * first line that the server numbers (@SEQ@), in a new string or NULL. */
static char *wrap_reply(const char *name, const char *source)
{
    static const char format[] = "Here is a rewritten kernel (%s).\n\n"
                                 "```cuda\n// reply @SEQ@\n%s%s```\n";
    size_t len = strlen(source);
    const char *nl = len && source[len - 1] != '\n' ? "\n" : "";
    size_t size = sizeof format + strlen(name) + len + 1;
    char *reply = malloc(size);
    if (reply)
        snprintf(reply, size, format, name, source, nl);
    return reply;
}

/* Registers DIR/FILE as the reply text named FILE without its extension:
 * a kernel (.cu) wrapped in a reply, or a whole reply (.md) as it is. */
static int register_kernel(loopback *lb, const char *dir, const char *name)
{
    size_t plen = strlen(dir) + strlen(name) + 2;
    char *path = malloc(plen), *source = NULL, *reply = NULL;
    if (!path) {
        fprintf(stderr, "loopback-serve: out of memory\n");
        return 0;
    }
    snprintf(path, plen, "%s/%s", dir, name);
    bool whole = strcmp(name + strlen(name) - 3, ".md") == 0;
    char *base = strndup(name, strlen(name) - 3); /* the reply's name */
    if (base && (source = read_file(path)) &&
        !(reply = whole ? strdup(source) : wrap_reply(base, source)))
        fprintf(stderr, "loopback-serve: out of memory\n");
    if (reply)
        loopback_set_text(lb, base, reply);
    free(base);
    free(path);
    free(source);
    free(reply);
    return reply != NULL;
}

/* Scripts ROUNDS rounds of the names, starting with names[first]. */
static int script_rounds(loopback *lb, char **names, size_t n, size_t first)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += (strlen(names[i]) + 1) * ROUNDS;
    char *script = malloc(len), *p = script;
    if (!script)
        return 0;
    for (size_t k = 0; k < n * ROUNDS; k++) {
        const char *name = names[(first + k) % n];
        size_t nl = strlen(name);
        memcpy(p, name, nl);
        p += nl;
        *p++ = ',';
    }
    p[-1] = '\0';
    loopback_script(lb, script);
    free(script);
    return 1;
}

/* Scripts BATCH_PLANS batches that stay in progress for looks looks. */
static int script_batches(loopback *lb, long looks)
{
    char plan[32];
    int len = snprintf(plan, sizeof plan, "wait:%ld,", looks);
    char *plans = malloc((size_t)len * BATCH_PLANS + 1), *p = plans;
    if (!plans)
        return 0;
    for (int i = 0; i < BATCH_PLANS; i++, p += len)
        memcpy(p, plan, (size_t)len);
    p[-1] = '\0';
    loopback_batch_script(lb, plans);
    free(plans);
    return 1;
}

int main(int argc, char **argv)
{
    long looks = 0;
    char *end = NULL;
    if (argc == 4 && strcmp(argv[1], "--batch-looks") == 0) {
        errno = 0;
        looks = strtol(argv[2], &end, 10);
        if (errno || end == argv[2] || *end || looks < 0 || looks > 1000) {
            fprintf(stderr,
                    "loopback-serve: --batch-looks: '%s' is not a "
                    "number of looks from 0 to 1000\n",
                    argv[2]);
            return 2;
        }
        argv += 2;
        argc -= 2;
    }
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: loopback-serve [--batch-looks N] DIR\n"
                        "serves DIR/*.cu (kernels) and DIR/*.md (whole "
                        "replies) round robin as LLM replies on 127.0.0.1 "
                        "and prints the URL; with --batch-looks, each batch "
                        "is in progress at its first N looks\n");
        return 2;
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    /* Blocked before the server's thread starts, so only sigtimedwait()
     * below takes them. */
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    int status = 1;
    size_t n = 0, scripted = 0;
    char **names = list_kernels(argv[1], &n);
    loopback *lb = names ? loopback_start() : NULL;
    if (!lb)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (!register_kernel(lb, argv[1], names[i]))
            goto done;
        names[i][strlen(names[i]) - 3] = '\0'; /* the reply's name */
    }
    if (!script_rounds(lb, names, n, 0) ||
        (looks > 0 && !script_batches(lb, looks)))
        goto done;
    scripted = n * ROUNDS;
    printf("%s\n", loopback_url(lb));
    fflush(stdout);

    const struct timespec tick = {0, 200 * 1000 * 1000};
    for (;;) {
        int sig = sigtimedwait(&stop, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        /* Requests without a marker take one behaviour each from the
         * script: top it up before it runs out. */
        size_t served = loopback_count(lb);
        if (served + n * LOW_ROUNDS >= scripted) {
            if (!script_rounds(lb, names, n, served % n))
                goto done;
            scripted = served + n * ROUNDS;
        }
    }
    fprintf(stderr, "loopback-serve: %zu requests answered\n",
            loopback_count(lb));
    fprintf(stderr, "loopback-serve: %zu batches created\n",
            loopback_batches(lb));
    status = 0;
done:
    loopback_stop(lb);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return status;
}
