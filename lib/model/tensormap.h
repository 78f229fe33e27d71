/*
 * tensormap.h: the arguments of cuTensorMapEncodeTiled for a tensormap line
 * of a kevo:launch block at one shape, and the rules the driver and kevo
 * set on them. The core never calls CUDA: the enum values below are plain
 * ints equal to cuda.h's (the worker checks that they are), and the worker
 * passes them to the driver with the buffer's device address plus
 * offset_bytes.
 */
#ifndef KEVO_TENSORMAP_H
#define KEVO_TENSORMAP_H

#include "candidate_private.h"
#include "core/kevo_private.h"

/* CUtensorMapDataType */
#define KEVO__TMAP_UINT8 0
#define KEVO__TMAP_UINT16 1
#define KEVO__TMAP_UINT32 2
#define KEVO__TMAP_INT32 3
#define KEVO__TMAP_UINT64 4
#define KEVO__TMAP_INT64 5
#define KEVO__TMAP_FLOAT16 6
#define KEVO__TMAP_FLOAT32 7
#define KEVO__TMAP_FLOAT64 8
#define KEVO__TMAP_BFLOAT16 9
/* CUtensorMapInterleave */
#define KEVO__TMAP_INTERLEAVE_NONE 0
#define KEVO__TMAP_INTERLEAVE_16B 1
#define KEVO__TMAP_INTERLEAVE_32B 2
/* CUtensorMapSwizzle */
#define KEVO__TMAP_SWIZZLE_NONE 0
#define KEVO__TMAP_SWIZZLE_32B 1
#define KEVO__TMAP_SWIZZLE_64B 2
#define KEVO__TMAP_SWIZZLE_128B 3
/* CUtensorMapL2promotion */
#define KEVO__TMAP_L2_NONE 0
#define KEVO__TMAP_L2_64B 1
#define KEVO__TMAP_L2_128B 2
#define KEVO__TMAP_L2_256B 3
/* CUtensorMapFloatOOBfill */
#define KEVO__TMAP_OOB_NONE 0
#define KEVO__TMAP_OOB_NAN_REQUEST_ZERO_FMA 1

/* The size and alignment of an encoded map (CUtensorMap). */
#define KEVO__TMAP_BYTES 128
#define KEVO__TMAP_ALIGN 64

/* What cuTensorMapEncodeTiled gets for one map at one shape. */
typedef struct kevo__tmap_args {
    int data_type; /* KEVO__TMAP_UINT8 ... */
    uint32_t rank;
    uint64_t dims[5];    /* globalDim, innermost first */
    uint64_t strides[4]; /* globalStrides: bytes, rank - 1 of them */
    uint32_t box[5];     /* boxDim */
    uint32_t elemstrides[5];
    int interleave, swizzle, l2, oob; /* the enum values */
    uint64_t offset_bytes;            /* added to the buffer's address */
    bool scratch; /* the buffer is a scratch buffer (index into the
                   * candidate's), else a task argument */
    size_t buffer;
    uint64_t buffer_count; /* the buffer's elements at the shape */
} kevo__tmap_args;

/* The CUtensorMapDataType of an element type. */
int kevo__tmap_data_type(kevo_dtype type);

/* The buffer tensormap m of cand names: a task buffer (*scratch false,
 * *index the task argument) or a scratch buffer. KEVO_EINVALID naming the
 * line when it is neither (a scalar is not a buffer) or when its element
 * type is not the map's. */
kevo_status kevo__tensormap_buffer(const kevo_task *task,
                                   const kevo_candidate *cand, size_t m,
                                   bool *scratch, size_t *index,
                                   kevo_error *err);

/*
 * kevo__tensormap_args: the encoding of tensormap m of cand at env (the
 * dims and the device properties; the candidate's assignment goes on top)
 * in *out, checked against every rule of cuTensorMapEncodeTiled and
 * kevo's: rank, 16-byte aligned address (32 with interleave(32)), dims in
 * 1..2^32, strides multiples of 16 (32 with interleave(32)) below 2^40,
 * box items in 1..256 with box[0] * element size a multiple of 16 without
 * interleave and at most the swizzle span with a swizzle, element strides
 * in 1..8, and the map within its buffer. Returns KEVO_OK; an expression
 * error; or KEVO_EINVALID with "<origin>:<line>: kevo:launch: tensormap
 * 'NAME': <what> ... (<rule>)".
 */
kevo_status kevo__tensormap_args(const kevo_task *task,
                                 const kevo_candidate *cand, size_t m,
                                 const kevo_vars *env, kevo__tmap_args *out,
                                 kevo_error *err);

/* The index of the tensormap called name in cand, or -1. */
long kevo__tensormap_find(const kevo_candidate *cand, const char *name);

#endif
