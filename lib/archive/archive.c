/*
 * archive.c: the MAP-Elites archive. Per-cell data lives in flat arrays
 * indexed by cell, and a sorted list of the filled cells serves iteration
 * and uniform selection. A rejected insert costs a bin computation per
 * dimension and one comparison, and allocates nothing. The softmax rules
 * keep cached weights in a sum tree (archive_private.h says how) that each
 * change patches with one exp() and O(log n) additions, so that a select
 * costs a descent of the tree.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "archive_private.h"
#include "model/candidate_private.h"
#include "model/task_private.h"

kevo_archive *kevo_archive_new(void)
{
    kevo_archive *a = calloc(1, sizeof *a);
    if (a)
        a->ncells = 1;
    return a;
}

static void free_cells(kevo_archive *a)
{
    kevo__archive_free_notes(a);
    for (size_t i = 0; i < a->nfilled; i++)
        kevo_candidate_free(a->cand[a->filled[i]]);
    free(a->fitness);
    free(a->curiosity);
    free(a->children);
    free(a->improved);
    free(a->descriptor);
    free(a->cand);
    free(a->filled);
    free(a->weights[0].tree);
    free(a->weights[1].tree);
    a->fitness = a->curiosity = a->descriptor = NULL;
    a->children = a->improved = NULL;
    a->cand = NULL;
    a->filled = NULL;
    a->nfilled = a->filled_cap = 0;
    memset(a->weights, 0, sizeof a->weights);
}

void kevo_archive_free(kevo_archive *archive)
{
    if (!archive)
        return;
    free_cells(archive);
    for (size_t d = 0; d < archive->ndims; d++) {
        free(archive->dims[d].name);
        free(archive->dims[d].edges);
    }
    free(archive->dims);
    free(archive);
}

kevo_status kevo_archive_new_for_task(const kevo_task *task, kevo_archive **out,
                                      kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    kevo_archive *a = NULL;
    if (out)
        *out = NULL;
    if (!task || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_new_for_task: task and out must "
                               "not be NULL");
    a = kevo_archive_new();
    if (!a) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "archive: out of memory");
        goto out;
    }
    const kevo_task_descriptor *td;
    for (size_t i = 0; (td = kevo__task_descriptor(task, i)) != NULL; i++) {
        if (td->nedges > 0)
            rc = kevo_archive_add_dimension_edges(a, td->name, td->edges,
                                                  td->nedges, err);
        else
            rc = kevo_archive_add_dimension(a, td->name, td->nbins, td->lo,
                                            td->hi, err);
        if (rc != KEVO_OK)
            goto out;
    }
    *out = a;
    a = NULL;
out:
    kevo_archive_free(a);
    return rc;
}

/* ---- dimensions -------------------------------------------------------- */

/* The checks both ways of adding a dimension share; nbins is the new
 * dimension's bin count. */
static kevo_status check_new_dimension(const kevo_archive *a, const char *name,
                                       size_t nbins, kevo_error *err)
{
    if (a->nfilled > 0)
        return kevo__error_set(err, KEVO_ESTATE,
                               "dimension \"%s\": the archive already holds "
                               "%zu elite(s); add every dimension before the "
                               "first insert",
                               name, a->nfilled);
    for (size_t d = 0; d < a->ndims; d++) {
        if (strcmp(a->dims[d].name, name) == 0)
            return kevo__error_set(err, KEVO_EEXIST,
                                   "dimension \"%s\": the archive already has "
                                   "a dimension of that name (dimension %zu)",
                                   name, d);
    }
    if (nbins > KEVO_ARCHIVE_CELLS_MAX / a->ncells)
        return kevo__error_set(
            err, KEVO_ELIMIT,
            "dimension \"%s\": %zu bins would make %zu x %zu cells, over "
            "the limit of %zu",
            name, nbins, a->ncells, nbins, (size_t)KEVO_ARCHIVE_CELLS_MAX);
    return KEVO_OK;
}

