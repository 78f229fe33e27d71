/*
 * kevo/dtype.h: element types of kernel arguments and scratch buffers.
 */
#ifndef KEVO_DTYPE_H
#define KEVO_DTYPE_H

#include <kevo/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types, named in task files and launch blocks as "f32", "u8"... */
typedef enum kevo_dtype {
    KEVO_DTYPE_F32 = 0,  /* float */
    KEVO_DTYPE_F64 = 1,  /* double */
    KEVO_DTYPE_F16 = 2,  /* __half */
    KEVO_DTYPE_BF16 = 3, /* __nv_bfloat16 */
    KEVO_DTYPE_I8 = 4,   /* int8_t */
    KEVO_DTYPE_U8 = 5,   /* uint8_t */
    KEVO_DTYPE_I16 = 6,  /* int16_t */
    KEVO_DTYPE_U16 = 7,  /* uint16_t */
    KEVO_DTYPE_I32 = 8,  /* int32_t */
    KEVO_DTYPE_U32 = 9,  /* uint32_t */
    KEVO_DTYPE_I64 = 10, /* int64_t */
    KEVO_DTYPE_U64 = 11  /* uint64_t */
} kevo_dtype;

/*
 * kevo_dtype_name: the name of an element type as task files write it, such
 * as "f32". Static string; "?" for a value outside the enum.
 */
KEVO_API const char *kevo_dtype_name(kevo_dtype type);

/*
 * kevo_dtype_size: the size of one element in bytes, or 0 for a value
 * outside the enum.
 */
KEVO_API size_t kevo_dtype_size(kevo_dtype type);

/*
 * kevo_dtype_is_float: 1 for the floating-point types (f16, bf16, f32,
 * f64), 0 otherwise.
 */
KEVO_API int kevo_dtype_is_float(kevo_dtype type);

/*
 * kevo_dtype_parse: looks an element type up by its name ("f32", "bf16",
 * "u8", ...). Returns KEVO_OK and sets *type, or KEVO_EINVAL for an unknown
 * name, in which case *type is untouched.
 */
KEVO_API kevo_status kevo_dtype_parse(const char *name, kevo_dtype *type);

#ifdef __cplusplus
}
#endif

#endif
