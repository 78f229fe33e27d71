/*
 * dtype.c: element types.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "kevo_private.h"

/* For the floating-point types, the bits of the significand after the
 * point and the least normal exponent. */
static const struct {
    const char *name;
    size_t size;
    bool is_float;
    int mant, emin;
} dtypes[] = {
    [KEVO_DTYPE_F32] = {"f32", 4, true, 23, -126},
    [KEVO_DTYPE_F64] = {"f64", 8, true, 52, -1022},
    [KEVO_DTYPE_F16] = {"f16", 2, true, 10, -14},
    [KEVO_DTYPE_BF16] = {"bf16", 2, true, 7, -126},
    [KEVO_DTYPE_I8] = {"i8", 1, false},
    [KEVO_DTYPE_U8] = {"u8", 1, false},
    [KEVO_DTYPE_I16] = {"i16", 2, false},
    [KEVO_DTYPE_U16] = {"u16", 2, false},
    [KEVO_DTYPE_I32] = {"i32", 4, false},
    [KEVO_DTYPE_U32] = {"u32", 4, false},
    [KEVO_DTYPE_I64] = {"i64", 8, false},
    [KEVO_DTYPE_U64] = {"u64", 8, false},
};

static bool valid(kevo_dtype type)
{
    return (unsigned)type < KEVO_ARRAY_SIZE(dtypes);
}

const char *kevo_dtype_name(kevo_dtype type)
{
    return valid(type) ? dtypes[type].name : "?";
}

size_t kevo_dtype_size(kevo_dtype type)
{
    return valid(type) ? dtypes[type].size : 0;
}

int kevo_dtype_is_float(kevo_dtype type)
{
    return valid(type) && dtypes[type].is_float;
}

kevo_status kevo_dtype_parse(const char *name, kevo_dtype *type)
{
    if (!name || !type)
        return KEVO_EINVAL;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(dtypes); i++) {
        if (strcmp(dtypes[i].name, name) == 0) {
            *type = (kevo_dtype)i;
            return KEVO_OK;
        }
    }
    return KEVO_EINVAL;
}

double kevo__dtype_ulp(kevo_dtype type, double v)
{
    if (!kevo_dtype_is_float(type))
        return 1.0;
    int e = 0, emin = dtypes[type].emin;
    if (v != 0)
        frexp(fabs(v), &e); /* |v| = f * 2^e, f in [0.5, 1) */
    e = v != 0 && e - 1 > emin ? e - 1 : emin;
    return ldexp(1.0, e - dtypes[type].mant);
}
