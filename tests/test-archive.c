/*
 * test-archive.c: the MAP-Elites archive: dimensions and binning, inserts,
 * iteration, statistics, the selection rules, inspirations, credit, and
 * the archive as JSON.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kevo.h>

#include "archive/archive_notes.h"
#include "tap.h"

static const char *const source = "/* kevo:launch\n"
                                  " *   k<<<1, 32>>>(x)\n"
                                  " */\n"
                                  "extern \"C\" __global__ void k(float *x)\n"
                                  "{\n"
                                  "}\n";

/* A fresh candidate with id. */
static kevo_candidate *cand_with_id(uint64_t id)
{
    kevo_candidate *c = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_candidate_new(source, "k.cu", &c, &err) != KEVO_OK)
        bail_out("kevo_candidate_new: %s", err.text);
    kevo_candidate_set_id(c, id);
    return c;
}

/* An archive with "x": 4 bins over [0, 1) and "y": edges 64, 128, 256,
 * 512 (5 bins): 20 cells. */
static kevo_archive *grid(void)
{
    static const double edges[] = {64, 128, 256, 512};
    kevo_archive *a = kevo_archive_new();
    if (!a || kevo_archive_add_dimension(a, "x", 4, 0, 1, NULL) != KEVO_OK ||
        kevo_archive_add_dimension_edges(a, "y", edges, 4, NULL) != KEVO_OK)
        bail_out("cannot make the test grid");
    return a;
}

/* Inserts a candidate with id at the cell of (x, y); returns the outcome. */
static kevo_insert_outcome put(kevo_archive *a, uint64_t id, double fitness,
                               double x, double y)
{
    double d[2] = {x, y};
    kevo_insert_outcome o;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_archive_insert_adopt(a, cand_with_id(id), fitness, d, &o, NULL,
                                  &err) != KEVO_OK)
        bail_out("insert: %s", err.text);
    return o;
}

/* An archive of one dimension "x" with n bins over [0, n); elite i (in
 * cell i) has id i + 1 and fitness f[i]. */
static kevo_archive *line(const double *f, size_t n)
{
    kevo_archive *a = kevo_archive_new();
    if (!a || kevo_archive_add_dimension(a, "x", n, 0, (double)n, NULL))
        bail_out("cannot make the line");
    for (size_t i = 0; i < n; i++) {
        double x = (double)i + 0.5;
        if (kevo_archive_insert_adopt(a, cand_with_id(i + 1), f[i], &x, NULL,
                                      NULL, NULL) != KEVO_OK)
            bail_out("insert into the line");
    }
    return a;
}

static size_t cell_of2(kevo_archive *a, double x, double y)
{
    double d[2] = {x, y};
    size_t cell = KEVO_NO_CELL;
    kevo_archive_cell_of(a, d, &cell, NULL);
    return cell;
}

/* Checks that count is within five binomial standard deviations of n * p. */
static void is_frequency(size_t count, size_t n, double p, const char *what)
{
    double sd = sqrt((double)n * p * (1 - p));
    double want = (double)n * p;
    ok(fabs((double)count - want) <= 5 * sd + 1,
       "%s: %zu of %zu, expected %.1f +- %.1f", what, count, n, want, 5 * sd);
}

static void test_dimensions(void)
{
    kevo_error err;
    kevo_archive *a = kevo_archive_new();
    ok(a != NULL, "new archive");
    is_uint(kevo_archive_dimension_count(a), 0, "no dimensions yet");
    is_uint(kevo_archive_cell_count(a), 1, "one cell with no dimensions");
    size_t cell = 99;
    is_int(kevo_archive_cell_of(a, NULL, &cell, NULL), KEVO_OK,
           "cell_of with no dimensions");
    is_uint(cell, 0, "the only cell is 0");
    kevo_archive_free(a);

    a = grid();
    is_uint(kevo_archive_dimension_count(a), 2, "two dimensions");
    is_str(kevo_archive_dimension_name(a, 0), "x", "name of dimension 0");
    is_str(kevo_archive_dimension_name(a, 1), "y", "name of dimension 1");
    ok(kevo_archive_dimension_name(a, 2) == NULL, "no dimension 2");
    is_uint(kevo_archive_dimension_bins(a, 0), 4, "x has 4 bins");
    is_uint(kevo_archive_dimension_bins(a, 1), 5, "4 edges make 5 bins");
    is_uint(kevo_archive_dimension_bins(a, 2), 0, "no bins past the last");
    is_uint(kevo_archive_cell_count(a), 20, "4 x 5 cells");

    /* Equal bins: edges at 0.25, 0.5, 0.75; clamped outside [0, 1). */
    static const struct {
        double x;
        size_t bin;
    } xs[] = {{-1, 0},       {-INFINITY, 0}, {0, 0},     {0.2499, 0},
              {0.25, 1},     {0.49, 1},      {0.5, 2},   {0.75, 3},
              {0.999999, 3}, {1, 3},         {1e300, 3}, {INFINITY, 3}};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        is_uint(cell_of2(a, xs[i].x, 100), xs[i].bin * 5 + 1,
                "x = %g falls in bin %zu", xs[i].x, xs[i].bin);
    /* Edges: bin k holds edges[k-1] <= v < edges[k]. */
    static const struct {
        double y;
        size_t bin;
    } ys[] = {{-1e9, 0}, {63.99, 0}, {64, 1},       {127, 1},
              {128, 2},  {255.5, 2}, {256, 3},      {511, 3},
              {512, 4},  {1e9, 4},   {INFINITY, 4}, {-INFINITY, 0}};
    for (size_t i = 0; i < sizeof ys / sizeof ys[0]; i++)
        is_uint(cell_of2(a, 0.6, ys[i].y), 2 * 5 + ys[i].bin,
                "y = %g falls in bin %zu", ys[i].y, ys[i].bin);

    double nan_d[2] = {0.5, NAN};
    kevo_error_init(&err);
    is_int(kevo_archive_cell_of(a, nan_d, &cell, &err), KEVO_EINVAL,
           "a NaN descriptor has no cell");
    like_str(err.text, "descriptor value 1 (dimension \"y\") is NaN",
             "the message names the dimension");
    kevo_archive_free(a);

    /* Ten equal bins over [-5, 5): each unit interval is one bin. */
    a = kevo_archive_new();
    kevo_archive_add_dimension(a, "z", 10, -5, 5, NULL);
    int all = 1;
    for (int k = 0; k < 10; k++) {
        double lo = -5 + k, mid = -4.5 + k;
        size_t c1 = 99, c2 = 99;
        kevo_archive_cell_of(a, &lo, &c1, NULL);
        kevo_archive_cell_of(a, &mid, &c2, NULL);
        if (c1 != (size_t)k || c2 != (size_t)k) {
            diag("z = %g -> %zu, z = %g -> %zu, expected %d", lo, c1, mid, c2,
                 k);
            all = 0;
        }
    }
    ok(all, "ten equal-width bins over [-5, 5)");
    kevo_archive_free(a);
}

