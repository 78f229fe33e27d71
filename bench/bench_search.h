/*
 * bench_search.h: what the benchmarks that run searches share: where the
 * task suite and the operator plugins are, a task of the suite, and a task
 * whose seed has parameters its code never reads. The including program
 * defines KEVO_BENCH_SRCDIR, the source tree it was built from.
 */
#ifndef KEVO_BENCH_SEARCH_H
#define KEVO_BENCH_SEARCH_H

#include <stdlib.h>
#include <string.h>

#include <kevo.h>

#include "core/kevo_private.h"

/* The source tree: $KEVO_SRCDIR, else the one the program was built from. */
static inline const char *bench_srcdir(void)
{
    const char *srcdir = getenv("KEVO_SRCDIR");
    return srcdir && *srcdir ? srcdir : KEVO_BENCH_SRCDIR;
}

/* Unless KEVO_OPERATOR_PATH is set, points it at the plugins of the build
 * tree ($KEVO_BUILDDIR, else the current directory). */
static inline void bench_operator_path(void)
{
    if (getenv(KEVO_OPERATOR_PATH_ENV))
        return;
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    if (path)
        setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);
}

/* The suite's task name (examples/tasks/NAME.json under srcdir); NULL
 * with err filled, naming the file. */
static inline kevo_task *bench_load_task(const char *srcdir, const char *name,
                                         kevo_error *err)
{
    char *path = kevo__asprintf("%s/examples/tasks/%s.json", srcdir, name);
    kevo_task *task = NULL;
    if (!path)
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    else
        kevo_task_load(path, &task, err);
    free(path);
    return task;
}

/*
 * The suite's task name with salts, lines of a kevo:param block such as
 * "//   SALT_A in 0..31 = 0\n", added to its seed's parameters: the params
 * operator never proposes an assignment twice, so a search that times
 * many evaluations needs a larger space than a task's own. NULL with err
 * filled.
 */
static inline kevo_task *bench_salted_task(const char *srcdir, const char *name,
                                           const char *salts, kevo_error *err)
{
    static const char mark[] = "// kevo:param\n";
    kevo_task *task = bench_load_task(srcdir, name, err);
    if (!task)
        return NULL;
    const char *src = kevo_candidate_source(kevo_task_seed(task));
    const char *at = src ? strstr(src, mark) : NULL;
    if (!at) {
        kevo__error_set(err, KEVO_EINVALID, "%s's seed has no kevo:param block",
                        name);
        kevo_task_free(task);
        return NULL;
    }
    at += strlen(mark);
    char *salted = kevo__asprintf("%.*s%s%s", (int)(at - src), src, salts, at);
    char *file = kevo__asprintf("%s_seed.cu", name);
    kevo_status rc = salted && file
                         ? kevo_task_set_seed(task, salted, file, err)
                         : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    free(salted);
    free(file);
    if (rc != KEVO_OK) {
        kevo_task_free(task);
        return NULL;
    }
    return task;
}

#endif