/* Appends a checked dimension, taking ownership of edges (freed on
 * failure). */
static kevo_status append_dimension(kevo_archive *a, const char *name,
                                    size_t nbins, double lo, double hi,
                                    double *edges, size_t nedges,
                                    kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    char *copy = kevo__strdup(name);
    kevo__archive_dim *dims =
        copy ? realloc(a->dims, (a->ndims + 1) * sizeof *dims) : NULL;
    if (!dims) {
        rc = kevo__error_set(err, KEVO_ENOMEM,
                             "dimension \"%s\": out of memory", name);
        goto out;
    }
    a->dims = dims;
    /* An earlier insert that failed may have allocated the cells. */
    free_cells(a);
    for (size_t d = 0; d < a->ndims; d++)
        dims[d].stride *= nbins;
    dims[a->ndims] = (kevo__archive_dim){
        .name = copy,
        .nbins = nbins,
        .lo = lo,
        .hi = hi,
        .scale = nedges ? 0 : (double)nbins / (hi - lo),
        .nedges = nedges,
        .edges = edges,
        .stride = 1,
    };
    a->ndims++;
    a->ncells *= nbins;
    copy = NULL;
    edges = NULL;
out:
    free(copy);
    free(edges);
    return rc;
}

kevo_status kevo_archive_add_dimension(kevo_archive *archive, const char *name,
                                       size_t nbins, double lo, double hi,
                                       kevo_error *err)
{
    if (!archive || !name || !*name)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_add_dimension: the archive and a "
                               "non-empty name are required");
    if (nbins == 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "dimension \"%s\": 0 bins; a dimension needs at "
                               "least 1",
                               name);
    if (!isfinite(lo) || !isfinite(hi))
        return kevo__error_set(err, KEVO_EINVAL,
                               "dimension \"%s\": the bounds [%g, %g) must be "
                               "finite",
                               name, lo, hi);
    if (!(lo < hi))
        return kevo__error_set(err, KEVO_EINVAL,
                               "dimension \"%s\": lo %.17g must be below hi "
                               "%.17g",
                               name, lo, hi);
    if (!isfinite(hi - lo) || !isfinite((double)nbins / (hi - lo)))
        return kevo__error_set(err, KEVO_EINVAL,
                               "dimension \"%s\": %zu bins over [%.17g, %.17g) "
                               "cannot be told apart in double precision",
                               name, nbins, lo, hi);
    kevo_status rc = check_new_dimension(archive, name, nbins, err);
    if (rc != KEVO_OK)
        return rc;
    return append_dimension(archive, name, nbins, lo, hi, NULL, 0, err);
}

kevo_status kevo_archive_add_dimension_edges(kevo_archive *archive,
                                             const char *name,
                                             const double *edges, size_t n,
                                             kevo_error *err)
{
    if (!archive || !name || !*name || (n > 0 && !edges))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_add_dimension_edges: the archive, "
                               "a non-empty name and the edges are required");
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(edges[i]))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "dimension \"%s\": edge %zu is %g; edges "
                                   "must be finite",
                                   name, i, edges[i]);
        if (i > 0 && !(edges[i - 1] < edges[i]))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "dimension \"%s\": edge %zu (%.17g) is not "
                                   "above edge %zu (%.17g); edges must be "
                                   "strictly increasing",
                                   name, i, edges[i], i - 1, edges[i - 1]);
    }
    if (n >= KEVO_ARCHIVE_CELLS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "dimension \"%s\": %zu edges make more bins "
                               "than the limit of %zu cells",
                               name, n, (size_t)KEVO_ARCHIVE_CELLS_MAX);
    kevo_status rc = check_new_dimension(archive, name, n + 1, err);
    if (rc != KEVO_OK)
        return rc;
    double *copy = NULL;
    if (n > 0) {
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return kevo__error_set(err, KEVO_ENOMEM,
                                   "dimension \"%s\": out of memory", name);
        memcpy(copy, edges, n * sizeof *copy);
    }
    return append_dimension(archive, name, n + 1, n ? edges[0] : 0,
                            n ? edges[n - 1] : 0, copy, n, err);
}