static void test_dimension_errors(void)
{
    static const double up[] = {1, 2, 3}, flat[] = {1, 2, 2}, down[] = {3, 2},
                        holes[] = {1, NAN};
    kevo_error err;
    kevo_archive *a = kevo_archive_new();

#define DIM_ERR(call, code, msg, name)                                         \
    do {                                                                       \
        kevo_error_init(&err);                                                 \
        is_int(call, code, name);                                              \
        like_str(err.text, msg, name ": message");                             \
    } while (0)

    DIM_ERR(kevo_archive_add_dimension(a, "x", 0, 0, 1, &err), KEVO_EINVAL,
            "dimension \"x\": 0 bins", "0 bins");
    DIM_ERR(kevo_archive_add_dimension(a, "x", 4, 1, 1, &err), KEVO_EINVAL,
            "lo 1 must be below hi 1", "lo == hi");
    DIM_ERR(kevo_archive_add_dimension(a, "x", 4, 2, 1, &err), KEVO_EINVAL,
            "lo 2 must be below hi 1", "lo > hi");
    DIM_ERR(kevo_archive_add_dimension(a, "x", 4, NAN, 1, &err), KEVO_EINVAL,
            "must be finite", "NaN bound");
    DIM_ERR(kevo_archive_add_dimension(a, "x", 4, 0, INFINITY, &err),
            KEVO_EINVAL, "must be finite", "infinite bound");
    DIM_ERR(kevo_archive_add_dimension(a, "x", 4, -1e308, 1e308, &err),
            KEVO_EINVAL, "cannot be told apart", "a range wider than a double");
    DIM_ERR(kevo_archive_add_dimension(a, NULL, 4, 0, 1, &err), KEVO_EINVAL,
            "non-empty name", "NULL name");
    DIM_ERR(kevo_archive_add_dimension(a, "", 4, 0, 1, &err), KEVO_EINVAL,
            "non-empty name", "empty name");
    DIM_ERR(kevo_archive_add_dimension_edges(a, "e", flat, 3, &err),
            KEVO_EINVAL, "edge 2 (2) is not above edge 1 (2)", "equal edges");
    DIM_ERR(kevo_archive_add_dimension_edges(a, "e", down, 2, &err),
            KEVO_EINVAL, "strictly increasing", "decreasing edges");
    DIM_ERR(kevo_archive_add_dimension_edges(a, "e", holes, 2, &err),
            KEVO_EINVAL, "edge 1 is nan; edges must be finite", "NaN edge");
    DIM_ERR(kevo_archive_add_dimension_edges(a, "e", NULL, 2, &err),
            KEVO_EINVAL, "the edges are required", "NULL edges");
    is_uint(kevo_archive_dimension_count(a), 0, "failures add nothing");

    is_int(kevo_archive_add_dimension(a, "x", 4096, 0, 1, NULL), KEVO_OK,
           "4096 bins");
    DIM_ERR(kevo_archive_add_dimension(a, "x", 4, 0, 1, &err), KEVO_EEXIST,
            "already has a dimension of that name", "a duplicate name");
    DIM_ERR(kevo_archive_add_dimension_edges(a, "x", up, 3, &err), KEVO_EEXIST,
            "already has a dimension", "a duplicate name, with edges");
    is_int(kevo_archive_add_dimension_edges(a, "e", up, 3, NULL), KEVO_OK,
           "4096 x 4 cells");
    is_uint(kevo_archive_cell_count(a), (size_t)1 << 14, "2^14 cells");
    is_int(kevo_archive_add_dimension(a, "f", 1024, 0, 1, NULL), KEVO_OK,
           "2^24 cells is the limit, and allowed");
    is_uint(kevo_archive_cell_count(a), KEVO_ARCHIVE_CELLS_MAX, "2^24 cells");
    DIM_ERR(kevo_archive_add_dimension(a, "g", 2, 0, 1, &err), KEVO_ELIMIT,
            "over the limit of 16777216", "one cell too many");
    DIM_ERR(kevo_archive_add_dimension_edges(a, "g", up, 1, &err), KEVO_ELIMIT,
            "over the limit", "one cell too many, with edges");
    kevo_archive_free(a);

    a = grid();
    put(a, 1, 1.0, 0.1, 100);
    DIM_ERR(kevo_archive_add_dimension(a, "z", 2, 0, 1, &err), KEVO_ESTATE,
            "add every dimension before the first insert", "after an insert");
    DIM_ERR(kevo_archive_add_dimension_edges(a, "z", up, 3, &err), KEVO_ESTATE,
            "already holds 1 elite", "edges after an insert");
    kevo_archive_free(a);

    /* A failed insert leaves the archive empty, so dimensions may follow. */
    a = kevo_archive_new();
    kevo_candidate *c = cand_with_id(1);
    is_int(kevo_archive_insert(a, c, NAN, NULL, NULL, NULL, NULL), KEVO_EINVAL,
           "an insert that fails");
    is_int(kevo_archive_add_dimension(a, "x", 3, 0, 3, NULL), KEVO_OK,
           "a dimension after a failed insert");
    double x = 2.5;
    size_t cell;
    is_int(kevo_archive_insert(a, c, 1, &x, NULL, &cell, NULL), KEVO_OK,
           "then an insert");
    is_uint(cell, 2, "into the new grid");
    kevo_candidate_free(c);
    kevo_archive_free(a);
#undef DIM_ERR
}

static void test_insert(void)
{
    kevo_error err;
    kevo_insert_outcome o;
    size_t cell = 0;
    kevo_archive *a = grid();
    kevo_candidate *c = cand_with_id(7);
    double d[2] = {0.3, 100};

    is_int(kevo_archive_insert(a, c, 1.5, d, &o, &cell, NULL), KEVO_OK,
           "insert into an empty cell");
    is_int(o, KEVO_INSERT_NEW_CELL, "outcome: new cell");
    is_uint(cell, 1 * 5 + 1, "cell (1, 1)");
    const kevo_candidate *elite = kevo_archive_candidate(a, cell);
    ok(elite == c, "the archive keeps a reference, not a copy");
    is_uint(kevo_candidate_id(elite), 7, "the elite has the id");
    is_str(kevo_candidate_source(elite), source, "and the source");
    is_int(kevo_candidate_set_id(c, 9), KEVO_ESTATE,
           "the shared candidate cannot change");
    is_uint(kevo_candidate_id(elite), 7, "the elite keeps its id");
    is_double(kevo_archive_fitness(a, cell), 1.5, 0, "fitness stored");
    double back[2] = {0, 0};
    is_int(kevo_archive_descriptor(a, cell, back), KEVO_OK, "descriptor");
    ok(back[0] == 0.3 && back[1] == 100, "descriptor stored as given");

    is_int(kevo_archive_insert(a, c, 1.5, d, &o, &cell, NULL), KEVO_OK,
           "an equally fit candidate");
    is_int(o, KEVO_INSERT_REJECTED, "is rejected");
    is_uint(cell, 6, "cell reported on rejection");
    d[0] = 0.4; /* same cell */
    is_int(kevo_archive_insert(a, c, 1.0, d, &o, NULL, NULL), KEVO_OK,
           "a less fit candidate");
    is_int(o, KEVO_INSERT_REJECTED, "is rejected");
    ok(kevo_archive_candidate(a, 6) == elite, "the elite did not change");
    kevo_archive_descriptor(a, 6, back);
    ok(back[0] == 0.3, "nor its descriptor");

    kevo_candidate *seven = c;
    c = kevo_candidate_copy(seven);
    kevo_candidate_set_id(c, 8);
    is_int(kevo_archive_insert(a, c, 2.0, d, &o, &cell, NULL), KEVO_OK,
           "a fitter candidate");
    is_int(kevo_candidate_set_id(seven, 9), KEVO_OK,
           "the replaced elite's reference is dropped: its candidate is no "
           "longer shared");
    kevo_candidate_free(seven);
    is_int(o, KEVO_INSERT_REPLACED, "replaces the elite");
    is_uint(kevo_candidate_id(kevo_archive_candidate(a, 6)), 8, "the new one");
    kevo_archive_descriptor(a, 6, back);
    ok(back[0] == 0.4, "with its descriptor");
    is_double(kevo_archive_fitness(a, 6), 2.0, 0, "and fitness");
    is_uint(kevo_archive_size(a), 1, "still one elite");

    o = KEVO_INSERT_NEW_CELL;
    kevo_error_init(&err);
    is_int(kevo_archive_insert(a, c, NAN, d, &o, &cell, &err), KEVO_EINVAL,
           "NaN fitness");
    like_str(err.text, "fitness nan is not a finite number", "NaN message");
    is_int(o, KEVO_INSERT_REJECTED, "outcome on error");
    is_uint(cell, KEVO_NO_CELL, "no cell on error");
    kevo_error_init(&err);
    is_int(kevo_archive_insert(a, c, -INFINITY, d, NULL, NULL, &err),
           KEVO_EINVAL, "-inf fitness");
    like_str(err.text, "fitness -inf is not a finite number", "-inf message");
    kevo_error_init(&err);
    is_int(kevo_archive_insert(a, c, INFINITY, d, NULL, NULL, &err),
           KEVO_EINVAL, "+inf fitness");
    double bad[2] = {NAN, 100};
    kevo_error_init(&err);
    is_int(kevo_archive_insert(a, c, 1, bad, NULL, NULL, &err), KEVO_EINVAL,
           "NaN descriptor");
    like_str(err.text, "descriptor value 0 (dimension \"x\") is NaN",
             "NaN descriptor message");
    kevo_error_init(&err);
    is_int(kevo_archive_insert(a, c, 1, NULL, NULL, NULL, &err), KEVO_EINVAL,
           "NULL descriptor");
    like_str(err.text, "needs 2 value(s)", "NULL descriptor message");
    is_int(kevo_archive_insert(a, NULL, 1, d, NULL, NULL, NULL), KEVO_EINVAL,
           "NULL candidate");

    kevo_archive_stats st = {.size = sizeof st};
    kevo_archive_get_stats(a, &st);
    is_uint(st.inserts, 4, "four inserts were judged (errors are not)");
    is_uint(st.accepted, 2, "two entered");
    kevo_candidate_free(c);

    /* insert_adopt: the archive owns the candidate whatever happens; valgrind
     * shows that nothing leaks. */
    kevo_candidate *mine = cand_with_id(20);
    d[0] = 0.9;
    d[1] = 600;
    is_int(kevo_archive_insert_adopt(a, mine, 5, d, &o, &cell, NULL), KEVO_OK,
           "insert_adopt into an empty cell");
    is_int(o, KEVO_INSERT_NEW_CELL, "new cell");
    ok(kevo_archive_candidate(a, cell) == mine, "the archive keeps it as is");
    is_int(kevo_archive_insert_adopt(a, cand_with_id(21), 5, d, &o, NULL, NULL),
           KEVO_OK, "insert_adopt of an equal one");
    is_int(o, KEVO_INSERT_REJECTED, "rejected, and freed");
    is_int(kevo_archive_insert_adopt(a, cand_with_id(22), 1, d, &o, NULL, NULL),
           KEVO_OK, "insert_adopt of a worse one");
    is_int(o, KEVO_INSERT_REJECTED, "rejected, and freed");
    is_int(
        kevo_archive_insert_adopt(a, cand_with_id(23), NAN, d, &o, NULL, NULL),
        KEVO_EINVAL, "insert_adopt with NaN fitness fails, and frees");
    is_int(
        kevo_archive_insert_adopt(a, cand_with_id(24), 1, bad, &o, NULL, NULL),
        KEVO_EINVAL, "insert_adopt with a NaN descriptor fails, and frees");
    is_int(kevo_archive_insert_adopt(a, cand_with_id(25), 6, d, &o, NULL, NULL),
           KEVO_OK, "insert_adopt of a better one");
    is_int(o, KEVO_INSERT_REPLACED, "replaces (and frees the old elite)");
    is_int(
        kevo_archive_insert_adopt(NULL, cand_with_id(26), 6, d, &o, NULL, NULL),
        KEVO_EINVAL, "insert_adopt into no archive frees the candidate");
    kevo_archive_free(a);

    /* With no dimensions the archive is one cell. */
    a = kevo_archive_new();
    is_int(
        kevo_archive_insert_adopt(a, cand_with_id(1), 1, NULL, &o, &cell, NULL),
        KEVO_OK, "insert with no dimensions");
    ok(o == KEVO_INSERT_NEW_CELL && cell == 0, "into cell 0");
    is_int(kevo_archive_descriptor(a, 0, NULL), KEVO_OK, "an empty descriptor");
    kevo_archive_free(a);
}

