/*
 * suite_util.c: what the task-suite tests share (see suite_util.h).
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>

#include "eval/ptxscan.h"
#include "headers.h"
#include "model/devprops.h"
#include "suite_util.h"
#include "tap.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void suite_strv_free(char **v)
{
    if (!v)
        return;
    for (size_t i = 0; v[i]; i++)
        free(v[i]);
    free(v);
}

char **suite_task_files(const char *dir, size_t *n)
{
    char **v = NULL;
    size_t len = 0, cap = 0;
    DIR *d = opendir(dir);
    *n = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        if (len + 2 > cap) {
            size_t ncap = cap ? 2 * cap : 16;
            char **nv = realloc(v, ncap * sizeof(*nv));
            if (!nv)
                goto fail;
            v = nv;
            cap = ncap;
        }
        v[len] = kevo__path_join(dir, e->d_name);
        if (!v[len])
            goto fail;
        v[++len] = NULL;
    }
    closedir(d);
    if (!v) {
        v = calloc(1, sizeof(*v));
        return v;
    }
    qsort(v, len, sizeof(*v), cmp_str);
    *n = len;
    return v;
fail:
    closedir(d);
    if (v)
        v[len] = NULL;
    suite_strv_free(v);
    errno = ENOMEM;
    return NULL;
}

suite_variant *suite_variants(const kevo_candidate *cand, size_t *n)
{
    const kevo_paramspace *space = kevo_candidate_params(cand);
    size_t np = kevo_paramspace_count(space);
    suite_variant *v = calloc(1 + 2 * np, sizeof(*v));
    *n = 0;
    if (!v)
        return NULL;
    v[(*n)++] = (suite_variant){NULL, 0};
    for (size_t i = 0; i < np; i++) {
        size_t dn = kevo_paramspace_domain_size(space, i);
        int64_t def = kevo_paramspace_default(space, i);
        int64_t lo = kevo_paramspace_domain_value(space, i, 0), hi = lo;
        for (size_t k = 1; k < dn; k++) {
            int64_t x = kevo_paramspace_domain_value(space, i, k);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        const char *name = kevo_paramspace_name(space, i);
        if (lo != def)
            v[(*n)++] = (suite_variant){name, lo};
        if (hi != def && hi != lo)
            v[(*n)++] = (suite_variant){name, hi};
    }
    return v;
}

kevo_candidate *suite_variant_apply(const kevo_candidate *cand,
                                    const suite_variant *v, kevo_error *err)
{
    kevo_candidate *c = kevo_candidate_copy(cand);
    if (!c) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return NULL;
    }
    if (v->name &&
        kevo_candidate_set_param(c, v->name, v->value, err) != KEVO_OK) {
        kevo_candidate_free(c);
        return NULL;
    }
    return c;
}

const char *suite_variant_text(const suite_variant *v, char *buf, size_t size)
{
    if (v->name)
        snprintf(buf, size, "%s=%" PRId64, v->name, v->value);
    else
        snprintf(buf, size, "defaults");
    return buf;
}

kevo_vars *suite_shape_env(const kevo_task *task, kevo_shape_set set, size_t i,
                           const kevo_vars *devprops)
{
    kevo_vars *env = kevo_vars_new();
    if (!env)
        return NULL;
    if (kevo_task_shape_vars(task, set, i, env) != KEVO_OK)
        goto fail;
    if (devprops ? kevo_vars_update(env, devprops) != KEVO_OK
                 : kevo__devprops_nominal(env) != KEVO_OK)
        goto fail;
    return env;
fail:
    kevo_vars_free(env);
    return NULL;
}

const char *suite_shape_text(const kevo_task *task, kevo_shape_set set,
                             size_t i, char *buf, size_t size)
{
    const int64_t *shape = kevo_task_shape(task, set, i);
    size_t len = 0;
    buf[0] = '\0';
    if (!shape)
        return buf;
    for (size_t d = 0; d < kevo_task_dim_count(task) && len < size; d++) {
        int w = snprintf(buf + len, size - len, "%s%s=%" PRId64, d ? ", " : "",
                         kevo_task_dim_name(task, d), shape[d]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

bool suite_allowed(const kevo_candidate *cand, const kevo_task *task,
                   kevo_shape_set set, size_t i, const kevo_vars *devprops,
                   kevo_error *err)
{
    kevo_vars *env = suite_shape_env(task, set, i, devprops);
    if (!env) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return false;
    }
    bool ok = kevo_candidate_check(cand, env, err) == KEVO_OK;
    kevo_vars_free(env);
    return ok;
}

double suite_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The program's log in a new string ("" when empty); NULL on no memory. */
static char *program_log(nvrtcProgram prog)
{
    size_t n = 0;
    if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0)
        return kevo__strdup("");
    char *log = malloc(n + 1);
    if (!log)
        return NULL;
    if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    log[n] = '\0';
    return log;
}

