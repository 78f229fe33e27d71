/*
 * check.c: the comparisons of the correctness protocol, on the device: an
 * output against the reference's result within the task's tolerance, and
 * each input against its pristine copy, bit for bit.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"

kevo_status kevo__check_output(kevo__gpu *g, const kevo__shape *s, size_t a,
                               kevo__cmp *out, kevo_error *err)
{
    const kevo_arg_info *in = &s->info[a];
    CUdeviceptr got = s->buf[a], want = s->want[a], partial = g->partial;
    CUdeviceptr result = g->partial + g->npartial * sizeof(kevo__cmp);
    uint64_t n = s->count[a];
    double atol = in->atol, rtol = in->rtol;
    unsigned blocks = kevo__gpu_blocks(g, n, KEVO__CMP_BLOCK);
    if (blocks > g->npartial)
        blocks = g->npartial;
    void *cmp_params[] = {&got, &want, &n, &atol, &rtol, &partial};
    void *reduce_params[] = {&partial, &blocks, &result};
    kevo_status rc =
        kevo__gpu_launch(g->compare[in->type], blocks, KEVO__CMP_BLOCK,
                         cmp_params, "kevo_internal_compare", err);
    if (rc == KEVO_OK)
        rc = kevo__gpu_launch(g->compare_reduce, 1, KEVO__CMP_BLOCK,
                              reduce_params, "kevo_internal_compare_reduce",
                              err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuMemcpyDtoH(out, result, sizeof(*out)),
                            "reading the comparison (cuMemcpyDtoH)", err);
    return rc;
}

kevo_status kevo__check_inputs(kevo__gpu *g, const kevo__shape *s,
                               bool *changed, size_t *arg, uint64_t *index,
                               kevo_error *err)
{
    *changed = false;
    for (size_t a = 0; a < s->nargs; a++) {
        if (s->info[a].role != KEVO_ROLE_IN)
            continue;
        CUdeviceptr x = s->buf[a], y = s->pristine[a], first = g->word;
        uint64_t nbytes = s->bytes[a], at = 0;
        void *params[] = {&x, &y, &nbytes, &first};
        kevo_status rc =
            kevo__cu_check(kevo__cu.cuMemsetD8(first, 0xff, sizeof(uint64_t)),
                           "cuMemsetD8", err);
        if (rc == KEVO_OK)
            rc = kevo__gpu_launch(g->equal,
                                  kevo__gpu_blocks(g, nbytes / 16 + 1, 256),
                                  256, params, "kevo_internal_equal", err);
        if (rc == KEVO_OK)
            rc = kevo__cu_check(kevo__cu.cuMemcpyDtoH(&at, first, sizeof(at)),
                                "cuMemcpyDtoH", err);
        if (rc != KEVO_OK)
            return rc;
        if (at != UINT64_MAX) {
            *changed = true;
            *arg = a;
            *index = at / kevo_dtype_size(s->info[a].type);
            return KEVO_OK;
        }
    }
    return KEVO_OK;
}

const char *kevo__number_text(double x, char *buf, size_t size)
{
    if (isnan(x))
        snprintf(buf, size, "NaN");
    else if (isinf(x))
        snprintf(buf, size, "%s", x > 0 ? "inf" : "-inf");
    else
        snprintf(buf, size, "%.9g", x);
    return buf;
}

json_t *kevo__json_number_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}