static void test_iteration(void)
{
    kevo_archive *a = grid();
    is_uint(kevo_archive_first(a), KEVO_NO_CELL, "empty: no first cell");
    is_uint(kevo_archive_next(a, 0), KEVO_NO_CELL, "empty: no next cell");
    ok(isnan(kevo_archive_fitness(a, 3)), "empty cell: NaN fitness");
    ok(kevo_archive_candidate(a, 3) == NULL, "empty cell: no candidate");
    is_double(kevo_archive_curiosity(a, 3), 0, 0, "empty cell: no curiosity");
    double d[2];
    is_int(kevo_archive_descriptor(a, 3, d), KEVO_ENOENT,
           "empty cell: no descriptor");

    /* Filled out of order: cells 19, 0, 7, 12. */
    put(a, 1, 1, 0.9, 1000);
    put(a, 2, 2, 0.1, 0);
    put(a, 3, 3, 0.3, 300);
    put(a, 4, 4, 0.6, 200);
    size_t want[] = {0, 8, 12, 19};
    size_t got[8] = {0}, n = 0;
    for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL && n < 8;
         c = kevo_archive_next(a, c))
        got[n++] = c;
    is_uint(n, 4, "four elites visited");
    ok(n == 4 && memcmp(got, want, sizeof want) == 0,
       "in ascending cell order: %zu %zu %zu %zu", got[0], got[1], got[2],
       got[3]);
    is_uint(kevo_archive_next(a, 9), 12, "next after an empty cell");
    is_uint(kevo_archive_next(a, 19), KEVO_NO_CELL, "none after the last");
    is_uint(kevo_archive_next(a, KEVO_NO_CELL), KEVO_NO_CELL,
            "none after KEVO_NO_CELL");
    is_uint(kevo_archive_next(a, 1000), KEVO_NO_CELL, "none past the grid");
    ok(kevo_archive_candidate(a, 1000) == NULL, "no candidate past the grid");
    ok(isnan(kevo_archive_fitness(a, 1000)), "no fitness past the grid");
    is_int(kevo_archive_descriptor(a, 1000, d), KEVO_ENOENT,
           "no descriptor past the grid");
    kevo_archive_free(a);
}

static void test_stats(void)
{
    kevo_archive_stats st;
    memset(&st, 0, sizeof st);
    kevo_archive *a = grid();
    is_int(kevo_archive_get_stats(a, &st), KEVO_OK, "stats of an empty one");
    is_uint(st.size, sizeof st, "size set");
    is_uint(st.cells, 20, "cells");
    is_uint(st.filled, 0, "none filled");
    is_double(st.coverage, 0, 0, "coverage 0");
    is_double(st.qd_score, 0, 0, "QD score 0");
    ok(isnan(st.best_fitness), "no best fitness");
    is_uint(st.best_cell, KEVO_NO_CELL, "no best cell");

    put(a, 1, 2.5, 0.1, 0);
    put(a, 2, -1.0, 0.3, 300);
    put(a, 3, 4.0, 0.6, 200);
    put(a, 4, 4.0, 0.1, 200); /* as fit as the best, in a lower cell */
    put(a, 5, 1.0, 0.1, 0);   /* rejected */
    memset(&st, 0, sizeof st);
    is_int(kevo_archive_get_stats(a, &st), KEVO_OK, "stats");
    is_uint(st.filled, 4, "four filled");
    is_double(st.coverage, 0.2, 1e-15, "coverage 4 / 20");
    is_double(st.qd_score, 2.5 - 1.0 + 4.0 + 4.0, 1e-12, "QD score");
    is_double(st.best_fitness, 4.0, 0, "best fitness");
    is_uint(st.best_cell, 0 * 5 + 2, "ties go to the lower cell");
    is_uint(st.inserts, 5, "five inserts");
    is_uint(st.accepted, 4, "four accepted");

    st.size = 3;
    is_int(kevo_archive_get_stats(a, &st), KEVO_EINVAL, "a wrong size");
    is_int(kevo_archive_get_stats(a, NULL), KEVO_EINVAL, "NULL stats");
    kevo_archive_free(a);
}

