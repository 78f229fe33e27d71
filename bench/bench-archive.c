/*
 * bench-archive.c: how fast the MAP-Elites archive inserts and selects on
 * one core, measured against a baseline taken in the same run: drawing the
 * same random inputs and computing their cell, which every insert must do
 * anyway. bench/README.md explains each figure.
 *
 * Usage: bench-archive [scale]   (scale multiplies the operation counts;
 * the default 1 runs for a few seconds)
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <kevo.h>

#include "bench_util.h"

#define SIDE 100
#define GOAL 1e6
#define SEED 20240601

static const char *const source =
    "// kevo:param\n"
    "//   BLOCK in pow2(64..1024) = 256\n"
    "/* kevo:launch\n"
    " *   scale<<<ceil_div(n, BLOCK), BLOCK>>>(x, n)\n"
    " */\n"
    "extern \"C\" __global__ void scale(float *x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * BLOCK + threadIdx.x;\n"
    "    if (i < n)\n"
    "        x[i] *= 2.0f;\n"
    "}\n";

typedef struct row {
    const char *name;
    double ops;
    double seconds;
} row;

static void die(const char *what, const kevo_error *err)
{
    fprintf(stderr, "bench-archive: %s: %s\n", what,
            err && err->text[0] ? err->text : "failed");
    exit(1);
}

static kevo_archive *new_grid(void)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_archive *a = kevo_archive_new();
    if (!a || kevo_archive_add_dimension(a, "x", SIDE, 0, 1, &err) ||
        kevo_archive_add_dimension(a, "y", SIDE, 0, 1, &err))
        die("cannot make the grid", &err);
    return a;
}

/* The inputs of one insert: a descriptor and a fitness, all uniform. */
static inline void draw(kevo_rng *rng, double d[2], double *fitness)
{
    d[0] = kevo_rng_uniform(rng);
    d[1] = kevo_rng_uniform(rng);
    *fitness = kevo_rng_uniform(rng);
}

/* Draws inputs and computes their cell n times. The sum keeps the compiler
 * from dropping the work. */
static double run_baseline(kevo_archive *a, kevo_rng *rng, size_t n,
                           size_t *sink)
{
    double d[2], f, t0 = bench_now();
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        size_t cell = 0;
        draw(rng, d, &f);
        kevo_archive_cell_of(a, d, &cell, NULL);
        sum += cell + (f > 0.5);
    }
    *sink += sum;
    return bench_now() - t0;
}

static void insert_one(kevo_archive *a, const kevo_candidate *c, kevo_rng *rng,
                       size_t *accepted)
{
    double d[2], f;
    kevo_insert_outcome o;
    kevo_error err;
    draw(rng, d, &f);
    if (kevo_archive_insert(a, c, f, d, &o, NULL, NULL) != KEVO_OK) {
        kevo_error_init(&err);
        kevo_archive_insert(a, c, f, d, &o, NULL, &err);
        die("insert", &err);
    }
    *accepted += o != KEVO_INSERT_REJECTED;
}

static double run_inserts(kevo_archive *a, const kevo_candidate *c,
                          kevo_rng *rng, size_t n, size_t *accepted)
{
    double t0 = bench_now();
    for (size_t i = 0; i < n; i++)
        insert_one(a, c, rng, accepted);
    return bench_now() - t0;
}

/* Every insert is fitter than all before it, so each one copies the
 * candidate and frees the elite it replaces. */
static double run_improving(kevo_archive *a, const kevo_candidate *c,
                            kevo_rng *rng, size_t n)
{
    double d[2], f, t0 = bench_now();
    kevo_error err;
    kevo_error_init(&err);
    for (size_t i = 0; i < n; i++) {
        draw(rng, d, &f);
        if (kevo_archive_insert(a, c, (double)i + f, d, NULL, NULL, &err))
            die("insert", &err);
    }
    return bench_now() - t0;
}

/* n selects with rule how at temperature temp, each followed by an insert
 * when interleave is set and by a credit to the parent when credit is
 * set. */
static double run_selects(kevo_archive *a, const kevo_candidate *c,
                          kevo_rng *rng, kevo_selection how, double temp,
                          size_t n, int interleave, int credit, size_t *sink)
{
    kevo_error err;
    kevo_error_init(&err);
    size_t accepted = 0, sum = 0;
    double t0 = bench_now();
    for (size_t i = 0; i < n; i++) {
        size_t cell;
        if (kevo_archive_select(a, rng, how, temp, &cell, &err) != KEVO_OK)
            die("select", &err);
        sum += cell;
        if (interleave)
            insert_one(a, c, rng, &accepted);
        if (credit)
            kevo_archive_credit(a, cell, 0, (i & 3) == 0);
    }
    double t = bench_now() - t0;
    *sink += sum + accepted;
    return t;
}

/* The loop of a search that mixes the rules: each step selects with the
 * next of uniform, softmax and curiosity, inserts a child and credits the
 * parent. */
static double run_mixed(kevo_archive *a, const kevo_candidate *c, kevo_rng *rng,
                        size_t n, size_t *sink)
{
    static const kevo_selection how[3] = {
        KEVO_SELECT_UNIFORM, KEVO_SELECT_SOFTMAX, KEVO_SELECT_CURIOSITY};
    static const double temp[3] = {0, 0.1, 1};
    kevo_error err;
    kevo_error_init(&err);
    size_t accepted = 0, sum = 0;
    double t0 = bench_now();
    for (size_t i = 0; i < n; i++) {
        size_t cell;
        if (kevo_archive_select(a, rng, how[i % 3], temp[i % 3], &cell, &err) !=
            KEVO_OK)
            die("select", &err);
        sum += cell;
        insert_one(a, c, rng, &accepted);
        kevo_archive_credit(a, cell, 0, (i & 3) == 0);
    }
    double t = bench_now() - t0;
    *sink += sum + accepted;
    return t;
}

