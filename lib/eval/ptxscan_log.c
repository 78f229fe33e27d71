/*
 * ptxscan_log.c: ptxas's verbose log, and what a launch's kernel is made of
 * (see ptxscan.h).
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ptxscan.h"

/* ---- the ptxas log ------------------------------------------------------ */

/* The number just before phrase in line (up to end), or -1. */
static int64_t number_before(const char *line, const char *end,
                             const char *phrase)
{
    size_t n = strlen(phrase);
    for (const char *q = line; q + n <= end; q++) {
        if (memcmp(q, phrase, n) != 0)
            continue;
        const char *d = q;
        while (d > line && d[-1] == ' ')
            d--;
        const char *e = d;
        while (d > line && isdigit((unsigned char)d[-1]))
            d--;
        if (d == e)
            continue;
        int64_t v = 0;
        for (const char *c = d; c < e && v < INT64_MAX / 10 - 10; c++)
            v = 10 * v + (*c - '0');
        /* Older ptxas wrote "8192+0 bytes smem": the sum counts. */
        if (d > line && d[-1] == '+') {
            const char *b = d - 1;
            int64_t w = 0, scale = 1;
            while (b > line && isdigit((unsigned char)b[-1]) &&
                   scale < INT64_MAX / 100) {
                w += scale * (*--b - '0');
                scale *= 10;
            }
            if (v < INT64_MAX / 2 && w < INT64_MAX / 2)
                v += w;
        }
        return v;
    }
    return -1;
}

/* The text after phrase in line (up to end), or NULL. */
static const char *after(const char *line, const char *end, const char *phrase)
{
    size_t n = strlen(phrase);
    for (const char *q = line; q + n <= end; q++) {
        if (memcmp(q, phrase, n) == 0)
            return q + n;
    }
    return NULL;
}

kevo_status kevo__ptxscan_log(kevo_ptxscan *scan, const char *log,
                              kevo_error *err)
{
    /* Indices, not pointers: the table may move as it grows. */
    size_t cur = SIZE_MAX, props = SIZE_MAX;
    if (!log)
        return KEVO_OK;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        const char *q;
        if ((q = after(line, end, "Compiling entry function '")) != NULL) {
            const char *e = memchr(q, '\'', (size_t)(end - q));
            kevo_ptx_kernel *k = kevo__ptxscan_kernel(
                scan, q, e ? (size_t)(e - q) : (size_t)(end - q));
            if (!k)
                goto nomem;
            k->entry = true;
            k->in_log = true;
            cur = props = (size_t)(k - scan->kernels);
        } else if ((q = after(line, end, "Function properties for ")) != NULL) {
            const char *e = end;
            while (e > q && isspace((unsigned char)e[-1]))
                e--;
            kevo_ptx_kernel *k = kevo__ptxscan_kernel(scan, q, (size_t)(e - q));
            if (!k)
                goto nomem;
            k->in_log = true;
            props = (size_t)(k - scan->kernels);
        } else if (after(line, end, "bytes stack frame") && props != SIZE_MAX) {
            kevo_ptx_kernel *k = &scan->kernels[props];
            k->stack_frame = number_before(line, end, "bytes stack frame");
            k->spill_stores = number_before(line, end, "bytes spill stores");
            k->spill_loads = number_before(line, end, "bytes spill loads");
        } else if ((q = after(line, end, "Used ")) != NULL &&
                   number_before(line, end, "registers") >= 0 &&
                   cur != SIZE_MAX) {
            kevo_ptx_kernel *k = &scan->kernels[cur];
            k->registers = number_before(q, end, "registers");
            int64_t b = number_before(q, end, "barriers");
            int64_t s = number_before(q, end, "bytes smem");
            k->barriers = b >= 0 ? b : 0;
            k->smem_bytes = s >= 0 ? s : 0;
        }
        line = *end ? end + 1 : end;
    }
    return KEVO_OK;
nomem:
    return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
}

/* ---- kernels of a launch block ------------------------------------------ */

/* The unqualified function name in an Itanium C++ mangled name, or NULL. */
static const char *mangled_base(const char *m, size_t *len)
{
    if (strncmp(m, "_Z", 2) != 0)
        return NULL;
    const char *p = m + 2;
    if (*p == 'L')
        p++;
    bool nested = *p == 'N';
    if (nested) {
        p++;
        while (*p == 'K' || *p == 'V' || *p == 'r')
            p++;
    }
    const char *last = NULL;
    size_t last_len = 0;
    while (isdigit((unsigned char)*p)) {
        size_t n = 0;
        while (isdigit((unsigned char)*p) && n < 4096)
            n = 10 * n + (size_t)(*p++ - '0');
        if (strnlen(p, n) < n)
            return NULL;
        last = p;
        last_len = n;
        p += n;
        if (!nested)
            break;
    }
    *len = last_len;
    return last;
}

const kevo_ptx_kernel *kevo__ptxscan_find(const kevo_ptxscan *scan,
                                          const char *name)
{
    if (!scan || !name)
        return NULL;
    for (size_t i = 0; i < scan->n; i++) {
        if (scan->kernels[i].entry && strcmp(scan->kernels[i].name, name) == 0)
            return &scan->kernels[i];
    }
    size_t n = strlen(name);
    for (size_t i = 0; i < scan->n; i++) {
        size_t len = 0;
        const char *base = mangled_base(scan->kernels[i].name, &len);
        if (scan->kernels[i].entry && base && len == n &&
            memcmp(base, name, n) == 0)
            return &scan->kernels[i];
    }
    return NULL;
}

int kevo__ptx_memory_level(const kevo_ptx_kernel *k, uint64_t shared_bytes)
{
    const uint32_t *c = k->count;
    if (c[KEVO_PTX_ASYNC_COPIES] || c[KEVO_PTX_BULK_COPIES] ||
        c[KEVO_PTX_TMA] || c[KEVO_PTX_MMA] || c[KEVO_PTX_WGMMA] ||
        c[KEVO_PTX_LDMATRIX])
        return 3;
    if ((c[KEVO_PTX_SHARED_LOADS] || c[KEVO_PTX_SHARED_STORES] ||
         c[KEVO_PTX_SHARED_ATOMICS]) &&
        shared_bytes >= KEVO__STAGING_MIN_BYTES)
        return 2;
    if (c[KEVO_PTX_VECTOR_LOADS] || c[KEVO_PTX_VECTOR_STORES])
        return 1;
    return 0;
}

bool kevo__ptx_warp_ops(const kevo_ptx_kernel *k)
{
    const uint32_t *c = k->count;
    return c[KEVO_PTX_SHUFFLES] || c[KEVO_PTX_VOTES] || c[KEVO_PTX_REDUX] ||
           c[KEVO_PTX_MATCHES];
}