static void test_select_errors(void)
{
    kevo_error err;
    size_t cell;
    kevo_rng *rng = kevo_rng_new(1, "select");
    kevo_archive *a = grid();
    static const kevo_selection rules[] = {
        KEVO_SELECT_UNIFORM, KEVO_SELECT_SOFTMAX, KEVO_SELECT_CURIOSITY};
    for (size_t i = 0; i < 3; i++) {
        kevo_error_init(&err);
        is_int(kevo_archive_select(a, rng, rules[i], 1, &cell, &err),
               KEVO_ENOENT, "rule %d: an empty archive", (int)rules[i]);
        like_str(err.text, "the archive is empty", "rule %d: message",
                 (int)rules[i]);
    }
    put(a, 1, 1, 0.1, 0);
    kevo_error_init(&err);
    is_int(kevo_archive_select(a, rng, (kevo_selection)7, 1, &cell, &err),
           KEVO_EINVAL, "an unknown rule");
    like_str(err.text, "unknown selection rule 7", "message");
    static const double temps[] = {0, -1, NAN, INFINITY};
    for (size_t i = 0; i < 4; i++) {
        kevo_error_init(&err);
        is_int(kevo_archive_select(a, rng, KEVO_SELECT_SOFTMAX, temps[i], &cell,
                                   &err),
               KEVO_EINVAL, "softmax at temperature %g", temps[i]);
        like_str(err.text, "must be a finite number above 0", "message");
        is_int(kevo_archive_select(a, rng, KEVO_SELECT_CURIOSITY, temps[i],
                                   &cell, NULL),
               KEVO_EINVAL, "curiosity at temperature %g", temps[i]);
    }
    is_int(kevo_archive_select(a, rng, KEVO_SELECT_UNIFORM, 0, &cell, NULL),
           KEVO_OK, "uniform ignores the temperature");
    is_uint(cell, 0, "the only elite");
    is_int(kevo_archive_select(a, NULL, KEVO_SELECT_UNIFORM, 0, &cell, NULL),
           KEVO_EINVAL, "no rng");
    kevo_archive_free(a);
    kevo_rng_free(rng);
}

static void test_select_uniform(void)
{
    static const double f[] = {5, 1, 3, 2};
    kevo_archive *a = line(f, 4);
    kevo_rng *rng = kevo_rng_new(42, "uniform");
    size_t count[4] = {0}, n = 40000;
    for (size_t i = 0; i < n; i++) {
        size_t cell = KEVO_NO_CELL;
        kevo_archive_select(a, rng, KEVO_SELECT_UNIFORM, 1, &cell, NULL);
        if (cell < 4)
            count[cell]++;
    }
    is_uint(count[0] + count[1] + count[2] + count[3], n, "every pick valid");
    for (size_t i = 0; i < 4; i++)
        is_frequency(count[i], n, 0.25, "uniform: elite");
    kevo_archive_free(a);
    kevo_rng_free(rng);
}

static void test_select_softmax(void)
{
    /* Weights exp(f / 0.5): 1, e^2, e^4 (fitness 0, 1, 2). */
    static const double f[] = {0, 1, 2};
    kevo_archive *a = line(f, 3);
    kevo_rng *rng = kevo_rng_new(7, "softmax");
    size_t count[3] = {0}, n = 60000;
    for (size_t i = 0; i < n; i++) {
        size_t cell = KEVO_NO_CELL;
        kevo_archive_select(a, rng, KEVO_SELECT_SOFTMAX, 0.5, &cell, NULL);
        if (cell < 3)
            count[cell]++;
    }
    double w[3] = {1, exp(2), exp(4)}, sum = w[0] + w[1] + w[2];
    for (size_t i = 0; i < 3; i++)
        is_frequency(count[i], n, w[i] / sum, "softmax: fitness");
    /* The ratio between neighbours is e^2; its tolerance follows from the
     * binomial standard deviations of both counts. */
    double ratio = (double)count[2] / (double)count[1];
    double rel = sqrt((1 - w[2] / sum) / (double)count[2] +
                      (1 - w[1] / sum) / (double)count[1]);
    ok(fabs(ratio - exp(2)) <= 5 * rel * exp(2),
       "fitness 2 is picked e^2 times as often as fitness 1: %.3f vs %.3f",
       ratio, exp(2));

    /* A huge fitness must not overflow: the largest weight is 1. */
    kevo_archive_free(a);
    static const double g[] = {1e6, 1e6 - 1, -1e300};
    a = line(g, 3);
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < 20000; i++) {
        size_t cell = KEVO_NO_CELL;
        kevo_archive_select(a, rng, KEVO_SELECT_SOFTMAX, 1, &cell, NULL);
        if (cell < 3)
            count[cell]++;
    }
    is_frequency(count[0], 20000, 1 / (1 + exp(-1)), "softmax near 1e6");
    is_uint(count[2], 0, "a weight that underflows is never picked");
    kevo_archive_free(a);
    kevo_rng_free(rng);
}

static void test_select_curiosity(void)
{
    static const double f[] = {1, 1, 1};
    kevo_archive *a = line(f, 3);
    kevo_rng *rng = kevo_rng_new(3, "curiosity");
    size_t count[3] = {0}, n = 30000;
    /* With no credit yet every elite is equally curious. */
    for (size_t i = 0; i < n; i++) {
        size_t cell = KEVO_NO_CELL;
        kevo_archive_select(a, rng, KEVO_SELECT_CURIOSITY, 1, &cell, NULL);
        if (cell < 3)
            count[cell]++;
    }
    for (size_t i = 0; i < 3; i++)
        is_frequency(count[i], n, 1.0 / 3, "curiosity before credits");

    /* Elite 0 (id 1): two children improved, one did not: 1 + 1 - 0.5.
     * Elite 1 (id 2): two that did not: -1. Elite 2 untouched: 0. */
    is_int(kevo_archive_credit(a, 0, 1, 1), KEVO_OK, "credit improved");
    is_int(kevo_archive_credit(a, 0, 1, 1), KEVO_OK, "credit improved");
    is_int(kevo_archive_credit(a, 0, 1, 0), KEVO_OK, "credit not improved");
    is_int(kevo_archive_credit(a, 1, 2, 0), KEVO_OK, "credit not improved");
    is_int(kevo_archive_credit(a, 1, 2, 0), KEVO_OK, "credit not improved");
    is_double(kevo_archive_curiosity(a, 0), 1.5, 0, "curiosity 1 + 1 - 0.5");
    is_double(kevo_archive_curiosity(a, 1), -1, 0, "curiosity -0.5 - 0.5");
    is_double(kevo_archive_curiosity(a, 2), 0, 0, "curiosity untouched");
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) {
        size_t cell = KEVO_NO_CELL;
        kevo_archive_select(a, rng, KEVO_SELECT_CURIOSITY, 1, &cell, NULL);
        if (cell < 3)
            count[cell]++;
    }
    double w[3] = {exp(1.5), exp(-1), 1}, sum = w[0] + w[1] + w[2];
    for (size_t i = 0; i < 3; i++)
        is_frequency(count[i], n, w[i] / sum, "curiosity after credits");
    kevo_archive_free(a);
    kevo_rng_free(rng);
}

static void test_credit(void)
{
    kevo_archive *a = grid();
    put(a, 10, 1, 0.1, 0);
    is_int(kevo_archive_credit(a, 0, 11, 1), KEVO_ENOENT,
           "credit for another id is ignored");
    is_double(kevo_archive_curiosity(a, 0), 0, 0, "curiosity unchanged");
    is_int(kevo_archive_credit(a, 0, 10, 1), KEVO_OK, "credit the elite");
    is_double(kevo_archive_curiosity(a, 0), 1, 0, "curiosity 1");
    is_int(kevo_archive_credit(a, 1, 10, 1), KEVO_ENOENT, "an empty cell");
    is_int(kevo_archive_credit(a, 500, 10, 1), KEVO_ENOENT, "past the grid");
    is_int(kevo_archive_credit(NULL, 0, 10, 1), KEVO_EINVAL, "no archive");

    is_int(put(a, 12, 2, 0.2, 10), KEVO_INSERT_REPLACED, "a fitter child");
    is_double(kevo_archive_curiosity(a, 0), 0, 0,
              "the new elite starts with no curiosity");
    is_int(kevo_archive_credit(a, 0, 10, 0), KEVO_ENOENT,
           "credit for the replaced elite is ignored");
    is_double(kevo_archive_curiosity(a, 0), 0, 0, "curiosity unchanged");
    is_int(kevo_archive_credit(a, 0, 12, 0), KEVO_OK, "credit the new elite");
    is_double(kevo_archive_curiosity(a, 0), -0.5, 0, "curiosity -0.5");

    char *json = NULL;
    kevo_archive_to_json(a, &json, NULL);
    like_str(json, "\"children\": 1", "children counted in the JSON");
    like_str(json, "\"improved\": 0", "improved counted in the JSON");
    free(json);
    kevo_archive_free(a);
}

