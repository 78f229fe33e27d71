/*
 * nvrtc-suite: compiles every reference, baseline and seed kernel of the
 * task suite (each examples/tasks/NAME.json) with NVRTC for compute_90 PTX,
 * with no GPU, offering the toolkit headers the compile worker offers
 * (<mma.h>, <cuda_bf16.h>, ...): the reference, the baseline of a task
 * judged relative to one (kevo_task_set_baseline()), the seed at its
 * default parameters, and the seed at the smallest and the largest value of
 * each parameter (one at a time, the others at their defaults). For each
 * compile: no errors, every kernel the launch block names is there, and
 * each PTX entry takes exactly the parameters the launch passes, each of
 * the right kind and width (kevo__launch_check_ptx).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "eval/launch_check.h"
#include "suite_util.h"
#include "tap.h"

#define ARCH "compute_90"
#define MIN_TASKS 13

/* Checks the compiled launches of cand against their kernels' parameter
 * lists (lib/eval/launch_check.h); appends what is wrong to problems. */
static void check_launches(const kevo_task *task, const kevo_candidate *cand,
                           const suite_build *b, kevo_buf *problems)
{
    kevo_error err = KEVO__ERROR_INIT;
    for (size_t i = 0; i < b->nlaunches; i++) {
        if (!b->lowered[i])
            kevo__buf_printf(problems,
                             "kernel '%s' (launch %zu) is not in the source\n",
                             kevo_candidate_launch_kernel(cand, i), i + 1);
    }
    if (kevo__launch_check_ptx(task, cand, b->image, b->size, b->lowered,
                               b->nlaunches, &err) != KEVO_OK)
        kevo__buf_printf(problems, "%s\n", err.text);
}

/* Compiles cand and checks every launch: one TAP line. */
static void check_compile(const kevo_task *task, const kevo_candidate *cand,
                          const char *what)
{
    suite_build b;
    kevo_buf problems = {0};
    const char *name = kevo_task_name(task);

    if (!suite_compile(cand, ARCH, false, &b))
        bail_out("out of memory compiling %s %s", name, what);
    switch (b.status) {
    case SUITE_COMPILED:
    case SUITE_MISSING_KERNEL: check_launches(task, cand, &b, &problems); break;
    case SUITE_COMPILE_ERROR:
        kevo__buf_puts(&problems, "does not compile\n");
        break;
    case SUITE_NVRTC_FAILURE:
        kevo__buf_puts(&problems, "NVRTC failed\n");
        break;
    }
    if (problems.failed)
        bail_out("out of memory");
    if (!ok(problems.len == 0 && b.status == SUITE_COMPILED,
            "%s: %s compiles for " ARCH " and matches its launches (%.2f s)",
            name, what, b.seconds)) {
        suite_diag_text("problems:", problems.data);
        if (b.log && *b.log)
            suite_diag_text("NVRTC log:", b.log);
    } else if (b.log && *b.log) {
        suite_diag_text("NVRTC log (warnings):", b.log);
    }
    kevo__buf_free(&problems);
    suite_build_free(&b);
}

/* The seed at each variant whose constraints some training shape allows. */
static void check_seed_variants(const kevo_task *task)
{
    const kevo_candidate *seed = kevo_task_seed(task);
    size_t nv = 0;
    suite_variant *vars = suite_variants(seed, &nv);
    if (!vars)
        bail_out("out of memory");
    for (size_t v = 0; v < nv; v++) {
        char vt[128], what[192];
        kevo_error err = KEVO__ERROR_INIT;
        kevo_candidate *c = suite_variant_apply(seed, &vars[v], &err);
        suite_variant_text(&vars[v], vt, sizeof(vt));
        snprintf(what, sizeof(what), "seed at %s", vt);
        if (!c) {
            ok(0, "%s: %s", kevo_task_name(task), what);
            diag("%s", err.text);
            continue;
        }
        bool allowed = false;
        size_t ns = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
        kevo_error why = KEVO__ERROR_INIT;
        for (size_t s = 0; s < ns && !allowed; s++) {
            kevo_error e = KEVO__ERROR_INIT;
            allowed = suite_allowed(c, task, KEVO_SHAPES_TRAIN, s, NULL, &e);
            if (!allowed && why.code == KEVO_OK)
                why = e;
        }
        if (allowed)
            check_compile(task, c, what);
        else
            diag("%s: skipping the seed at %s: the constraints forbid it "
                 "at every training shape (%s)",
                 kevo_task_name(task), vt, why.text);
        kevo_candidate_free(c);
    }
    free(vars);
}

/* Usage: nvrtc-suite [DIR]: the task files of DIR (default: the source
 * tree's examples/tasks). */
int main(int argc, char **argv)
{
    char *dir = argc > 1 ? kevo__strdup(argv[1])
                         : kevo__path_join(tap_srcdir(), "examples/tasks");
    size_t n = 0;
    char **files = dir ? suite_task_files(dir, &n) : NULL;

    if (!ok(files && n >= MIN_TASKS, "%zu task files in %s (at least %d)", n,
            dir ? dir : "examples/tasks", MIN_TASKS))
        diag("the task suite is incomplete or unreadable");
    for (size_t f = 0; files && f < n; f++) {
        kevo_task *task = NULL;
        kevo_error err = KEVO__ERROR_INIT;
        const char *base = strrchr(files[f], '/');
        base = base ? base + 1 : files[f];
        if (!ok(kevo_task_load(files[f], &task, &err) == KEVO_OK, "%s loads",
                base)) {
            diag("%s", err.text);
            continue;
        }
        if (!ok(kevo_task_reference(task) && kevo_task_seed(task),
                "%s has a reference and a seed", base)) {
            kevo_task_free(task);
            continue;
        }
        check_compile(task, kevo_task_reference(task), "reference");
        if (kevo_task_baseline(task))
            check_compile(task, kevo_task_baseline(task), "baseline");
        check_seed_variants(task);
        kevo_task_free(task);
    }
    suite_strv_free(files);
    free(dir);
    return done_testing();
}
