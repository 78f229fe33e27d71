/*
 * driver.c: runs a fuzz harness (LLVMFuzzerTestOneInput) without a fuzzer,
 * so that make check exercises every harness briefly on any machine.
 *
 *   fuzz-NAME [CORPUS_DIR]
 *
 * replays every file of the corpus (default:
 * $KEVO_SRCDIR/tests/fuzz/corpus/NAME), then feeds mutated corpus inputs
 * for KEVO_FUZZ_SECONDS seconds (default 2; under KEVO_VALGRIND=1 a fixed
 * 200 inputs instead). Mutations are drawn from KEVO_FUZZ_SEED (default 1),
 * so a run can be repeated exactly. When an input crashes the harness, it
 * is written to fuzz-NAME-crash.bin in the current directory first. With
 * --enable-fuzzing the harnesses link libFuzzer instead of this driver.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT 65536

typedef struct input {
    uint8_t *data;
    size_t size;
} input;

static const uint8_t *current;
static size_t current_size;
static char crash_path[512];

static void on_crash(int sig)
{
    FILE *f = fopen(crash_path, "wb");
    if (f) {
        fwrite(current, 1, current_size, f);
        fclose(f);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void run(const uint8_t *data, size_t size)
{
    current = data;
    current_size = size;
    LLVMFuzzerTestOneInput(data, size);
}

/* xorshift64*: the driver's own generator, independent of the code under
 * test. */
static uint64_t rng_state;

static uint64_t next_random(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

static size_t below(size_t n)
{
    return n ? (size_t)(next_random() % n) : 0;
}

/* Tokens that the parsers under test care about; inserting them reaches
 * deeper than random bytes do. */
static const char *const tokens[] = {
    "(",
    ")",
    "<<<",
    ">>>",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "\n",
    "*/",
    "/*",
    "//",
    "kevo:launch",
    "kevo:param",
    "require ",
    " in ",
    "..",
    "pow2(",
    "dim3(",
    "scratch ",
    "(i64)",
    "0x7fffffffffffffff",
    "9223372036854775807",
    "-",
    "*",
    "/",
    "%",
    "? 1 : ",
    "min(",
    "ceil_div(",
    "\"args\"",
    "\"shapes\"",
    ": ",
    "null",
    "1e308",
    "\\u0000",
    "zero",
};

static size_t mutate(uint8_t *buf, size_t size, const input *corpus,
                     size_t ncorpus)
{
    int rounds = 1 + (int)below(8);
    for (int r = 0; r < rounds; r++) {
        switch (below(6)) {
        case 0: /* flip a bit */
            if (size)
                buf[below(size)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: /* insert a random byte */
            if (size < FUZZ_MAX_INPUT) {
                size_t at = below(size + 1);
                memmove(buf + at + 1, buf + at, size - at);
                buf[at] = (uint8_t)next_random();
                size++;
            }
            break;
        case 2: /* delete a range */
            if (size) {
                size_t at = below(size), n = 1 + below(size - at);
                memmove(buf + at, buf + at + n, size - at - n);
                size -= n;
            }
            break;
        case 3: /* duplicate a range */
            if (size) {
                size_t at = below(size), n = 1 + below(size - at);
                if (size + n <= FUZZ_MAX_INPUT) {
                    size_t to = below(size + 1);
                    uint8_t tmp[FUZZ_MAX_INPUT];
                    memcpy(tmp, buf + at, n);
                    memmove(buf + to + n, buf + to, size - to);
                    memcpy(buf + to, tmp, n);
                    size += n;
                }
            }
            break;
        case 4: { /* insert a token */
            const char *t = tokens[below(sizeof tokens / sizeof tokens[0])];
            size_t n = strlen(t), at = below(size + 1);
            if (size + n <= FUZZ_MAX_INPUT) {
                memmove(buf + at + n, buf + at, size - at);
                memcpy(buf + at, t, n);
                size += n;
            }
            break;
        }
        default: /* splice in part of another corpus input */
            if (ncorpus) {
                const input *o = &corpus[below(ncorpus)];
                if (o->size) {
                    size_t at = below(o->size), n = 1 + below(o->size - at);
                    size_t to = below(size + 1);
                    if (size + n <= FUZZ_MAX_INPUT) {
                        memmove(buf + to + n, buf + to, size - to);
                        memcpy(buf + to, o->data + at, n);
                        size += n;
                    }
                }
            }
            break;
        }
    }
    return size;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t load_corpus(const char *dir, input **out)
{
    DIR *d = opendir(dir);
    if (!d)
        bail_out("cannot open corpus directory %s", dir);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        if (!names || !(names[n] = strdup(e->d_name)))
            bail_out("out of memory");
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    input *corpus = calloc(n ? n : 1, sizeof *corpus);
    if (!corpus)
        bail_out("out of memory");
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%.1000s/%.1000s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            bail_out("cannot open %s", path);
        corpus[i].data = malloc(FUZZ_MAX_INPUT);
        if (!corpus[i].data)
            bail_out("out of memory");
        corpus[i].size = fread(corpus[i].data, 1, FUZZ_MAX_INPUT, f);
        fclose(f);
        free(names[i]);
    }
    free(names);
    *out = corpus;
    return n;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strncmp(base, "lt-", 3) == 0)
        base += 3;
    const char *name = strncmp(base, "fuzz-", 5) == 0 ? base + 5 : base;

    char dir[1024];
    if (argc > 1)
        snprintf(dir, sizeof dir, "%s", argv[1]);
    else
        snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", tap_srcdir(),
                 name);
    snprintf(crash_path, sizeof crash_path, "fuzz-%.400s-crash.bin", name);
    signal(SIGSEGV, on_crash);
    signal(SIGABRT, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);

    input *corpus;
    size_t ncorpus = load_corpus(dir, &corpus);
    for (size_t i = 0; i < ncorpus; i++)
        run(corpus[i].data, corpus[i].size);
    ok(ncorpus > 0, "replayed %zu corpus inputs from %s", ncorpus, dir);

    const char *seed = getenv("KEVO_FUZZ_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : 1;
    if (rng_state == 0)
        rng_state = 1;
    const char *secs = getenv("KEVO_FUZZ_SECONDS");
    double budget = secs ? atof(secs) : 2.0;
    const char *vg = getenv("KEVO_VALGRIND");
    long max_runs = vg && strcmp(vg, "1") == 0 ? 200 : -1;

    uint8_t *buf = malloc(FUZZ_MAX_INPUT);
    if (!buf)
        bail_out("out of memory");
    long runs = 0;
    double start = now();
    while (ncorpus > 0 &&
           (max_runs >= 0 ? runs < max_runs : now() - start < budget)) {
        const input *in = &corpus[below(ncorpus)];
        memcpy(buf, in->data, in->size);
        size_t size = mutate(buf, in->size, corpus, ncorpus);
        run(buf, size);
        runs++;
    }
    ok(runs > 0, "%ld mutated inputs (KEVO_FUZZ_SEED=%s)", runs,
       seed ? seed : "1");
    free(buf);
    for (size_t i = 0; i < ncorpus; i++)
        free(corpus[i].data);
    free(corpus);
    return done_testing();
}