/* The cells of inspirations are distinct, filled, and never excluded. */
static int valid_set(const kevo_archive *a, const size_t *cells, size_t n,
                     size_t exclude)
{
    for (size_t i = 0; i < n; i++) {
        if (cells[i] == exclude || !kevo_archive_candidate(a, cells[i]))
            return 0;
        for (size_t j = 0; j < i; j++) {
            if (cells[i] == cells[j])
                return 0;
        }
    }
    return 1;
}

static void test_inspirations(void)
{
    /* Fitness by cell; cell 3 and cell 8 tie at 8. */
    static const double f[] = {1, 9, 4, 8, 2, 7, 3, 6, 8, 0};
    kevo_archive *a = line(f, 10);
    kevo_rng *rng = kevo_rng_new(5, "inspirations");
    size_t cells[32], n = 99;

    is_int(kevo_archive_inspirations(a, rng, 1, 4, cells, &n, NULL), KEVO_OK,
           "four inspirations beside the best");
    is_uint(n, 4, "four");
    ok(valid_set(a, cells, n, 1), "distinct, filled, not the excluded one");
    is_uint(cells[0], 3, "the fittest other: fitness 8, the lower cell");
    is_uint(cells[1], 8, "then the other fitness 8");
    ok(kevo_archive_fitness(a, cells[2]) < 8 &&
           kevo_archive_fitness(a, cells[3]) < 8,
       "the second half comes from the rest");

    is_int(kevo_archive_inspirations(a, rng, KEVO_NO_CELL, 3, cells, &n, NULL),
           KEVO_OK, "three, excluding none");
    is_uint(n, 3, "three");
    ok(cells[0] == 1 && cells[1] == 3, "the two fittest first: %zu %zu",
       cells[0], cells[1]);
    ok(valid_set(a, cells, n, KEVO_NO_CELL) && cells[2] != 1 && cells[2] != 3,
       "then one of the rest");

    is_int(kevo_archive_inspirations(a, rng, 1, 20, cells, &n, NULL), KEVO_OK,
           "more than there are");
    is_uint(n, 9, "every other elite");
    ok(valid_set(a, cells, n, 1), "distinct, not the excluded one");
    int sorted = 1;
    for (size_t i = 1; i < n; i++)
        sorted &= kevo_archive_fitness(a, cells[i - 1]) >=
                  kevo_archive_fitness(a, cells[i]);
    ok(sorted, "all of them, fittest first");

    /* Eight of nine: the fittest four, then four of the other five in a
     * random order (the selection-sampling path). */
    int all_valid = 1, saw_order[2] = {0, 0};
    for (int t = 0; t < 200; t++) {
        kevo_archive_inspirations(a, rng, 9, 8, cells, &n, NULL);
        all_valid &= n == 8 && valid_set(a, cells, n, 9) && cells[0] == 1 &&
                     cells[1] == 3 && cells[2] == 8 && cells[3] == 5;
        for (size_t i = 4; i < 8; i++)
            all_valid &= kevo_archive_fitness(a, cells[i]) < 7;
        saw_order[cells[4] < cells[5]] = 1;
    }
    ok(all_valid, "eight of nine: the fittest four, then four of the rest");
    ok(saw_order[0] && saw_order[1], "the random half comes in any order");

    /* Two: the best, then one of the other nine uniformly. */
    size_t count[10] = {0}, draws = 18000;
    for (size_t t = 0; t < draws; t++) {
        kevo_archive_inspirations(a, rng, KEVO_NO_CELL, 2, cells, &n, NULL);
        if (n == 2 && cells[0] == 1 && cells[1] < 10)
            count[cells[1]]++;
    }
    is_uint(count[1], 0, "the fittest is never drawn twice");
    for (size_t c = 0; c < 10; c++) {
        if (c != 1)
            is_frequency(count[c], draws, 1.0 / 9, "random half: cell");
    }

    is_int(kevo_archive_inspirations(a, rng, 1, 0, NULL, &n, NULL), KEVO_OK,
           "k = 0");
    is_uint(n, 0, "none");
    is_int(kevo_archive_inspirations(a, rng, 1, 1, cells, &n, NULL), KEVO_OK,
           "k = 1");
    ok(n == 1 && cells[0] == 3, "the fittest other");
    kevo_archive_free(a);

    a = grid();
    is_int(kevo_archive_inspirations(a, rng, KEVO_NO_CELL, 4, cells, &n, NULL),
           KEVO_OK, "an empty archive");
    is_uint(n, 0, "has none");
    put(a, 1, 1, 0.1, 0);
    is_int(kevo_archive_inspirations(a, rng, 0, 4, cells, &n, NULL), KEVO_OK,
           "only the excluded elite");
    is_uint(n, 0, "none");
    is_int(kevo_archive_inspirations(a, rng, 0, 4, cells, NULL, NULL),
           KEVO_EINVAL, "n NULL");
    kevo_archive_free(a);
    kevo_rng_free(rng);
}

/* Selections from an archive whose weights were patched change by change
 * equal those from an archive loaded afresh from its JSON, whatever the
 * temperature, also once a huge fitness appears, and with both rules in
 * use at once. */
static void test_select_after_changes(void)
{
    static const double f[] = {3, 1, 4, 1, 5, 9, 2, 6};
    static const struct {
        kevo_selection how;
        double temperature;
    } runs[] = {{KEVO_SELECT_SOFTMAX, 0.7},    {KEVO_SELECT_SOFTMAX, 0.01},
                {KEVO_SELECT_SOFTMAX, 1e-300}, {KEVO_SELECT_CURIOSITY, 0.7},
                {KEVO_SELECT_CURIOSITY, 0.01}, {KEVO_SELECT_CURIOSITY, 1e-300}};
    kevo_rng *rng = kevo_rng_new(11, "changes");
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        kevo_selection how = runs[r].how;
        double temp = runs[r].temperature;
        kevo_archive *a = kevo_archive_new();
        kevo_archive_add_dimension(a, "x", 16, 0, 16, NULL);
        for (size_t i = 0; i < 8; i++) {
            double x = 2.0 * (double)i + 0.5;
            kevo_archive_insert_adopt(a, cand_with_id(i + 1), f[i], &x, NULL,
                                      NULL, NULL);
        }
        int same = 1, steps = 0;
        for (int step = 0; step < 60; step++) {
            /* Both rules have weights; now change the archive. */
            size_t cell = 0;
            kevo_selection other = how == KEVO_SELECT_SOFTMAX
                                       ? KEVO_SELECT_CURIOSITY
                                       : KEVO_SELECT_SOFTMAX;
            kevo_archive_select(a, rng, other, temp, &cell, NULL);
            kevo_archive_select(a, rng, how, temp, &cell, NULL);
            double x = (double)(step % 16) + 0.25;
            double fit = (double)(step % 7) + 0.5 * (double)step / 60;
            if (step == 45)
                fit = 1e300;
            kevo_archive_insert_adopt(a, cand_with_id(100 + (uint64_t)step),
                                      fit, &x, NULL, NULL, NULL);
            uint64_t id = kevo_candidate_id(kevo_archive_candidate(a, cell));
            kevo_archive_credit(a, cell, id, step % 3 == 0);
            char *json = NULL;
            kevo_archive *b = NULL;
            kevo_archive_to_json(a, &json, NULL);
            kevo_archive_from_json(json, "copy", &b, NULL);
            free(json);
            kevo_rng *r1 = kevo_rng_copy(rng), *r2 = kevo_rng_copy(rng);
            for (int k = 0; k < 20 && b; k++) {
                size_t c1 = 1, c2 = 2, c3 = 3, c4 = 4;
                kevo_archive_select(a, r1, how, temp, &c1, NULL);
                kevo_archive_select(b, r2, how, temp, &c2, NULL);
                kevo_archive_select(a, r1, other, temp, &c3, NULL);
                kevo_archive_select(b, r2, other, temp, &c4, NULL);
                same &= c1 == c2 && c3 == c4;
            }
            steps += b != NULL;
            kevo_rng_free(r1);
            kevo_rng_free(r2);
            kevo_archive_free(b);
        }
        ok(same && steps == 60,
           "rule %d at temperature %g: patched weights select exactly as "
           "rebuilt ones",
           (int)how, temp);
        kevo_archive_free(a);
    }
    kevo_rng_free(rng);
}