/* Whether the PTX has an entry called name. */
static bool ptx_has_entry(const char *ptx, const char *name)
{
    kevo_ptxscan scan;
    kevo__ptxscan_init(&scan);
    bool found = false;
    if (kevo__ptxscan_ptx(&scan, ptx, strlen(ptx), NULL) == KEVO_OK) {
        for (size_t i = 0; i < scan.n && !found; i++)
            found = scan.kernels[i].entry &&
                    strcmp(scan.kernels[i].name, name) == 0;
    }
    kevo__ptxscan_free(&scan);
    return found;
}

/* The toolkit headers a kernel may include, loaded once as the compile
 * worker loads them (worker/headers.h); an empty set without a
 * toolkit include directory. */
static kevo__headers *headers;

static void headers_free(void)
{
    kevo__headers_free(headers);
    headers = NULL;
}

static const kevo__headers *suite_headers(void)
{
    if (!headers) {
        kevo_error err = KEVO__ERROR_INIT;
        char *dir = kevo__headers_dir();
        headers = kevo__headers_load(dir, &err);
        if (!headers)
            bail_out("loading the CUDA headers from %s: %s",
                     dir ? dir : "(none)", err.text);
        free(dir);
        atexit(headers_free);
    }
    return headers;
}

/* Compiles once; fills the log, the image (on success) and, with names,
 * the lowered names. Returns the NVRTC result, or -1 on no memory. */
static int compile_once(const kevo_candidate *cand, const char *const *opts,
                        int nopts, bool names, bool cubin, suite_build *out)
{
    nvrtcProgram prog = NULL;
    const char *origin = kevo_candidate_origin(cand);
    const char *base = origin ? strrchr(origin, '/') : NULL;
    const kevo__headers *h = suite_headers();
    base = base ? base + 1 : origin ? origin : "kernel.cu";
    nvrtcResult r = nvrtcCreateProgram(&prog, kevo_candidate_source(cand), base,
                                       (int)h->count, h->texts, h->names);
    int rc = -1;
    if (r != NVRTC_SUCCESS)
        return (int)r;
    size_t nl = kevo_candidate_launch_count(cand);
    for (size_t i = 0; names && i < nl; i++) {
        const char *k = kevo_candidate_launch_kernel(cand, i);
        bool dup = false;
        for (size_t j = 0; j < i; j++)
            dup = dup || strcmp(kevo_candidate_launch_kernel(cand, j), k) == 0;
        if (!dup && (r = nvrtcAddNameExpression(prog, k)) != NVRTC_SUCCESS) {
            rc = (int)r;
            goto done;
        }
    }
    r = nvrtcCompileProgram(prog, nopts, opts);
    free(out->log);
    out->log = program_log(prog);
    if (!out->log)
        goto done;
    if (r != NVRTC_SUCCESS) {
        rc = (int)r;
        goto done;
    }
    size_t size = 0;
    r = cubin ? nvrtcGetCUBINSize(prog, &size) : nvrtcGetPTXSize(prog, &size);
    if (r != NVRTC_SUCCESS) {
        rc = (int)r;
        goto done;
    }
    free(out->image);
    out->image = calloc(size + 1, 1);
    if (!out->image)
        goto done;
    r = cubin ? nvrtcGetCUBIN(prog, out->image) : nvrtcGetPTX(prog, out->image);
    if (r != NVRTC_SUCCESS) {
        rc = (int)r;
        goto done;
    }
    out->size = size;
    for (size_t i = 0; names && i < nl; i++) {
        const char *lowered = NULL;
        if (nvrtcGetLoweredName(prog, kevo_candidate_launch_kernel(cand, i),
                                &lowered) == NVRTC_SUCCESS &&
            lowered) {
            out->lowered[i] = kevo__strdup(lowered);
            if (!out->lowered[i])
                goto done;
        }
    }
    rc = NVRTC_SUCCESS;
done:
    nvrtcDestroyProgram(&prog);
    return rc;
}

