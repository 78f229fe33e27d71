/*
 * ptxscan.h: what a compiled candidate is made of, read from its PTX and
 * from ptxas's verbose log (NVRTC with --ptxas-options=-v): per function,
 * the instructions that tell a memory strategy or a kind of parallelism
 * apart (vector loads, shared memory, asynchronous copies, tensor-core and
 * warp-level instructions), and the registers, spills and shared memory
 * ptxas allotted. The behaviour descriptors are made from these.
 * ptxscan.c reads the PTX, ptxscan_log.c the log.
 */
#ifndef KEVO_PTXSCAN_H
#define KEVO_PTXSCAN_H

#include "core/kevo_private.h"

/* Instructions counted per function. */
typedef enum kevo_ptx_feature {
    KEVO_PTX_VECTOR_LOADS = 0,   /* ld/ldu .global (or generic) .v2/.v4/.v8,
                                    .nc included */
    KEVO_PTX_VECTOR_STORES = 1,  /* st .global (or generic) .v2/.v4/.v8 */
    KEVO_PTX_SHARED_LOADS = 2,   /* ld.shared */
    KEVO_PTX_SHARED_STORES = 3,  /* st.shared, st.async */
    KEVO_PTX_SHARED_ATOMICS = 4, /* atom.shared, red.shared */
    KEVO_PTX_ASYNC_COPIES = 5,   /* cp.async.ca/.cg (global to shared) */
    KEVO_PTX_BULK_COPIES = 6,    /* cp.async.bulk, cp.reduce.async.bulk */
    KEVO_PTX_TMA = 7,            /* the .tensor forms of those (TMA) */
    KEVO_PTX_MMA = 8,            /* mma, wmma.mma, tcgen05.mma */
    KEVO_PTX_WGMMA = 9,          /* wgmma.mma_async */
    KEVO_PTX_LDMATRIX = 10,      /* ldmatrix, stmatrix, wmma.load/.store */
    KEVO_PTX_SHUFFLES = 11,      /* shfl */
    KEVO_PTX_VOTES = 12,         /* vote */
    KEVO_PTX_REDUX = 13,         /* redux.sync */
    KEVO_PTX_MATCHES = 14,       /* match */
    KEVO_PTX_MULTICAST = 15,     /* any .multicast::cluster form (TMA
                                    multicast to a cluster's blocks) */
    KEVO_PTX_DSMEM = 16,         /* distributed shared memory: mapa, and
                                    ld/st/atom/red on .shared::cluster */
    KEVO_PTX_MBARRIER = 17,      /* mbarrier */
    KEVO_PTX_SETMAXNREG = 18,    /* setmaxnreg */
    KEVO_PTX_FEATURE_COUNT = 19
} kevo_ptx_feature;

/* The feature's name in JSON ("vector_loads", ...), or NULL. */
const char *kevo__ptx_feature_name(kevo_ptx_feature f);

/* Shared memory below this many bytes a block is a reduction's scratch,
 * not staging (memory level 2). */
#define KEVO__STAGING_MIN_BYTES 1024

/* What a kernel parameter holds, as its PTX declaration tells it. PTX
 * does not tell a pointer from a 64-bit integer, nor a signed integer from
 * an unsigned one. */
typedef enum kevo_ptx_param_kind {
    KEVO_PTX_PARAM_INT = 0,   /* .u8 ... .u64, .s*, .b*: an integer, a bool
                                 or a pointer (.u64) */
    KEVO_PTX_PARAM_FLOAT = 1, /* .f16, .f32, .f64 */
    KEVO_PTX_PARAM_BYTES = 2, /* .b8 NAME[N]: an object passed by value (a
                                 struct, __half, __nv_bfloat16, any
                                 __grid_constant__ parameter) */
    KEVO_PTX_PARAM_OTHER = 3  /* anything else (.texref, ...) */
} kevo_ptx_param_kind;

/* One parameter of a PTX entry. */
typedef struct kevo_ptx_param {
    kevo_ptx_param_kind kind;
    uint64_t size;  /* bytes; 0 for KEVO_PTX_PARAM_OTHER */
    char type[32];  /* the PTX type as written, with the array's count:
                       ".u32", ".b8[2]" */
    uint64_t align; /* the .align N written before the type; 0 when none */
} kevo_ptx_param;