/* A small archive with everything the JSON holds. */
static kevo_archive *sample(void)
{
    kevo_archive *a = grid();
    put(a, 1, 0.1, 0.1, 0);
    put(a, 2, 1.0 / 3.0, 0.3, INFINITY);
    put(a, 3, -2.5e-17, -INFINITY, 200);
    put(a, 4, 123456.789, 0.9, 511.25);
    put(a, 5, 0.5, 0.95, 512);
    put(a, 6, 200000, 0.95, 300); /* replaces 4 in cell 18 */
    put(a, 7, 0, 0.1, 1);         /* rejected */
    kevo_archive_credit(a, 0, 1, 1);
    kevo_archive_credit(a, 0, 1, 0);
    kevo_archive_credit(a, 9, 2, 0);
    return a;
}

static void test_json(void)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_archive *a = sample();
    char *j1 = NULL, *j2 = NULL;
    is_int(kevo_archive_to_json(a, &j1, &err), KEVO_OK, "to JSON");
    like_str(j1, "\"format\": \"kevo-archive\"", "format");
    like_str(j1, "\"version\": 1", "version");
    like_str(j1, "\"edges\": [", "edges of y");
    like_str(j1, "\"inf\"", "an infinite descriptor as a string");

    kevo_archive *b = NULL;
    kevo_error_init(&err);
    is_int(kevo_archive_from_json(j1, "a.json", &b, &err), KEVO_OK,
           "from JSON: %s", err.text);
    if (!b)
        bail_out("cannot go on without the copy");
    is_int(kevo_archive_to_json(b, &j2, NULL), KEVO_OK, "to JSON again");
    is_str(j2, j1, "the round trip is byte-identical");

    is_uint(kevo_archive_size(b), kevo_archive_size(a), "same size");
    is_uint(kevo_archive_cell_count(b), 20, "same grid");
    is_str(kevo_archive_dimension_name(b, 1), "y", "same dimension names");
    int same = 1;
    for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
         c = kevo_archive_next(a, c)) {
        double da[2], db[2];
        kevo_archive_descriptor(a, c, da);
        same &= kevo_archive_descriptor(b, c, db) == KEVO_OK &&
                memcmp(da, db, sizeof da) == 0 &&
                kevo_archive_fitness(a, c) == kevo_archive_fitness(b, c) &&
                kevo_archive_curiosity(a, c) == kevo_archive_curiosity(b, c) &&
                kevo_candidate_id(kevo_archive_candidate(a, c)) ==
                    kevo_candidate_id(kevo_archive_candidate(b, c));
    }
    ok(same, "same elites, descriptors, fitness and curiosity");
    kevo_archive_stats sa = {.size = sizeof sa}, sb = {.size = sizeof sb};
    kevo_archive_get_stats(a, &sa);
    kevo_archive_get_stats(b, &sb);
    ok(sa.inserts == sb.inserts && sa.accepted == sb.accepted &&
           sa.qd_score == sb.qd_score && sa.best_cell == sb.best_cell,
       "same statistics");
    is_int(kevo_archive_credit(b, 0, 1, 1), KEVO_OK,
           "the loaded elites keep their ids");
    free(j1);
    free(j2);
    kevo_archive_free(b);

    /* An archive with no dimensions and no elites. */
    kevo_archive *e = kevo_archive_new();
    kevo_archive_to_json(e, &j1, NULL);
    b = NULL;
    is_int(kevo_archive_from_json(j1, NULL, &b, NULL), KEVO_OK,
           "an empty archive round-trips");
    kevo_archive_to_json(b, &j2, NULL);
    is_str(j2, j1, "byte-identical");
    free(j1);
    free(j2);
    kevo_archive_free(b);
    kevo_archive_free(e);

    /* Save and load through a file. */
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test-archive-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        bail_out("mkdtemp failed");
    char path[4200];
    snprintf(path, sizeof path, "%s/archive.json", dir);
    kevo_error_init(&err);
    is_int(kevo_archive_save(a, path, &err), KEVO_OK, "save: %s", err.text);
    is_int(kevo_archive_save(a, path, &err), KEVO_OK, "save over it");
    b = NULL;
    kevo_error_init(&err);
    is_int(kevo_archive_load(path, &b, &err), KEVO_OK, "load: %s", err.text);
    kevo_archive_to_json(a, &j1, NULL);
    if (b)
        kevo_archive_to_json(b, &j2, NULL);
    is_str(j2, j1, "what was saved is what was loaded");
    FILE *fp = fopen(path, "rb");
    char last = 0;
    if (fp && fseek(fp, -1, SEEK_END) == 0)
        last = (char)fgetc(fp);
    if (fp)
        fclose(fp);
    is_int(last, '\n', "the file ends with a newline");
    free(j1);
    free(j2);
    j1 = j2 = NULL;
    kevo_archive_free(b);
    unlink(path);

    b = (kevo_archive *)1;
    kevo_error_init(&err);
    is_int(kevo_archive_load(path, &b, &err), KEVO_ENOENT,
           "load a missing file");
    ok(b == NULL, "out is NULL on failure");
    like_str(err.text, "archive.json", "the message names the file");
    snprintf(path, sizeof path, "%s/no/such/dir/a.json", dir);
    kevo_error_init(&err);
    ok(kevo_archive_save(a, path, &err) != KEVO_OK, "save into a missing dir");
    like_str(err.text, "no/such/dir", "the message names the path");
    rmdir(dir);
    kevo_archive_free(a);
}

/* An archive saved by an earlier build loads, and saves to the same bytes:
 * the format has not drifted. */
static void test_stored_file(void)
{
    char path[4096], *want = NULL, *got = NULL;
    snprintf(path, sizeof path, "%s/tests/data/archive/v1.json", tap_srcdir());
    FILE *fp = fopen(path, "rb");
    if (!fp)
        bail_out("cannot open %s", path);
    size_t cap = 1 << 16, len = 0;
    want = malloc(cap + 1);
    while (want && !feof(fp) && len < cap)
        len += fread(want + len, 1, cap - len, fp);
    fclose(fp);
    if (!want || len == cap)
        bail_out("cannot read %s", path);
    want[len] = '\0';

    kevo_error err;
    kevo_error_init(&err);
    kevo_archive *a = NULL;
    is_int(kevo_archive_load(path, &a, &err), KEVO_OK, "load v1.json: %s",
           err.text);
    if (!a)
        bail_out("cannot go on without the stored archive");
    is_uint(kevo_archive_size(a), 4, "four elites");
    is_str(kevo_archive_dimension_name(a, 0), "memory", "memory");
    is_uint(kevo_archive_dimension_bins(a, 1), 5, "block_size in 5 bins");
    const kevo_candidate *c = kevo_archive_candidate(a, 3);
    ok(c && kevo_candidate_id(c) == 1, "candidate 1 in cell 3");
    is_double(kevo_archive_curiosity(a, 3), 1.5, 0, "with its curiosity");
    is_int(kevo_archive_credit(a, 3, 1, 1), KEVO_OK, "and its id");
    c = kevo_archive_candidate(a, 2 * 5 + 4);
    int64_t block = 0;
    ok(c && kevo_candidate_id(c) == 12 &&
           kevo_vars_get(kevo_candidate_assignment(c), "BLOCK", &block) ==
               KEVO_OK &&
           block == 512,
       "candidate 12 in cell 14, with BLOCK = 512");
    ok(c && kevo_candidate_parent_count(c) == 1 &&
           kevo_candidate_parent(c, 0) == 7,
       "and its parent");
    double d[2];
    kevo_archive_descriptor(a, 3 * 5 + 4, d);
    ok(d[0] == 3 && isinf(d[1]) && d[1] > 0, "an infinite descriptor value");
    kevo_archive_stats st = {.size = sizeof st};
    kevo_archive_get_stats(a, &st);
    ok(st.inserts == 5 && st.accepted == 4, "the counters");
    kevo_archive_free(a);

    a = NULL;
    kevo_archive_load(path, &a, NULL);
    kevo_archive_to_json(a, &got, NULL);
    size_t n = got ? strlen(got) : 0;
    ok(got && len == n + 1 && memcmp(got, want, n) == 0 && want[n] == '\n',
       "saving it again gives the same bytes");
    free(got);
    free(want);
    kevo_archive_free(a);
}