size_t kevo_archive_dimension_count(const kevo_archive *archive)
{
    return archive ? archive->ndims : 0;
}

const char *kevo_archive_dimension_name(const kevo_archive *archive, size_t d)
{
    return archive && d < archive->ndims ? archive->dims[d].name : NULL;
}

size_t kevo_archive_dimension_bins(const kevo_archive *archive, size_t d)
{
    return archive && d < archive->ndims ? archive->dims[d].nbins : 0;
}

size_t kevo_archive_cell_count(const kevo_archive *archive)
{
    return archive ? archive->ncells : 0;
}

static inline size_t dim_bin(const kevo__archive_dim *d, double v)
{
    if (d->nedges == 0) {
        if (!(v >= d->lo))
            return 0;
        if (v >= d->hi)
            return d->nbins - 1;
        size_t b = (size_t)((v - d->lo) * d->scale);
        return b < d->nbins ? b : d->nbins - 1;
    }
    /* The number of edges at or below v. */
    size_t lo = 0, hi = d->nedges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->edges[mid] <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t kevo__archive_cell_index(const kevo_archive *archive,
                                const double *descriptor)
{
    size_t cell = 0;
    for (size_t d = 0; d < archive->ndims; d++)
        cell +=
            dim_bin(&archive->dims[d], descriptor[d]) * archive->dims[d].stride;
    return cell;
}

/* The cell of descriptor, after checking it holds no NaN. */
static kevo_status checked_cell(const kevo_archive *a, const double *descriptor,
                                size_t *cell, kevo_error *err)
{
    if (a->ndims > 0 && !descriptor)
        return kevo__error_set(err, KEVO_EINVAL,
                               "the descriptor is NULL; the archive needs %zu "
                               "value(s), one per dimension",
                               a->ndims);
    size_t c = 0;
    for (size_t d = 0; d < a->ndims; d++) {
        if (isnan(descriptor[d]))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "descriptor value %zu (dimension \"%s\") is "
                                   "NaN; a behaviour must be measured before "
                                   "it is placed in the archive",
                                   d, a->dims[d].name);
        c += dim_bin(&a->dims[d], descriptor[d]) * a->dims[d].stride;
    }
    *cell = c;
    return KEVO_OK;
}

kevo_status kevo_archive_cell_of(const kevo_archive *archive,
                                 const double *descriptor, size_t *cell,
                                 kevo_error *err)
{
    if (!archive || !cell)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_cell_of: archive and cell must "
                               "not be NULL");
    return checked_cell(archive, descriptor, cell, err);
}

/* ---- cells ------------------------------------------------------------- */

/* Allocates the per-cell arrays if they are not there yet. */
static kevo_status alloc_cells(kevo_archive *a, kevo_error *err)
{
    if (a->fitness)
        return KEVO_OK;
    size_t n = a->ncells;
    a->fitness = malloc(n * sizeof *a->fitness);
    a->curiosity = calloc(n, sizeof *a->curiosity);
    a->children = calloc(n, sizeof *a->children);
    a->improved = calloc(n, sizeof *a->improved);
    a->cand = calloc(n, sizeof *a->cand);
    if (a->ndims > 0)
        a->descriptor = calloc(n * a->ndims, sizeof *a->descriptor);
    if (!a->fitness || !a->curiosity || !a->children || !a->improved ||
        !a->cand || (a->ndims > 0 && !a->descriptor)) {
        free_cells(a);
        return kevo__error_set(err, KEVO_ENOMEM,
                               "archive: out of memory for %zu cells", n);
    }
    for (size_t i = 0; i < n; i++)
        a->fitness[i] = -INFINITY;
    return KEVO_OK;
}

