/*
 * export_private.h: a package in the making, shared by export.c (the run
 * and the dispatch table read into it, the README), export_plan.c (the
 * launch plan in plain C), export_cuda.c (the kernels, the launch
 * function, the Makefile) and export_torch.c (the PyTorch package).
 */
#ifndef KEVO_EXPORT_PRIVATE_H
#define KEVO_EXPORT_PRIVATE_H

#include "core/kevo_private.h"
#include "model/candidate_private.h"
#include "model/launch_args.h"

/* What the package is made of. Variant 0 is the champion's assignment;
 * the others are the dispatch table's, each a copy of the champion with
 * its parameters set, in the order the table first names them. */
typedef struct kevo__export_pkg {
    const kevo_task *task;
    char *name;   /* a C identifier */
    char *arch;   /* nvcc's -arch */
    char *origin; /* the champion's file name in messages ("best.cu") */
    kevo_candidate **variants;
    size_t nvariants;
    /* The dispatch table: training shapes with the variant that won each,
     * held-out shapes with the variant the table gives them, and the
     * variants the table found wrong at a held-out shape. */
    bool dispatch;
    size_t ntrain, nheld;
    int64_t *train_dims, *held_dims; /* ndims per shape */
    size_t *train_variant, *held_variant;
    bool *unsafe; /* per variant */
    char *readme; /* lines about the run, Markdown */
} kevo__export_pkg;

/* The task's dims and arguments as the package names them. */
size_t kevo__export_ndims(const kevo__export_pkg *p);

/* The C type of a buffer element or scalar of type t as the package's
 * API spells it ("float", "uint16_t" for f16 and bf16, ...). */
const char *kevo__export_ctype(kevo_dtype t);

/* The C name of a parameter called name in the package's functions: name
 * itself, or name with '_' appended when it is a C or C++ keyword or a
 * name the generated code uses itself. Returns buf or name. */
const char *kevo__export_ident(const char *name, char *buf, size_t size);

/* Appends the launch function's parameters but the workspace and the
 * stream: "const float *x,\n    float *y,\n    int64_t n". (export_cuda.c) */
/* KEVO_OK when export can write launchers for cand's launch block; else
 * KEVO_EINVALID naming the line of the first tensormap, cluster(), pdl or
 * if, which the generated launchers do not implement yet. */
kevo_status kevo__export_supported(const kevo_candidate *cand, kevo_error *err);

kevo_status kevo__export_params(const kevo__export_pkg *p, kevo_buf *b,
                                kevo_error *err);

/* Appends s as the body of a C string literal (quotes, backslashes and
 * control characters escaped). */
void kevo__export_c_string(kevo_buf *b, const char *s);

/* Writes text to dir/file, replacing what was there. */
kevo_status kevo__export_write(const char *dir, const char *file,
                               const char *text, kevo_error *err);

/* NAME_plan.h and NAME_plan.c (export_plan.c). */
kevo_status kevo__export_plan(const kevo__export_pkg *p, const char *dir,
                              kevo_error *err);

/* NAME.h, NAME.cu, NAME_kernel.cuh, NAME_vK.cu and Makefile
 * (export_cuda.c). */
kevo_status kevo__export_cuda(const kevo__export_pkg *p, const char *dir,
                              bool makefile, kevo_error *err);

/* NAME/__init__.py, NAME/binding.cpp and the sources in NAME/csrc
 * (export_torch.c). */
kevo_status kevo__export_torch(const kevo__export_pkg *p, const char *dir,
                               kevo_error *err);

#endif