/* The JSON of sample(), changed by edit(), must fail to load with code and
 * a message containing text. */
typedef void (*edit_fn)(json_t *root);

static json_t *elite0(json_t *root)
{
    return json_array_get(json_object_get(root, "elites"), 0);
}
static json_t *dim(json_t *root, size_t i)
{
    return json_array_get(json_object_get(root, "dimensions"), i);
}

static void e_no_format(json_t *r)
{
    json_object_del(r, "format");
}
static void e_task_format(json_t *r)
{
    json_object_set_new(r, "format", json_string("kevo-task"));
}
static void e_version(json_t *r)
{
    json_object_set_new(r, "version", json_integer(2));
}
static void e_version_type(json_t *r)
{
    json_object_set_new(r, "version", json_string("1"));
}
static void e_extra(json_t *r)
{
    json_object_set_new(r, "extra", json_true());
}
static void e_no_dims(json_t *r)
{
    json_object_del(r, "dimensions");
}
static void e_dims_type(json_t *r)
{
    json_object_set_new(r, "dimensions", json_object());
}
static void e_bins0(json_t *r)
{
    json_object_set_new(dim(r, 0), "bins", json_integer(0));
}
static void e_bins_neg(json_t *r)
{
    json_object_set_new(dim(r, 0), "bins", json_integer(-3));
}
static void e_lo_hi(json_t *r)
{
    json_object_set_new(dim(r, 0), "lo", json_real(2));
}
static void e_both(json_t *r)
{
    json_object_set_new(dim(r, 1), "bins", json_integer(3));
}
static void e_edges_order(json_t *r)
{
    json_array_set_new(json_object_get(dim(r, 1), "edges"), 1, json_real(10));
}
static void e_edge_type(json_t *r)
{
    json_array_set_new(json_object_get(dim(r, 1), "edges"), 0, json_null());
}
static void e_dim_name(json_t *r)
{
    json_object_del(dim(r, 0), "name");
}
static void e_dim_dup(json_t *r)
{
    json_object_set_new(dim(r, 1), "name", json_string("x"));
}
static void e_dim_key(json_t *r)
{
    json_object_set_new(dim(r, 0), "width", json_real(0.25));
}
static void e_cell_range(json_t *r)
{
    json_object_set_new(elite0(r), "cell", json_integer(20));
}
static void e_cell_mismatch(json_t *r)
{
    json_object_set_new(elite0(r), "cell", json_integer(3));
}
static void e_cell_dup(json_t *r)
{
    json_array_append(json_object_get(r, "elites"), elite0(r));
}
static void e_fitness_type(json_t *r)
{
    json_object_set_new(elite0(r), "fitness", json_string("fast"));
}
static void e_no_fitness(json_t *r)
{
    json_object_del(elite0(r), "fitness");
}
static void e_desc_len(json_t *r)
{
    json_array_remove(json_object_get(elite0(r), "descriptor"), 1);
}
static void e_desc_nan(json_t *r)
{
    json_array_set_new(json_object_get(elite0(r), "descriptor"), 0,
                       json_string("nan"));
}
static void e_improved(json_t *r)
{
    json_object_set_new(elite0(r), "improved", json_integer(3));
}
static void e_children(json_t *r)
{
    json_object_set_new(elite0(r), "children", json_real(1.5));
}
static void e_curiosity(json_t *r)
{
    json_object_set_new(elite0(r), "curiosity", json_null());
}
static void e_elite_key(json_t *r)
{
    json_object_set_new(elite0(r), "score", json_integer(1));
}
static void e_no_candidate(json_t *r)
{
    json_object_del(elite0(r), "candidate");
}
static void e_candidate(json_t *r)
{
    json_object_set_new(elite0(r), "candidate", json_string("k.cu"));
}
static void e_inserts(json_t *r)
{
    json_object_set_new(r, "inserts", json_integer(-1));
}
static void e_accepted(json_t *r)
{
    json_object_set_new(r, "accepted", json_integer(1000));
}
static void e_elites_type(json_t *r)
{
    json_object_set_new(r, "elites", json_null());
}

static void test_bad_json(void)
{
    static const struct {
        edit_fn edit;
        kevo_status code;
        const char *text;
    } cases[] = {
        {e_no_format, KEVO_EFORMAT,
         "a.json: $: not a kevo archive: no \"format\": \"kevo-archive\""},
        {e_task_format, KEVO_EFORMAT,
         "a.json: $.format: this is a \"kevo-task\" file, not "
         "\"kevo-archive\""},
        {e_version, KEVO_EFORMAT,
         "a.json: $.version: version 2 is not supported; this kevo reads "
         "version 1"},
        {e_version_type, KEVO_EFORMAT,
         "$.version: expected an integer, found a string"},
        {e_extra, KEVO_EINVALID, "a.json: $: unknown key \"extra\""},
        {e_no_dims, KEVO_EINVALID, "$: missing key \"dimensions\""},
        {e_dims_type, KEVO_EINVALID,
         "$.dimensions: expected an array, found an object"},
        {e_bins0, KEVO_EINVALID,
         "$.dimensions[0]: dimension \"x\": 0 bins; a dimension needs at "
         "least 1"},
        {e_bins_neg, KEVO_EINVALID,
         "$.dimensions[0].bins: -3 is out of range (0 to 16777216)"},
        {e_lo_hi, KEVO_EINVALID,
         "$.dimensions[0]: dimension \"x\": lo 2 must be below hi 1"},
        {e_both, KEVO_EINVALID,
         "$.dimensions[1]: give either \"edges\" or \"bins\", \"lo\" and "
         "\"hi\", not both"},
        {e_edges_order, KEVO_EINVALID,
         "$.dimensions[1]: dimension \"y\": edge 1 (10) is not above edge 0 "
         "(64)"},
        {e_edge_type, KEVO_EINVALID,
         "$.dimensions[1].edges[0]: expected a number, found null"},
        {e_dim_name, KEVO_EINVALID, "$.dimensions[0]: missing key \"name\""},
        {e_dim_dup, KEVO_EINVALID,
         "$.dimensions[1]: dimension \"x\": the archive already has a "
         "dimension of that name"},
        {e_dim_key, KEVO_EINVALID,
         "$.dimensions[0]: unknown key \"width\" (known keys: name, bins, lo, "
         "hi, edges)"},
        {e_cell_range, KEVO_EINVALID,
         "$.elites[0].cell: 20 is out of range (0 to 19)"},
        {e_cell_mismatch, KEVO_EINVALID,
         "$.elites[0].cell: 3 does not match the descriptor, which falls in "
         "cell 0"},
        {e_cell_dup, KEVO_EINVALID,
         "$.elites[5].cell: cell 0 already has an elite, at $.elites[0]"},
        {e_fitness_type, KEVO_EINVALID,
         "$.elites[0].fitness: expected a number, found a string"},
        {e_no_fitness, KEVO_EINVALID, "$.elites[0]: missing key \"fitness\""},
        {e_desc_len, KEVO_EINVALID,
         "$.elites[0].descriptor: 1 value(s) for an archive of 2 "
         "dimension(s)"},
        {e_desc_nan, KEVO_EINVALID,
         "$.elites[0].descriptor[0]: expected a number, \"inf\" or \"-inf\", "
         "found a string"},
        {e_improved, KEVO_EINVALID,
         "$.elites[0].improved: 3 is out of range (0 to 2)"},
        {e_children, KEVO_EINVALID,
         "$.elites[0].children: expected an integer, found a real number"},
        {e_curiosity, KEVO_EINVALID,
         "$.elites[0].curiosity: expected a number, found null"},
        {e_elite_key, KEVO_EINVALID, "$.elites[0]: unknown key \"score\""},
        {e_no_candidate, KEVO_EINVALID,
         "$.elites[0]: missing key \"candidate\""},
        {e_candidate, KEVO_EINVALID, "$.elites[0].candidate"},
        {e_inserts, KEVO_EINVALID, "$.inserts: -1 is out of range"},
        {e_accepted, KEVO_EINVALID,
         "$.accepted: 1000 is out of range (0 to 7)"},
        {e_elites_type, KEVO_EINVALID,
         "$.elites: expected an array, found null"},
    };
    kevo_archive *a = sample();
    char *good = NULL;
    kevo_archive_to_json(a, &good, NULL);
    kevo_archive_free(a);
    json_t *base = json_loads(good, 0, NULL);
    if (!base)
        bail_out("the sample JSON does not parse");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *root = json_deep_copy(base);
        cases[i].edit(root);
        char *text = json_dumps(root, JSON_SORT_KEYS);
        json_decref(root);
        kevo_error err;
        kevo_error_init(&err);
        kevo_archive *b = (kevo_archive *)1;
        is_int(kevo_archive_from_json(text, "a.json", &b, &err), cases[i].code,
               "bad archive %zu: code", i);
        like_str(err.text, cases[i].text, "bad archive %zu: message", i);
        ok(b == NULL, "bad archive %zu: no archive", i);
        free(text);
    }
    json_decref(base);

    kevo_error err;
    kevo_error_init(&err);
    kevo_archive *b = NULL;
    is_int(kevo_archive_from_json("{\n  \"format\": ", "a.json", &b, &err),
           KEVO_EPARSE, "JSON that does not parse");
    like_str(err.text, "a.json:2:", "the message has the line");
    is_int(err.line, 2, "line in the record");
    kevo_error_init(&err);
    is_int(kevo_archive_from_json("[1, 2]", "a.json", &b, &err), KEVO_EINVALID,
           "an array");
    like_str(err.text, "a.json: $: expected an object, found an array",
             "message");
    is_int(kevo_archive_from_json(NULL, "a.json", &b, NULL), KEVO_EINVAL,
           "NULL text");
    free(good);
}