/* One function of the PTX (a kernel: .entry, or a .func) or of the log. */
typedef struct kevo_ptx_kernel {
    char *name;  /* as in the PTX: mangled for C++ kernels */
    bool entry;  /* a kernel (.entry, or "Compiling entry function") */
    bool in_ptx; /* defined in the PTX */
    bool in_log; /* named by the ptxas log */
    /* An entry's parameters, in order, from its PTX header; has_params
     * is false when the header's list could not be read. */
    bool has_params;
    kevo_ptx_param *params;
    size_t nparams;
    /* Instruction counts, including those of the functions it calls
     * (each called function once). */
    uint32_t count[KEVO_PTX_FEATURE_COUNT];
    uint64_t shared_static; /* bytes of the .shared variables it declares
                               or names, extern arrays aside */
    bool shared_dynamic;    /* names an extern .shared array */
    /* From the ptxas log; -1 when unknown. */
    int64_t registers;
    int64_t barriers;
    int64_t smem_bytes; /* static shared memory ("N bytes smem"; 0 when
                           the Used line has none) */
    int64_t stack_frame, spill_stores, spill_loads;
    /* Private to the scanner: own counts and callees. */
    uint32_t own[KEVO_PTX_FEATURE_COUNT];
    uint64_t own_shared;
    bool own_dynamic;
    char **callees;
    size_t ncallees, capcallees;
} kevo_ptx_kernel;

/* What a PTX text and a log hold. Zero-initialise it (or use
 * kevo__ptxscan_init); kevo__ptxscan_free releases it. */
typedef struct kevo_ptxscan {
    kevo_ptx_kernel *kernels; /* in order of first appearance */
    size_t n, cap;
    /* Module-scope .shared variables, while scanning. */
    struct kevo_ptx_var *vars;
    size_t nvars, capvars;
} kevo_ptxscan;

void kevo__ptxscan_init(kevo_ptxscan *scan);
void kevo__ptxscan_free(kevo_ptxscan *scan);

/*
 * Scans len bytes of PTX text (no NUL needed) into scan: every function's
 * instruction counts and shared memory. Returns KEVO_OK, KEVO_EPARSE
 * naming the line of a comment, string, statement or function body that
 * does not end, or KEVO_ENOMEM. After a failure scan holds what was read
 * before it, without the totals: free it (and init it again to go on with
 * a log alone).
 */
kevo_status kevo__ptxscan_ptx(kevo_ptxscan *scan, const char *ptx, size_t len,
                              kevo_error *err);

/*
 * Reads ptxas's verbose output from a compile log into scan: per kernel
 * the registers, barriers and static shared memory ("Used N registers,
 * used B barriers, S bytes smem"), per function the stack frame and the
 * spills. Lines that are not ptxas's are skipped, so NVRTC's whole log
 * may be given. Returns KEVO_OK or KEVO_ENOMEM.
 */
kevo_status kevo__ptxscan_log(kevo_ptxscan *scan, const char *log,
                              kevo_error *err);

/*
 * The kernel that a launch block calls name: an entry of that name, or
 * else one whose C++ mangled name has that unqualified name
 * (_Z6kernelPfi, _ZN2ns6kernelEv, _Z5scaleILi256EEvPKfPfi). NULL when
 * there is none.
 */
const kevo_ptx_kernel *kevo__ptxscan_find(const kevo_ptxscan *scan,
                                          const char *name);

/* The bytes of spill stores of kernel k (an element of scan) and of every
 * function it calls, each once, as ptxas reported them; -1 when the log
 * did not report k's. */
int64_t kevo__ptxscan_spill_stores(const kevo_ptxscan *scan,
                                   const kevo_ptx_kernel *k);

/* The memory strategy of a kernel whose blocks use shared_bytes of shared
 * memory: 3 asynchronous copies or tensor cores, 2 shared-memory staging
 * (shared loads or stores and at least KEVO__STAGING_MIN_BYTES), 1 vector
 * global loads or stores, 0 scalar. */
int kevo__ptx_memory_level(const kevo_ptx_kernel *k, uint64_t shared_bytes);

/* True when the kernel uses warp-level primitives (shfl, vote, redux,
 * match). */
bool kevo__ptx_warp_ops(const kevo_ptx_kernel *k);

/* Reads the parameter list of an entry from its PTX header, at params:
 * the text after the entry's name, "( .param .u64 NAME, .param .align 2
 * .b8 NAME[2] ) .maxntid 256, 1, 1", into k->params, and sets
 * k->has_params. Returns KEVO_OK (for an unreadable list too, with
 * has_params false), or KEVO_ENOMEM. (ptxscan_params.c) */
kevo_status kevo__ptx_header_params(kevo_ptx_kernel *k, const char *params);

/* "a 32-bit integer (.u32)", "an object of 2 bytes (.b8[2])" for messages,
 * in buf. */
const char *kevo__ptx_param_text(const kevo_ptx_param *p, char *buf,
                                 size_t size);

/* The function called name (len bytes) in scan, added (with every value
 * unknown) when new; NULL on no memory. */
kevo_ptx_kernel *kevo__ptxscan_kernel(kevo_ptxscan *scan, const char *name,
                                      size_t len);

#endif
