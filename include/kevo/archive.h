/*
 * kevo/archive.h: the MAP-Elites archive. A grid over behaviour dimensions
 * (memory strategy, block size, occupancy, ...), each split into bins; every
 * cell holds at most one elite, the fittest candidate seen with that
 * behaviour.
 *
 * A cell is named by its index in [0, kevo_archive_cell_count()); the index
 * stays valid for the archive's life, while the elite in it may be replaced
 * by a strictly fitter one.
 */
#ifndef KEVO_ARCHIVE_H
#define KEVO_ARCHIVE_H

#include <kevo/candidate.h>
#include <kevo/error.h>
#include <kevo/rng.h>
#include <kevo/task.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_archive kevo_archive;

/* No cell: what the iteration functions return past the last elite. */
#define KEVO_NO_CELL ((size_t)-1)

/* The most cells an archive may have. */
#define KEVO_ARCHIVE_CELLS_MAX ((size_t)1 << 24)

/* How kevo_archive_select() picks a parent. */
typedef enum kevo_selection {
    /* every elite equally likely */
    KEVO_SELECT_UNIFORM = 0,
    /* probability proportional to exp(fitness / temperature) */
    KEVO_SELECT_SOFTMAX = 1,
    /* probability proportional to exp(curiosity / temperature), where an
     * elite's curiosity rises by 1 for each child that entered the archive
     * and falls by 0.5 for each that did not (kevo_archive_credit()) */
    KEVO_SELECT_CURIOSITY = 2
} kevo_selection;

/* What kevo_archive_insert() did. */
typedef enum kevo_insert_outcome {
    KEVO_INSERT_REJECTED = 0, /* the cell holds an elite at least as fit */
    KEVO_INSERT_NEW_CELL = 1, /* the cell was empty */
    KEVO_INSERT_REPLACED = 2  /* the candidate replaced a less fit elite */
} kevo_insert_outcome;

/*
 * Archive statistics, filled by kevo_archive_get_stats(). The caller allocates
 * it and sets size to sizeof(kevo_archive_stats) (or zero-initialises it).
 */
typedef struct kevo_archive_stats {
    size_t size;
    size_t cells;        /* cells in the grid */
    size_t filled;       /* cells holding an elite */
    double coverage;     /* filled / cells */
    double qd_score;     /* sum of the elites' fitness */
    double best_fitness; /* the best elite's fitness; NaN when empty */
    size_t best_cell;    /* its cell; KEVO_NO_CELL when empty */
    uint64_t inserts;    /* kevo_archive_insert() calls that were judged */
    uint64_t accepted;   /* of those, how many entered the archive */
    unsigned char reserved[64];
} kevo_archive_stats;

/* kevo_archive_new: an archive with no dimensions yet (add them before the
 * first insert). Returns NULL when out of memory. */
KEVO_API kevo_archive *kevo_archive_new(void);

/*
 * kevo_archive_new_for_task: an archive with the behaviour dimensions and
 * bins that task chooses, in *out. Returns KEVO_OK or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_archive_new_for_task(const kevo_task *task,
                                               kevo_archive **out,
                                               kevo_error *err);

/* kevo_archive_free: frees the archive and its elites. NULL does nothing. */
KEVO_API void kevo_archive_free(kevo_archive *archive);

/*
 * kevo_archive_add_dimension: appends a behaviour dimension called name
 * (copied) of nbins equal bins over [lo, hi); values below lo fall in the
 * first bin and values at or above hi in the last. Returns KEVO_OK;
 * KEVO_EINVAL for nbins 0, lo >= hi or non-finite bounds; KEVO_EEXIST for a
 * name already used; KEVO_ELIMIT when the grid would exceed
 * KEVO_ARCHIVE_CELLS_MAX cells; KEVO_ESTATE once the archive holds an
 * elite.
 */
KEVO_API kevo_status kevo_archive_add_dimension(kevo_archive *archive,
                                                const char *name, size_t nbins,
                                                double lo, double hi,
                                                kevo_error *err);

/*
 * kevo_archive_add_dimension_edges: appends a dimension split at n strictly
 * increasing finite edges (copied) into n + 1 bins: bin k holds values v
 * with edges[k-1] <= v < edges[k]. Errors as kevo_archive_add_dimension().
 */
KEVO_API kevo_status kevo_archive_add_dimension_edges(kevo_archive *archive,
                                                      const char *name,
                                                      const double *edges,
                                                      size_t n,
                                                      kevo_error *err);

/* kevo_archive_dimension_count: how many behaviour dimensions there are. */
KEVO_API size_t kevo_archive_dimension_count(const kevo_archive *archive);

/* kevo_archive_dimension_name: dimension d's name, borrowed, or NULL. */
KEVO_API const char *kevo_archive_dimension_name(const kevo_archive *archive,
                                                 size_t d);

/* kevo_archive_dimension_bins: how many bins dimension d has (0 when out of
 * range). */
KEVO_API size_t kevo_archive_dimension_bins(const kevo_archive *archive,
                                            size_t d);

/* kevo_archive_cell_count: cells in the grid (the product of the bins; 1
 * with no dimension). */
KEVO_API size_t kevo_archive_cell_count(const kevo_archive *archive);

/*
 * kevo_archive_cell_of: the cell of a behaviour: descriptor holds one value
 * per dimension. Returns KEVO_OK, or KEVO_EINVAL for a NaN value.
 */
KEVO_API kevo_status kevo_archive_cell_of(const kevo_archive *archive,
                                          const double *descriptor,
                                          size_t *cell, kevo_error *err);