/* Moves the weights into a tree with room for cap leaves. */
static bool weights_grow(kevo__archive_weights *w, size_t n, size_t cap)
{
    size_t span = 1;
    while (span < cap)
        span *= 2;
    if (w->tree && span <= w->span)
        return true;
    double *tree = calloc(2 * span, sizeof *tree);
    if (!tree)
        return false;
    if (w->tree)
        memcpy(&tree[span], &w->tree[w->span], n * sizeof *tree);
    free(w->tree);
    w->tree = tree;
    w->span = span;
    w->stale = true;
    return true;
}

/* Room for one more filled cell (and its weight, once there are weights). */
static kevo_status reserve_filled(kevo_archive *a, kevo_error *err)
{
    if (a->nfilled < a->filled_cap)
        return KEVO_OK;
    size_t cap = a->filled_cap ? a->filled_cap * 2 : 64;
    if (cap > a->ncells)
        cap = a->ncells;
    uint32_t *filled = realloc(a->filled, cap * sizeof *filled);
    if (!filled)
        goto nomem;
    a->filled = filled;
    for (size_t r = 0; r < 2; r++) {
        kevo__archive_weights *w = &a->weights[r];
        if (w->tree && !weights_grow(w, a->nfilled, cap))
            goto nomem;
    }
    a->filled_cap = cap;
    return KEVO_OK;
nomem:
    return kevo__error_set(err, KEVO_ENOMEM, "archive: out of memory");
}

/* The position of cell in the filled list, or of the first filled cell
 * above it. */
static size_t filled_lower_bound(const kevo_archive *a, size_t cell)
{
    size_t lo = 0, hi = a->nfilled;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->filled[mid] < cell)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double rule_key(const kevo_archive *a, kevo_selection how, size_t cell)
{
    return how == KEVO_SELECT_SOFTMAX ? a->fitness[cell] : a->curiosity[cell];
}

/* The cached weights of a softmax rule. */
static kevo__archive_weights *weights_of(kevo_archive *a, kevo_selection how)
{
    return &a->weights[how == KEVO_SELECT_SOFTMAX ? 0 : 1];
}

/* How many temperatures a bucket of keys spans. */
#define BUCKET_SPAN 64.0
/* Bucket numbers above this are not exact enough to use. */
#define BUCKET_MAX 1099511627776.0

static double bucket_of(const kevo__archive_weights *w, double key)
{
    return w->exact ? key : floor(key / w->width + 0.5);
}

/*
 * Patches the weights w after the key of the filled cell at position pos
 * changed from old to key; inserted says the cell has just joined the list
 * (and old means nothing). When the highest bucket changes, the weights are
 * dropped instead, to be rebuilt by the next select.
 */
static void weights_changed(const kevo_archive *a, kevo__archive_weights *w,
                            size_t pos, bool inserted, double old, double key)
{
    if (!w->valid)
        return;
    double b = bucket_of(w, key);
    if (b > w->top) {
        w->valid = false;
        return;
    }
    if (!inserted && bucket_of(w, old) == w->top)
        w->ntop--;
    if (b == w->top)
        w->ntop++;
    if (w->ntop == 0) {
        w->valid = false;
        return;
    }
    double *leaf = &w->tree[w->span];
    if (inserted) {
        memmove(&leaf[pos + 1], &leaf[pos],
                (a->nfilled - 1 - pos) * sizeof *leaf);
        w->stale = true;
    }
    leaf[pos] = exp((key - w->ref) / w->temperature);
    if (!w->stale) {
        for (size_t j = (w->span + pos) / 2; j > 0; j /= 2)
            w->tree[j] = w->tree[2 * j] + w->tree[2 * j + 1];
    }
}

/* Makes elite the elite of cell (the filled list has room when the cell is
 * empty) and updates the weights. */
