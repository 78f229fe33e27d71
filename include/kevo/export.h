/*
 * kevo/export.h: a champion as a package a program calls. The package
 * holds one launch function for the task, in C and C++ (NAME.h, NAME.cu
 * and a Makefile for nvcc) and for PyTorch (a Python package that builds
 * the same sources with torch.utils.cpp_extension): it evaluates the
 * kernel's kevo:launch block for the shape it is called with, picks the
 * parameters by the run's dispatch table, and runs every kernel in order.
 * kevo-export(1) describes what is written.
 *
 * Every function here is experimental (kevo-api(7)).
 */
#ifndef KEVO_EXPORT_H
#define KEVO_EXPORT_H

#include <kevo/candidate.h>
#include <kevo/error.h>
#include <kevo/task.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a package holds: flags for the targets argument. */
enum {
    KEVO_EXPORT_C = 1u << 0,    /* NAME.h, NAME.cu and a Makefile */
    KEVO_EXPORT_TORCH = 1u << 1 /* NAME/__init__.py and its binding */
};

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_export_run: writes the package of the champion of the run
 * directory run_dir into out_dir (created with its parents; files already
 * there are replaced). The run gives the task (task.json), the champion
 * (best.cu, with its parameters from summary.json), the dispatch table
 * (best.dispatch.json, when there is one), and the fitness, gate, device
 * and command the package's README.md reports. name is the package's
 * name, a C identifier (NULL: the task's name with every character that
 * is not a letter, digit or '_' made '_'); arch the nvcc architecture of
 * its Makefile (NULL: the one kevo compiled for, from the device the run
 * names, such as sm_90a for an H100 or H200, or "native" for a device it
 * does not know). targets is KEVO_EXPORT_C, KEVO_EXPORT_TORCH or both.
 * Returns KEVO_OK; KEVO_EINVAL for a bad argument or name; KEVO_ENOENT
 * for a run without task.json, best.cu or summary.json, KEVO_EINVALID for
 * a run without a champion or a dispatch table that does not fit it;
 * KEVO_EPARSE; KEVO_EIO; KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_export_run(const char *run_dir, const char *out_dir,
                                     const char *name, const char *arch,
                                     unsigned targets, kevo_error *err);

/*
 * kevo_export_candidate: as kevo_export_run(), for a candidate of task
 * held in memory (a search's champion, kevo_search_champion()) with its
 * assignment as the parameters, and dispatch_json (NULL for none) a
 * dispatch table as kevo_search_dispatch_json() gives it. Nothing is
 * taken: task, champion and the text stay the caller's. The README.md
 * then says only what the candidate and the task say. name NULL is the
 * task's name made an identifier; arch NULL is "native".
 */
KEVO_API kevo_status kevo_export_candidate(const kevo_task *task,
                                           const kevo_candidate *champion,
                                           const char *dispatch_json,
                                           const char *out_dir,
                                           const char *name, const char *arch,
                                           unsigned targets, kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
