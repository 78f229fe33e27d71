/*
 * suite_util.h: what the task-suite tests (nvrtc-suite, gpu/gpu-suite)
 * and the tests of the worker's own kernels (nvrtc-worker, nvrtc-peaks)
 * share: finding the task files, the parameter variants of a seed,
 * compiling a candidate with NVRTC at its parameters, the architectures
 * NVRTC knows, the text of a PTX entry and printing logs as TAP comments.
 * (What each launch argument passes comes from lib/model/launch_args.h, the
 * check of the launches against the compiled kernels from
 * lib/eval/launch_check.h.)
 */
#ifndef KEVO_SUITE_UTIL_H
#define KEVO_SUITE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kevo_private.h"
#include "model/candidate_private.h"

/* The task files (*.json) of dir, sorted, as a NULL-terminated array of
 * paths that suite_strv_free() frees; NULL when dir cannot be read (errno
 * says why) or on no memory. *n is the count. */
char **suite_task_files(const char *dir, size_t *n);
void suite_strv_free(char **v);

/* One variant of a candidate: name NULL for the defaults, else parameter
 * name at value and every other parameter at its default. */
typedef struct suite_variant {
    const char *name; /* borrowed from the candidate's space */
    int64_t value;
} suite_variant;

/* The defaults, then the smallest and the largest value of each parameter
 * in declaration order, leaving out a value equal to the default. Returns a
 * new array (free()) of *n variants, or NULL on no memory. */
suite_variant *suite_variants(const kevo_candidate *cand, size_t *n);

/* A copy of cand set to the variant; NULL on failure (err says why). */
kevo_candidate *suite_variant_apply(const kevo_candidate *cand,
                                    const suite_variant *v, kevo_error *err);

/* "BLOCK=1024" or "defaults", in buf. */
const char *suite_variant_text(const suite_variant *v, char *buf, size_t size);

/* A new set of variables for shape i of set: the dims, then the device
 * properties (devprops, or the nominal device when NULL). NULL on no
 * memory or a bad index. */
kevo_vars *suite_shape_env(const kevo_task *task, kevo_shape_set set, size_t i,
                           const kevo_vars *devprops);

/* "rows=8192, cols=4096" for shape i of set, in buf. */
const char *suite_shape_text(const kevo_task *task, kevo_shape_set set,
                             size_t i, char *buf, size_t size);

/* True when cand's constraints hold for shape i of set (nominal device
 * when devprops is NULL); otherwise err says which constraint fails. */
bool suite_allowed(const kevo_candidate *cand, const kevo_task *task,
                   kevo_shape_set set, size_t i, const kevo_vars *devprops,
                   kevo_error *err);

/* The fixed NVRTC options plus -DNAME=value for each parameter. */
#define SUITE_OPTIONS_MAX 64

/* The result of compiling a candidate. */
typedef enum suite_compile_status {
    SUITE_COMPILED = 0,       /* image holds PTX or a cubin */
    SUITE_COMPILE_ERROR = 1,  /* the source does not compile: see log */
    SUITE_MISSING_KERNEL = 2, /* compiles, but a launched kernel is not
                               * there: lowered[i] is NULL for it */
    SUITE_NVRTC_FAILURE = 3   /* NVRTC itself failed: see log */
} suite_compile_status;

typedef struct suite_build {
    suite_compile_status status;
    char *image; /* PTX text (NUL-terminated) or cubin bytes */
    size_t size;
    char *log;      /* the compile log, "" when empty; never NULL after
                     * suite_compile() returned true */
    char **lowered; /* per launch: the lowered kernel name, or NULL */
    size_t nlaunches;
    double seconds; /* wall time of the compile */
} suite_build;

/*
 * Compiles cand's source with NVRTC at its current assignment for arch
 * ("compute_90" gives PTX, "sm_90" a cubin when cubin is true), with
 * --gpu-architecture=ARCH --std=c++17 -DKEVO=1 and -DNAME=VALUE for every
 * parameter, with the toolkit headers the compile worker offers (loaded
 * once; <cuda_bf16.h>, <mma.h>, ...), and looks up every launched kernel's
 * lowered name. Returns
 * false only when out of memory; the outcome is in out->status.
 */
bool suite_compile(const kevo_candidate *cand, const char *arch, bool cubin,
                   suite_build *out);
void suite_build_free(suite_build *b);

/* The text of the PTX entry called name, from its ".entry" up to the next
 * entry, in a new string (NULL when there is no such entry or on no
 * memory). */
char *suite_ptx_entry_text(const char *ptx, const char *name);

/* The architectures NVRTC compiles for from min on (75 for sm_75), in a
 * new array of *n; bails out when NVRTC does not list them. */
int *suite_nvrtc_archs(int min, int *n);

/* Seconds of CLOCK_MONOTONIC, for timing. */
double suite_now_seconds(void);

/* The index of the smallest training shape of task by footprint. */
size_t suite_smallest_shape(const kevo_task *task);

/* Prints heading (unless NULL) and then each line of text (NULL: none),
 * indented by two spaces, as TAP comments; blank lines are left out. */
void suite_diag_text(const char *heading, const char *text);

#endif