static void set_elite(kevo_archive *a, size_t cell, kevo_candidate *elite,
                      double fitness, const double *descriptor,
                      double curiosity, uint64_t children, uint64_t improved)
{
    bool fresh = a->cand[cell] == NULL;
    double old[2] = {0, 0};
    if (!fresh) {
        old[0] = a->fitness[cell];
        old[1] = a->curiosity[cell];
    }
    kevo__archive_drop_notes(a, cell);
    kevo_candidate_free(a->cand[cell]);
    a->cand[cell] = elite;
    a->fitness[cell] = fitness;
    a->curiosity[cell] = curiosity;
    a->children[cell] = children;
    a->improved[cell] = improved;
    if (a->ndims > 0)
        memcpy(&a->descriptor[cell * a->ndims], descriptor,
               a->ndims * sizeof *descriptor);
    size_t pos = KEVO_NO_CELL;
    if (fresh) {
        pos = filled_lower_bound(a, cell);
        memmove(&a->filled[pos + 1], &a->filled[pos],
                (a->nfilled - pos) * sizeof *a->filled);
        a->filled[pos] = (uint32_t)cell;
        a->nfilled++;
    }
    for (size_t r = 0; r < 2; r++) {
        kevo__archive_weights *w = &a->weights[r];
        if (!w->valid)
            continue;
        if (pos == KEVO_NO_CELL)
            pos = filled_lower_bound(a, cell);
        weights_changed(a, w, pos, fresh, old[r], rule_key(a, w->how, cell));
    }
}

kevo_status kevo__archive_place(kevo_archive *archive, size_t cell,
                                kevo_candidate *elite, double fitness,
                                const double *descriptor, double curiosity,
                                uint64_t children, uint64_t improved,
                                kevo_error *err)
{
    kevo_status rc = alloc_cells(archive, err);
    if (rc == KEVO_OK)
        rc = reserve_filled(archive, err);
    if (rc != KEVO_OK) {
        kevo_candidate_free(elite);
        return rc;
    }
    set_elite(archive, cell, elite, fitness, descriptor, curiosity, children,
              improved);
    return KEVO_OK;
}

/* Both inserts: cand is copied, or owned (when not NULL) is taken. */
static kevo_status insert(kevo_archive *a, const kevo_candidate *cand,
                          kevo_candidate *owned, double fitness,
                          const double *descriptor,
                          kevo_insert_outcome *outcome, size_t *cellp,
                          kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    kevo_insert_outcome result = KEVO_INSERT_REJECTED;
    size_t cell = KEVO_NO_CELL;
    kevo_candidate *elite;
    bool fresh;
    if (!a || !cand) {
        rc = kevo__error_set(err, KEVO_EINVAL,
                             "kevo_archive_insert: archive and candidate must "
                             "not be NULL");
        goto out;
    }
    if (!isfinite(fitness)) {
        rc = kevo__error_set(err, KEVO_EINVAL,
                             "fitness %g is not a finite number; only "
                             "candidates with a finite fitness may enter the "
                             "archive",
                             fitness);
        goto out;
    }
    rc = checked_cell(a, descriptor, &cell, err);
    if (rc != KEVO_OK)
        goto out;
    if (!a->fitness && (rc = alloc_cells(a, err)) != KEVO_OK)
        goto out;
    if (!(fitness > a->fitness[cell])) {
        a->inserts++;
        goto out;
    }
    fresh = a->cand[cell] == NULL;
    if (fresh && (rc = reserve_filled(a, err)) != KEVO_OK)
        goto out;
    elite = owned ? owned : kevo__candidate_share(cand);
    owned = NULL;
    set_elite(a, cell, elite, fitness, descriptor, 0, 0, 0);
    a->inserts++;
    a->accepted++;
    result = fresh ? KEVO_INSERT_NEW_CELL : KEVO_INSERT_REPLACED;
out:
    kevo_candidate_free(owned);
    if (outcome)
        *outcome = result;
    if (cellp)
        *cellp = rc == KEVO_OK ? cell : KEVO_NO_CELL;
    return rc;
}

kevo_status kevo_archive_insert(kevo_archive *archive,
                                const kevo_candidate *cand, double fitness,
                                const double *descriptor,
                                kevo_insert_outcome *outcome, size_t *cell,
                                kevo_error *err)
{
    return insert(archive, cand, NULL, fitness, descriptor, outcome, cell, err);
}