static void test_task(void)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    static const double edges[] = {128, 256, 512};
    if (kevo_task_new("t", &task, &err) != KEVO_OK ||
        kevo_task_add_descriptor(task, "occupancy", 5, 0, 1, &err) != KEVO_OK ||
        kevo_task_add_descriptor_edges(task, "block_size", edges, 3, &err) !=
            KEVO_OK)
        bail_out("cannot build the task: %s", err.text);
    kevo_archive *a = NULL;
    is_int(kevo_archive_new_for_task(task, &a, &err), KEVO_OK,
           "an archive for a task: %s", err.text);
    is_uint(kevo_archive_dimension_count(a), 2, "the task's two descriptors");
    is_str(kevo_archive_dimension_name(a, 0), "occupancy", "first: occupancy");
    is_uint(kevo_archive_dimension_bins(a, 0), 5, "5 bins");
    is_str(kevo_archive_dimension_name(a, 1), "block_size",
           "second: block_size");
    is_uint(kevo_archive_dimension_bins(a, 1), 4, "3 edges, 4 bins");
    is_uint(kevo_archive_cell_count(a), 20, "20 cells");
    double d[2] = {0.5, 256};
    size_t cell;
    kevo_archive_cell_of(a, d, &cell, NULL);
    is_uint(cell, 2 * 4 + 2, "occupancy 0.5 and 256 threads: cell (2, 2)");
    kevo_archive_free(a);
    kevo_task_free(task);

    /* A task that names none has the defaults. */
    if (kevo_task_new("u", &task, &err) != KEVO_OK)
        bail_out("cannot build the task: %s", err.text);
    is_int(kevo_archive_new_for_task(task, &a, &err), KEVO_OK,
           "an archive for a task with default descriptors");
    is_uint(kevo_archive_dimension_count(a), 2, "two dimensions");
    is_str(kevo_archive_dimension_name(a, 0), "memory", "memory");
    is_str(kevo_archive_dimension_name(a, 1), "block_size", "block_size");
    is_uint(kevo_archive_cell_count(a), 4 * 5, "4 x 5 cells");
    kevo_archive_free(a);
    kevo_task_free(task);
    is_int(kevo_archive_new_for_task(NULL, &a, NULL), KEVO_EINVAL, "no task");
}

/* The notes kept beside elites: set, replaced, copied to a migrant, and
 * gone with their elite (valgrind sees every one freed). */
static void test_notes(void)
{
    kevo_archive *a = grid(), *b = grid();
    size_t cell = cell_of2(a, 0.3, 100), n = 9;
    is_int(kevo__archive_set_note(a, cell, "evaluation", "{}"), KEVO_ENOENT,
           "no note beside an empty cell");
    ok(kevo__archive_notes(a, cell, &n) == NULL && n == 0, "none there");
    put(a, 7, 1.0, 0.3, 100);
    is_int(kevo__archive_set_note(a, cell, "evaluation", "{\"fitness\": 1}"),
           KEVO_OK, "a note beside elite 7");
    is_int(kevo__archive_set_note(a, cell, "gate", "passed"), KEVO_OK,
           "a second");
    is_int(kevo__archive_set_note(a, cell, "evaluation", "{\"fitness\": 2}"),
           KEVO_OK, "the first again");
    const kevo_operator_text *t = kevo__archive_notes(a, cell, &n);
    ok(t && n == 2 && strcmp(t[0].name, "evaluation") == 0 &&
           strcmp(t[0].text, "{\"fitness\": 2}") == 0 &&
           strcmp(t[1].name, "gate") == 0,
       "two notes, the first replaced in place");
    is_str(kevo__archive_note(a, cell, "gate"), "passed", "found by name");
    ok(kevo__archive_note(a, cell, "nope") == NULL, "an unknown name");
    is_int(kevo__archive_set_note(a, 9999, "x", "y"), KEVO_ENOENT,
           "a cell out of range");
    is_int(kevo__archive_set_note(a, cell, NULL, "y"), KEVO_EINVAL,
           "a NULL name");

    /* A migrant takes its notes along. */
    put(b, 7, 1.0, 0.3, 100);
    is_int(kevo__archive_copy_notes(b, cell, a, cell), KEVO_OK, "copy");
    is_str(kevo__archive_note(b, cell, "gate"), "passed", "the copy's note");

    /* A fitter candidate takes the cell: the notes go with elite 7. */
    is_int(put(a, 8, 2.0, 0.3, 100), KEVO_INSERT_REPLACED,
           "elite 8 replaces 7");
    ok(kevo__archive_notes(a, cell, &n) == NULL && n == 0,
       "and elite 7's notes are gone");
    kevo__archive_set_note(a, cell, "evaluation", "{}");
    kevo_archive_free(a); /* frees the notes of elite 8 */
    kevo_archive_free(b);
}

int main(void)
{
    test_dimensions();
    test_dimension_errors();
    test_insert();
    test_iteration();
    test_stats();
    test_select_errors();
    test_select_uniform();
    test_select_softmax();
    test_select_curiosity();
    test_select_after_changes();
    test_credit();
    test_inspirations();
    test_json();
    test_stored_file();
    test_bad_json();
    test_task();
    test_notes();
    return done_testing();
}
