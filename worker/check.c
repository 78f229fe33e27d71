/*
 * check.c: the comparisons of the correctness protocol, on the device: an
 * output against the reference's result within the task's tolerance
 * (element-wise, or relative to the baseline kernel's errors), the
 * baseline's errors themselves, and each input against its pristine copy,
 * bit for bit.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"

/* One compare pass over output a into *out (amax_only: the largest finite
 * |want| alone). */
static kevo_status compare_pass(kevo__gpu *g, const kevo__shape *s, size_t a,
                                double atol, int amax_only, kevo__cmp *out,
                                kevo_error *err)
{
    const kevo_arg_info *in = &s->info[a];
    CUdeviceptr got = s->buf[a], want = s->want[a], partial = g->partial;
    CUdeviceptr result = g->partial + g->npartial * sizeof(kevo__cmp);
    uint64_t n = s->count[a];
    double rtol = in->rtol, ulps = in->ulp;
    unsigned blocks = kevo__gpu_blocks(g, n, KEVO__CMP_BLOCK);
    if (blocks > g->npartial)
        blocks = g->npartial;
    void *cmp_params[] = {&got,  &want, &n,         &atol,
                          &rtol, &ulps, &amax_only, &partial};
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

kevo_status kevo__check_output(kevo__gpu *g, const kevo__shape *s, size_t a,
                               kevo__cmp *out, kevo__mean_check *mean,
                               kevo_error *err)
{
    const kevo_arg_info *in = &s->info[a];
    double atol = in->atol, amax = 0;
    kevo_status rc = KEVO_OK;
    if (mean)
        memset(mean, 0, sizeof(*mean));
    if (in->factor > 0) {
        /* The baseline rule: one bound for every element (the info's
         * rtol, rtol_amax and ulp are 0). */
        atol = in->factor * s->base_max[a] + in->atol;
    } else if (in->rtol_amax > 0) {
        kevo__cmp scale;
        rc = compare_pass(g, s, a, 0, 1, &scale, err);
        amax = scale.amax;
        atol += in->rtol_amax * amax;
    }
    if (rc == KEVO_OK)
        rc = compare_pass(g, s, a, atol, 0, out, err);
    if (rc == KEVO_OK)
        out->amax = amax;
    if (rc == KEVO_OK && mean && in->factor > 0) {
        mean->applies = true;
        mean->err = out->sum_abs / (double)s->count[a];
        mean->bound = in->factor * s->base_mean[a] + in->atol;
        mean->bad = !(mean->err <= mean->bound);
    }
    return rc;
}

kevo_status kevo__baseline_error(kevo__gpu *g, const kevo__shape *s, size_t a,
                                 double *max, double *mean, kevo_error *err)
{
    kevo__cmp c;
    kevo_status rc = compare_pass(g, s, a, 0, 0, &c, err);
    *max = *mean = NAN;
    if (rc == KEVO_OK) {
        *max = c.max_abs;
        *mean = c.sum_abs / (double)s->count[a];
    }
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

/* The bits of x, an exact finite f16 value. */
static unsigned f16_bits(double x)
{
    unsigned sign = signbit(x) ? 0x8000u : 0;
    double a = fabs(x);
    int e = 0;
    if (a == 0)
        return sign;
    frexp(a, &e);    /* a = f * 2^e, f in [0.5, 1) */
    if (e - 1 < -14) /* subnormal: a multiple of 2^-24 */
        return sign | (unsigned)ldexp(a, 24);
    return sign | (unsigned)(e - 1 + 15) << 10 |
           ((unsigned)ldexp(a, 11 - e) & 0x3ffu);
}

const char *kevo__value_text(kevo_dtype type, double x, char *buf, size_t size)
{
    if (!isfinite(x) || (type != KEVO_DTYPE_F16 && type != KEVO_DTYPE_BF16))
        return kevo__number_text(x, buf, size);
    if (type == KEVO_DTYPE_BF16) {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, sizeof(u));
        snprintf(buf, size, "%.4g (bf16 0x%04x)", x, (unsigned)(u >> 16));
    } else {
        snprintf(buf, size, "%.5g (f16 0x%04x)", x, f16_bits(x));
    }
    return buf;
}

const char *kevo__tolerance_text(const kevo_arg_info *in, const kevo__cmp *c,
                                 double base_max, char *buf, size_t size)
{
    char a[64], u[40], t[40];
    if (in->factor > 0) {
        snprintf(buf, size,
                 "tolerance %g * the baseline's largest error %s + %g = %s",
                 in->factor, kevo__number_text(base_max, a, sizeof(a)),
                 in->atol, kevo__number_text(c->tol, t, sizeof(t)));
        return buf;
    }
    size_t len = (size_t)snprintf(buf, size, "tolerance %g + %g * |want|",
                                  in->atol, in->rtol);
    if (in->rtol_amax > 0 && len < size)
        len += (size_t)snprintf(
            buf + len, size - len, " + %g * amax (amax %s)", in->rtol_amax,
            kevo__value_text(in->type, c->amax, a, sizeof(a)));
    if (in->ulp > 0 && len < size)
        len += (size_t)snprintf(
            buf + len, size - len, " + %g ulp (ulp(want) in %s: %s)", in->ulp,
            kevo_dtype_name(in->type),
            kevo__number_text(
                isfinite(c->want) ? kevo__dtype_ulp(in->type, c->want) : NAN, u,
                sizeof(u)));
    if ((in->rtol_amax > 0 || in->ulp > 0) && len < size)
        snprintf(buf + len, size - len, " = %s",
                 kevo__number_text(c->tol, t, sizeof(t)));
    return buf;
}