bool suite_compile(const kevo_candidate *cand, const char *arch, bool cubin,
                   suite_build *out)
{
    const char *opts[SUITE_OPTIONS_MAX];
    char *owned[SUITE_OPTIONS_MAX];
    int nopts = 0, nowned = 0;
    bool ok = false;
    const kevo_vars *assignment = kevo_candidate_assignment(cand);
    size_t np = kevo_vars_count(assignment);

    memset(out, 0, sizeof(*out));
    out->nlaunches = kevo_candidate_launch_count(cand);
    out->lowered = calloc(out->nlaunches + 1, sizeof(*out->lowered));
    if (!out->lowered)
        return false;
    if (np + 3 > SUITE_OPTIONS_MAX) {
        out->status = SUITE_NVRTC_FAILURE;
        out->log = kevo__asprintf("too many parameters (%zu) for the test", np);
        if (!out->log)
            suite_build_free(out);
        return out->log != NULL;
    }
    owned[nowned] = kevo__asprintf("--gpu-architecture=%s", arch);
    if (!owned[nowned])
        goto done;
    opts[nopts++] = owned[nowned++];
    opts[nopts++] = "--std=c++17";
    opts[nopts++] = "-DKEVO=1";
    for (size_t i = 0; i < np; i++) {
        owned[nowned] =
            kevo__asprintf("-D%s=%" PRId64, kevo_vars_name(assignment, i),
                           kevo_vars_value(assignment, i));
        if (!owned[nowned])
            goto done;
        opts[nopts++] = owned[nowned++];
    }

    double t0 = suite_now_seconds();
    int rc = compile_once(cand, opts, nopts, true, cubin, out);
    if (rc < 0)
        goto done;
    if (rc == NVRTC_ERROR_COMPILATION) {
        /* Compiled without the name expressions, a source whose only fault
         * is a missing kernel compiles: tell the two apart. */
        suite_build retry = {0};
        char *virt = NULL;
        if (strncmp(arch, "sm_", 3) == 0) {
            virt = kevo__asprintf("--gpu-architecture=compute_%s", arch + 3);
            if (!virt)
                goto done;
            opts[0] = virt;
        }
        int rc2 = compile_once(cand, opts, nopts, false, false, &retry);
        opts[0] = owned[0];
        free(virt);
        free(retry.log);
        if (rc2 < 0) {
            free(retry.image);
            goto done;
        }
        if (rc2 == NVRTC_SUCCESS) {
            for (size_t i = 0; i < out->nlaunches; i++) {
                const char *k = kevo_candidate_launch_kernel(cand, i);
                if (ptx_has_entry(retry.image, k)) {
                    out->lowered[i] = kevo__strdup(k);
                    if (!out->lowered[i]) {
                        free(retry.image);
                        goto done;
                    }
                }
            }
            out->status = SUITE_MISSING_KERNEL;
        } else {
            out->status = SUITE_COMPILE_ERROR;
        }
        free(retry.image);
    } else if (rc != NVRTC_SUCCESS) {
        out->status = SUITE_NVRTC_FAILURE;
        if (!out->log || !*out->log) {
            free(out->log);
            out->log = kevo__strdup(nvrtcGetErrorString((nvrtcResult)rc));
            if (!out->log)
                goto done;
        }
    } else {
        out->status = SUITE_COMPILED;
        for (size_t i = 0; i < out->nlaunches; i++) {
            if (!out->lowered[i])
                out->status = SUITE_MISSING_KERNEL;
        }
    }
    out->seconds = suite_now_seconds() - t0;
    if (!out->log && !(out->log = kevo__strdup("")))
        goto done;
    ok = true;
done:
    for (int i = 0; i < nowned; i++)
        free(owned[i]);
    if (!ok)
        suite_build_free(out);
    return ok;
}

void suite_build_free(suite_build *b)
{
    if (!b)
        return;
    free(b->image);
    free(b->log);
    for (size_t i = 0; b->lowered && i < b->nlaunches; i++)
        free(b->lowered[i]);
    free(b->lowered);
    memset(b, 0, sizeof(*b));
}

char *suite_ptx_entry_text(const char *ptx, const char *name)
{
    char head[128];
    snprintf(head, sizeof(head), ".entry %s(", name);
    const char *p = strstr(ptx, head);
    if (!p)
        return NULL;
    const char *end = strstr(p + 1, ".entry ");
    return kevo__strndup(p, end ? (size_t)(end - p) : strlen(p));
}

int *suite_nvrtc_archs(int min, int *n)
{
    int all = 0, *archs = NULL;
    if (nvrtcGetNumSupportedArchs(&all) != NVRTC_SUCCESS || all <= 0 ||
        !(archs = calloc((size_t)all, sizeof(*archs))) ||
        nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
        bail_out("NVRTC does not list its architectures");
    *n = 0;
    for (int i = 0; i < all; i++) {
        if (archs[i] >= min)
            archs[(*n)++] = archs[i];
    }
    return archs;
}

size_t suite_smallest_shape(const kevo_task *task)
{
    size_t best = 0;
    uint64_t best_bytes = UINT64_MAX;
    for (size_t i = 0; i < kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
         i++) {
        kevo_vars *v = kevo_vars_new();
        uint64_t bytes = UINT64_MAX;
        if (v &&
            kevo_task_shape_vars(task, KEVO_SHAPES_TRAIN, i, v) == KEVO_OK &&
            kevo_task_footprint(task, v, &bytes, NULL) == KEVO_OK &&
            bytes < best_bytes) {
            best = i;
            best_bytes = bytes;
        }
        kevo_vars_free(v);
    }
    return best;
}

void suite_diag_text(const char *heading, const char *text)
{
    if (heading)
        diag("%s", heading);
    const char *p = text;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        if (len > 0)
            diag("  %.*s", len, p);
        p = nl ? nl + 1 : NULL;
    }
}