static void print_row(const row *r, double base_rate)
{
    double rate = r->ops / r->seconds;
    printf("%-38s %10.0f %9.1f %12.0f %9.3f\n", r->name, r->ops,
           1e9 * r->seconds / r->ops, rate, rate / base_rate);
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1;
    if (!(scale > 0)) {
        fprintf(stderr, "usage: bench-archive [scale > 0]\n");
        return 2;
    }
    size_t n_ins = (size_t)(4e6 * scale), n_imp = (size_t)(3e5 * scale),
           n_sel = (size_t)(2e6 * scale);
    int cpu = bench_pin_to_one_cpu();
    kevo_error err;
    kevo_error_init(&err);
    kevo_candidate *c = NULL;
    if (kevo_candidate_new(source, "scale.cu", &c, &err) != KEVO_OK)
        die("cannot make the candidate", &err);
    kevo_rng *rng = kevo_rng_new(SEED, "bench");
    if (!rng)
        die("cannot make the random stream", NULL);
    size_t sink = 0, accepted = 0;
    row rows[16];
    size_t nrows = 0;
    char name_ins[64];

    kevo_archive *a = new_grid();
    /* Warm up caches and the branch predictor, then measure. */
    run_baseline(a, rng, n_ins / 10, &sink);
    double base = run_baseline(a, rng, n_ins, &sink);
    rows[nrows++] = (row){"baseline: inputs + cell index", (double)n_ins, base};

    double t = run_inserts(a, c, rng, n_ins, &accepted);
    snprintf(name_ins, sizeof name_ins, "insert, random (%.1f%% rejected)",
             100.0 * (1 - (double)accepted / (double)n_ins));
    rows[nrows++] = (row){name_ins, (double)n_ins, t};
    double insert_rate = (double)n_ins / t;
    size_t filled = kevo_archive_size(a);

    /* The reject path alone: a grid full of elites fitter than any input. */
    kevo_archive *b = new_grid();
    for (size_t x = 0; x < SIDE; x++) {
        for (size_t y = 0; y < SIDE; y++) {
            double d[2] = {((double)x + 0.5) / SIDE, ((double)y + 0.5) / SIDE};
            if (kevo_archive_insert(b, c, 2, d, NULL, NULL, &err) != KEVO_OK)
                die("insert", &err);
        }
    }
    size_t none = 0;
    t = run_inserts(b, c, rng, n_ins, &none);
    rows[nrows++] =
        (row){"insert, rejected (all elites fitter)", (double)n_ins, t};
    kevo_archive_free(b);

    b = new_grid();
    t = run_improving(b, c, rng, n_imp);
    rows[nrows++] =
        (row){"insert, improving (every one enters)", (double)n_imp, t};
    kevo_archive_free(b);

    /* Selection on the full grid of the random inserts. Fitness lies in
     * [0, 1), so softmax runs at 0.1 (weights from 1 down to e^-10);
     * curiosity moves in steps of 1 and 0.5, so it runs at 1. */
    static const struct {
        kevo_selection how;
        double temp;
        const char *together, *alone;
    } rules[] = {
        {KEVO_SELECT_UNIFORM, 0, "select uniform + insert",
         "select uniform alone"},
        {KEVO_SELECT_SOFTMAX, 0.1, "select softmax + insert",
         "select softmax alone"},
        {KEVO_SELECT_CURIOSITY, 1, "select curiosity + insert",
         "select curiosity alone"},
    };
    for (size_t i = 0; i < 3; i++) {
        t = run_selects(a, c, rng, rules[i].how, rules[i].temp, n_sel, 1, 0,
                        &sink);
        rows[nrows++] = (row){rules[i].together, (double)n_sel, t};
    }
    t = run_selects(a, c, rng, KEVO_SELECT_CURIOSITY, 1, n_sel, 1, 1, &sink);
    rows[nrows++] =
        (row){"select curiosity + insert + credit", (double)n_sel, t};
    t = run_mixed(a, c, rng, n_sel, &sink);
    rows[nrows++] = (row){"select mixed + insert + credit", (double)n_sel, t};
    for (size_t i = 0; i < 3; i++) {
        t = run_selects(a, c, rng, rules[i].how, rules[i].temp, n_sel, 0, 0,
                        &sink);
        rows[nrows++] = (row){rules[i].alone, (double)n_sel, t};
    }

    printf("kevo archive benchmark: %d x %d grid (%zu cells, %zu filled), "
           "one thread",
           SIDE, SIDE, kevo_archive_cell_count(a), filled);
    if (cpu >= 0)
        printf(", pinned to CPU %d", cpu);
    printf("\n");
    printf("%-38s %10s %9s %12s %9s\n", "operation", "ops", "ns/op", "ops/s",
           "vs base");
    double base_rate = (double)n_ins / base;
    for (size_t i = 0; i < nrows; i++)
        print_row(&rows[i], base_rate);
    printf("verdict: %.2fM random inserts/s into %zu cells: %s the goal of "
           "%.0fM/s (%.0fx)\n",
           insert_rate / 1e6, kevo_archive_cell_count(a),
           insert_rate >= GOAL ? "meets" : "MISSES", GOAL / 1e6,
           insert_rate / GOAL);
    if (sink == 42)
        printf("\n");
    kevo_archive_free(a);
    kevo_candidate_free(c);
    kevo_rng_free(rng);
    return 0;
}
