/*
 * dtype.c: element types.
 */
#include "config.h"

#include <string.h>

#include "kevo_private.h"

static const struct {
    const char *name;
    size_t size;
    bool is_float;
} dtypes[] = {
    [KEVO_DTYPE_F32] = {"f32", 4, true},  [KEVO_DTYPE_F64] = {"f64", 8, true},
    [KEVO_DTYPE_F16] = {"f16", 2, true},  [KEVO_DTYPE_BF16] = {"bf16", 2, true},
    [KEVO_DTYPE_I8] = {"i8", 1, false},   [KEVO_DTYPE_U8] = {"u8", 1, false},
    [KEVO_DTYPE_I16] = {"i16", 2, false}, [KEVO_DTYPE_U16] = {"u16", 2, false},
    [KEVO_DTYPE_I32] = {"i32", 4, false}, [KEVO_DTYPE_U32] = {"u32", 4, false},
    [KEVO_DTYPE_I64] = {"i64", 8, false}, [KEVO_DTYPE_U64] = {"u64", 8, false},
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