/*
 * kevo_archive_insert: offers a candidate with its fitness (finite; higher
 * is better) and behaviour (one value per dimension). It enters the cell
 * when the cell is empty or the candidate is strictly fitter than the
 * elite there; the archive then keeps a reference to it (kevo_candidate_ref:
 * the candidate is shared from then on). outcome and cell (either may
 * be NULL) say what happened and where. Returns KEVO_OK (also when
 * rejected), KEVO_EINVAL for a non-finite fitness or a NaN descriptor, or
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_archive_insert(kevo_archive *archive,
                                         const kevo_candidate *cand,
                                         double fitness,
                                         const double *descriptor,
                                         kevo_insert_outcome *outcome,
                                         size_t *cell, kevo_error *err);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_archive_insert_adopt: as kevo_archive_insert(), but takes ownership of
 * cand whatever happens: the archive keeps it, or frees it when it is
 * rejected or the call fails.
 */
KEVO_API kevo_status kevo_archive_insert_adopt(kevo_archive *archive,
                                               kevo_candidate *cand,
                                               double fitness,
                                               const double *descriptor,
                                               kevo_insert_outcome *outcome,
                                               size_t *cell, kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

/* kevo_archive_size: how many cells hold an elite. */
KEVO_API size_t kevo_archive_size(const kevo_archive *archive);

/* kevo_archive_first: the lowest filled cell, or KEVO_NO_CELL. */
KEVO_API size_t kevo_archive_first(const kevo_archive *archive);

/* kevo_archive_next: the next filled cell after cell, or KEVO_NO_CELL. */
KEVO_API size_t kevo_archive_next(const kevo_archive *archive, size_t cell);

/*
 * kevo_archive_candidate: the elite of cell, borrowed from the archive and
 * valid until the cell's elite is replaced; NULL for an empty cell.
 */
KEVO_API const kevo_candidate *
kevo_archive_candidate(const kevo_archive *archive, size_t cell);

/* kevo_archive_fitness: the fitness of cell's elite; NaN when empty. */
KEVO_API double kevo_archive_fitness(const kevo_archive *archive, size_t cell);

/*
 * kevo_archive_descriptor: copies the behaviour of cell's elite (one value
 * per dimension) into descriptor. Returns KEVO_OK or KEVO_ENOENT for an
 * empty cell.
 */
KEVO_API kevo_status kevo_archive_descriptor(const kevo_archive *archive,
                                             size_t cell, double *descriptor);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/* kevo_archive_curiosity: the curiosity of cell's elite (0 when empty). */
KEVO_API double kevo_archive_curiosity(const kevo_archive *archive,
                                       size_t cell);

/*
 * kevo_archive_select: picks a parent cell with the rule how (temperature >
 * 0 for the softmax rules; ignored for KEVO_SELECT_UNIFORM) and stores it in
 * *cell. Returns KEVO_OK, KEVO_ENOENT when the archive is empty, or
 * KEVO_EINVAL for a bad rule or temperature.
 */
KEVO_API kevo_status kevo_archive_select(kevo_archive *archive, kevo_rng *rng,
                                         kevo_selection how, double temperature,
                                         size_t *cell, kevo_error *err);

/*
 * kevo_archive_inspirations: picks up to k distinct filled cells other than
 * exclude (pass KEVO_NO_CELL to exclude none) to show beside a parent: the
 * fittest ones first, then, for the second half, uniformly among the rest.
 * Stores them in cells (room for k) and their number in *n. Returns KEVO_OK.
 */
KEVO_API kevo_status kevo_archive_inspirations(kevo_archive *archive,
                                               kevo_rng *rng, size_t exclude,
                                               size_t k, size_t *cells,
                                               size_t *n, kevo_error *err);

/*
 * kevo_archive_credit: tells the archive how a child of the elite with id
 * parent_id in cell fared: improved is non-zero when the child entered the
 * archive. Updates that elite's curiosity; ignored (returns KEVO_ENOENT)
 * when the cell no longer holds that elite.
 */
KEVO_API kevo_status kevo_archive_credit(kevo_archive *archive, size_t cell,
                                         uint64_t parent_id, int improved);
#endif /* KEVO_EXPERIMENTAL */

/* kevo_archive_get_stats: fills *stats. Returns KEVO_OK or KEVO_EINVAL. */
KEVO_API kevo_status kevo_archive_get_stats(const kevo_archive *archive,
                                            kevo_archive_stats *stats);

/*
 * kevo_archive_to_json: the whole archive (dimensions, elites with their
 * candidates, curiosity and counters) as JSON text in a new string that the
 * caller frees with free(). kevo_archive_from_json() of the text gives an
 * archive whose JSON is the same text, byte for byte.
 */
KEVO_API kevo_status kevo_archive_to_json(const kevo_archive *archive,
                                          char **json, kevo_error *err);

/*
 * kevo_archive_from_json: a new archive from kevo_archive_to_json() text in
 * *out; origin names it in messages (may be NULL). Returns KEVO_OK,
 * KEVO_EPARSE with line and column, KEVO_EFORMAT for another format or
 * version, KEVO_EINVALID naming the JSON path of a bad value, or
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_archive_from_json(const char *json,
                                            const char *origin,
                                            kevo_archive **out,
                                            kevo_error *err);

/*
 * kevo_archive_save: writes kevo_archive_to_json() to path atomically (a
 * temporary file, fsync, rename): a crash leaves the old file or the new
 * one, never half of one. Returns KEVO_OK, KEVO_EIO or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_archive_save(const kevo_archive *archive,
                                       const char *path, kevo_error *err);

/* kevo_archive_load: kevo_archive_from_json() of the file at path. */
KEVO_API kevo_status kevo_archive_load(const char *path, kevo_archive **out,
                                       kevo_error *err);

#ifdef __cplusplus
}
#endif

#endif