kevo_status kevo_archive_insert_adopt(kevo_archive *archive,
                                      kevo_candidate *cand, double fitness,
                                      const double *descriptor,
                                      kevo_insert_outcome *outcome,
                                      size_t *cell, kevo_error *err)
{
    return insert(archive, cand, cand, fitness, descriptor, outcome, cell, err);
}

/* ---- reading ----------------------------------------------------------- */

static bool is_filled(const kevo_archive *a, size_t cell)
{
    return a && a->cand && cell < a->ncells && a->cand[cell];
}

size_t kevo_archive_size(const kevo_archive *archive)
{
    return archive ? archive->nfilled : 0;
}

size_t kevo_archive_first(const kevo_archive *archive)
{
    return archive && archive->nfilled ? archive->filled[0] : KEVO_NO_CELL;
}

size_t kevo_archive_next(const kevo_archive *archive, size_t cell)
{
    if (!archive || archive->nfilled == 0 || cell >= archive->ncells)
        return KEVO_NO_CELL;
    size_t pos = filled_lower_bound(archive, cell + 1);
    return pos < archive->nfilled ? archive->filled[pos] : KEVO_NO_CELL;
}

const kevo_candidate *kevo_archive_candidate(const kevo_archive *archive,
                                             size_t cell)
{
    return is_filled(archive, cell) ? archive->cand[cell] : NULL;
}

double kevo_archive_fitness(const kevo_archive *archive, size_t cell)
{
    return is_filled(archive, cell) ? archive->fitness[cell] : NAN;
}

kevo_status kevo_archive_descriptor(const kevo_archive *archive, size_t cell,
                                    double *descriptor)
{
    if (!archive || (archive->ndims > 0 && !descriptor))
        return KEVO_EINVAL;
    if (!is_filled(archive, cell))
        return KEVO_ENOENT;
    if (archive->ndims > 0)
        memcpy(descriptor, &archive->descriptor[cell * archive->ndims],
               archive->ndims * sizeof *descriptor);
    return KEVO_OK;
}

double kevo_archive_curiosity(const kevo_archive *archive, size_t cell)
{
    return is_filled(archive, cell) ? archive->curiosity[cell] : 0;
}

/* ---- selection --------------------------------------------------------- */

static kevo_status weights_rebuild(kevo_archive *a, kevo_selection how,
                                   double temperature, kevo_error *err)
{
    kevo__archive_weights *w = weights_of(a, how);
    if (!w->tree && !weights_grow(w, 0, a->filled_cap))
        return kevo__error_set(err, KEVO_ENOMEM,
                               "archive: out of memory for the selection "
                               "weights");
    double max = -INFINITY;
    for (size_t i = 0; i < a->nfilled; i++) {
        double k = rule_key(a, how, a->filled[i]);
        if (k > max)
            max = k;
    }
    w->how = how;
    w->temperature = temperature;
    w->width = BUCKET_SPAN * temperature;
    if (!isfinite(w->width))
        w->width = DBL_MAX;
    w->exact = false;
    w->top = bucket_of(w, max);
    w->ref = (w->top + 0.5) * w->width;
    if (!(fabs(w->top) <= BUCKET_MAX) || !isfinite(w->ref)) {
        w->exact = true;
        w->top = w->ref = max;
    }
    w->ntop = 0;
    double *leaf = &w->tree[w->span];
    for (size_t i = 0; i < a->nfilled; i++) {
        double k = rule_key(a, how, a->filled[i]);
        w->ntop += bucket_of(w, k) == w->top;
        leaf[i] = exp((k - w->ref) / temperature);
    }
    for (size_t i = a->nfilled; i < w->span; i++)
        leaf[i] = 0;
    w->stale = true;
    w->valid = true;
    return KEVO_OK;
}

/* The position picked with probability proportional to its weight. */
static size_t weights_pick(kevo__archive_weights *w, kevo_rng *rng)
{
    double *t = w->tree;
    if (w->stale) {
        for (size_t j = w->span - 1; j > 0; j--)
            t[j] = t[2 * j] + t[2 * j + 1];
        w->stale = false;
    }
    /* Each step goes to a child whose sum exceeds what is left of u, or,
     * when rounding left u at the sum of the right child, to the left one;
     * either way to a subtree of positive weight. */
    double u = kevo_rng_uniform(rng) * t[1];
    size_t j = 1;
    while (j < w->span) {
        if (u < t[2 * j] || !(t[2 * j + 1] > 0)) {
            j = 2 * j;
        } else {
            u -= t[2 * j];
            j = 2 * j + 1;
        }
    }
    return j - w->span;
}

kevo_status kevo_archive_select(kevo_archive *archive, kevo_rng *rng,
                                kevo_selection how, double temperature,
                                size_t *cell, kevo_error *err)
{
    kevo_archive *a = archive;
    if (!a || !rng || !cell)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_select: archive, rng and cell "
                               "must not be NULL");
    if (how != KEVO_SELECT_UNIFORM && how != KEVO_SELECT_SOFTMAX &&
        how != KEVO_SELECT_CURIOSITY)
        return kevo__error_set(err, KEVO_EINVAL,
                               "unknown selection rule %d (uniform 0, softmax "
                               "1, curiosity 2)",
                               (int)how);
    if (how != KEVO_SELECT_UNIFORM &&
        !(temperature > 0 && isfinite(temperature)))
        return kevo__error_set(err, KEVO_EINVAL,
                               "selection temperature %g: it must be a finite "
                               "number above 0",
                               temperature);
    if (a->nfilled == 0)
        return kevo__error_set(err, KEVO_ENOENT,
                               "the archive is empty: nothing to select "
                               "(insert the seed first)");
    if (how == KEVO_SELECT_UNIFORM) {
        *cell = a->filled[kevo_rng_uniform_int(rng, a->nfilled)];
        return KEVO_OK;
    }
    kevo__archive_weights *w = weights_of(a, how);
    if (!w->valid || w->temperature != temperature) {
        kevo_status rc = weights_rebuild(a, how, temperature, err);
        if (rc != KEVO_OK)
            return rc;
    }
    *cell = a->filled[weights_pick(w, rng)];
    return KEVO_OK;
}

/* x ranks before y: fitter, or as fit and in a lower cell. */
static inline bool ranks_before(const kevo_archive *a, size_t x, size_t y)
{
    double fx = a->fitness[x], fy = a->fitness[y];
    return fx > fy || (fx == fy && x < y);
}

/* The heap of the fittest cells keeps the one that ranks last at the
 * root. */
static void heap_down(const kevo_archive *a, size_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t worst = i, l = 2 * i + 1, r = l + 1;
        if (l < n && ranks_before(a, h[worst], h[l]))
            worst = l;
        if (r < n && ranks_before(a, h[worst], h[r]))
            worst = r;
        if (worst == i)
            return;
        size_t t = h[i];
        h[i] = h[worst];
        h[worst] = t;
        i = worst;
    }
}

static void heap_up(const kevo_archive *a, size_t *h, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!ranks_before(a, h[parent], h[i]))
            return;
        size_t t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

kevo_status kevo_archive_inspirations(kevo_archive *archive, kevo_rng *rng,
                                      size_t exclude, size_t k, size_t *cells,
                                      size_t *n, kevo_error *err)
{
    kevo_archive *a = archive;
    if (!a || !rng || !n || (k > 0 && !cells))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_inspirations: archive, rng, n "
                               "and cells must not be NULL");
    *n = 0;
    size_t avail = a->nfilled - (is_filled(a, exclude) ? 1 : 0);
    size_t nbest = k - k / 2;
    if (nbest > avail)
        nbest = avail;
    size_t total = k < avail ? k : avail;
    if (total == 0)
        return KEVO_OK;

    /* The fittest nbest, by a heap in cells[], then sorted fittest first. */
    size_t h = 0;
    for (size_t i = 0; i < a->nfilled; i++) {
        size_t c = a->filled[i];
        if (c == exclude)
            continue;
        if (h < nbest) {
            cells[h++] = c;
            heap_up(a, cells, h - 1);
        } else if (ranks_before(a, c, cells[0])) {
            cells[0] = c;
            heap_down(a, cells, h, 0);
        }
    }
    for (size_t end = h - 1; end > 0; end--) {
        size_t t = cells[0];
        cells[0] = cells[end];
        cells[end] = t;
        heap_down(a, cells, end, 0);
    }
    size_t last = cells[nbest - 1];

    /* The rest uniformly among the cells neither excluded nor taken. */
    size_t got = nbest, pool = avail - nbest, want = total - nbest;
    if (2 * want <= pool) {
        /* Few among many: draw and redraw the ones already taken. */
        while (got < total) {
            size_t c = a->filled[kevo_rng_uniform_int(rng, a->nfilled)];
            if (c == exclude || !ranks_before(a, last, c))
                continue;
            bool dup = false;
            for (size_t j = nbest; j < got && !dup; j++)
                dup = cells[j] == c;
            if (!dup)
                cells[got++] = c;
        }
    } else {
        /* Most of them: one pass of selection sampling, then a shuffle. */
        size_t left = pool;
        for (size_t i = 0; i < a->nfilled && got < total; i++) {
            size_t c = a->filled[i];
            if (c == exclude || !ranks_before(a, last, c))
                continue;
            if (kevo_rng_uniform_int(rng, left) < total - got)
                cells[got++] = c;
            left--;
        }
        for (size_t j = got - 1; j > nbest; j--) {
            size_t r = nbest + kevo_rng_uniform_int(rng, j - nbest + 1);
            size_t t = cells[j];
            cells[j] = cells[r];
            cells[r] = t;
        }
    }
    *n = got;
    return KEVO_OK;
}

kevo_status kevo_archive_credit(kevo_archive *archive, size_t cell,
                                uint64_t parent_id, int improved)
{
    kevo_archive *a = archive;
    if (!a)
        return KEVO_EINVAL;
    if (!is_filled(a, cell) || kevo_candidate_id(a->cand[cell]) != parent_id)
        return KEVO_ENOENT;
    double old = a->curiosity[cell];
    a->children[cell]++;
    if (improved) {
        a->improved[cell]++;
        a->curiosity[cell] = old + 1;
    } else {
        a->curiosity[cell] = old - 0.5;
    }
    kevo__archive_weights *w = weights_of(a, KEVO_SELECT_CURIOSITY);
    if (w->valid)
        weights_changed(a, w, filled_lower_bound(a, cell), false, old,
                        a->curiosity[cell]);
    return KEVO_OK;
}

kevo_status kevo_archive_get_stats(const kevo_archive *archive,
                                   kevo_archive_stats *stats)
{
    const kevo_archive *a = archive;
    if (!a || !stats ||
        (stats->size != 0 && stats->size != sizeof(kevo_archive_stats)))
        return KEVO_EINVAL;
    memset(stats, 0, sizeof *stats);
    stats->size = sizeof *stats;
    stats->cells = a->ncells;
    stats->filled = a->nfilled;
    stats->coverage = (double)a->nfilled / (double)a->ncells;
    stats->best_fitness = NAN;
    stats->best_cell = KEVO_NO_CELL;
    for (size_t i = 0; i < a->nfilled; i++) {
        size_t c = a->filled[i];
        stats->qd_score += a->fitness[c];
        if (stats->best_cell == KEVO_NO_CELL ||
            a->fitness[c] > stats->best_fitness) {
            stats->best_fitness = a->fitness[c];
            stats->best_cell = c;
        }
    }
    stats->inserts = a->inserts;
    stats->accepted = a->accepted;
    return KEVO_OK;
}
