/*
 * cuda_api.c: the CUDA driver and CUPTI through dlopen (see cuda_api.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"

kevo__cu_api kevo__cu;
kevo__cupti_api kevo__cupti;

static void *libcuda;
static void *libcupti;

/* Where each function pointer goes, by name. */
typedef struct symbol {
    const char *name;
    size_t offset;
} symbol;

/* The symbol name after cuda.h's macros: "cuMemAlloc_v2" for cuMemAlloc,
 * the entry point with exactly the prototype the header declares. */
#define KEVO__STR(x) KEVO__STR2(x)
#define KEVO__STR2(x) #x
#define KEVO__CU_SYMBOL(name) {KEVO__STR(name), offsetof(kevo__cu_api, name)},
#define KEVO__CUPTI_SYMBOL(name) {#name, offsetof(kevo__cupti_api, name)},

static const symbol cu_required[] = {KEVO__CU_FUNCTIONS(KEVO__CU_SYMBOL)};
static const symbol cu_optional[] = {
    KEVO__CU_OPTIONAL_FUNCTIONS(KEVO__CU_SYMBOL)};
static const symbol cupti_required[] = {
    KEVO__CUPTI_FUNCTIONS(KEVO__CUPTI_SYMBOL)};
static const symbol cupti_profiler[] = {KEVO__CUPTI_PROFILER_FUNCTIONS(
    KEVO__CUPTI_SYMBOL) KEVO__CUPTI_HOST_FUNCTIONS(KEVO__CUPTI_SYMBOL)};

/* Resolves syms into table with dlsym; returns the name of the first one
 * missing, or NULL. */
static const char *resolve(void *lib, const symbol *syms, size_t n, void *table)
{
    for (size_t i = 0; i < n; i++) {
        void *f = dlsym(lib, syms[i].name);
        if (!f)
            return syms[i].name;
        memcpy((char *)table + syms[i].offset, &f, sizeof(f));
    }
    return NULL;
}

kevo_status kevo__cu_load(kevo_error *err)
{
    if (libcuda)
        return KEVO_OK;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return kevo__error_set(err, KEVO_ENODEV, "no CUDA driver: %s",
                               dlerror());
    memset(&kevo__cu, 0, sizeof(kevo__cu));
    const char *missing =
        resolve(lib, cu_required, KEVO_ARRAY_SIZE(cu_required), &kevo__cu);
    if (missing) {
        dlclose(lib);
        return kevo__error_set(err, KEVO_ENODEV,
                               "the CUDA driver lacks %s (the worker was "
                               "built for CUDA %d.%d)",
                               missing, CUDA_VERSION / 1000,
                               CUDA_VERSION % 1000 / 10);
    }
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(cu_optional); i++) {
        if (resolve(lib, &cu_optional[i], 1, &kevo__cu))
            memset((char *)&kevo__cu + cu_optional[i].offset, 0,
                   sizeof(void *));
    }
    libcuda = lib;
    return KEVO_OK;
}

/* The CUPTI library in dir (NULL: the loader's search path). */
static void *open_cupti(const char *dir, kevo_buf *tried)
{
    static const char *const names[] = {"libcupti.so.13", "libcupti.so"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(names); i++) {
        char *path =
            dir ? kevo__path_join(dir, names[i]) : kevo__strdup(names[i]);
        if (!path)
            return NULL;
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            kevo__buf_printf(tried, "%s%s", tried->len ? "; " : "", dlerror());
        free(path);
        if (lib)
            return lib;
    }
    return NULL;
}

kevo_status kevo__cupti_load(kevo_error *err)
{
    if (libcupti)
        return KEVO_OK;
    kevo_buf tried = {0};
    const char *dirs[8];
    size_t ndirs = 0;
    const char *env = getenv("KEVO_CUPTI_DIR");
    const char *home = getenv("CUDA_HOME");
    char *owned[4] = {NULL, NULL, NULL, NULL};
    if (env && *env)
        dirs[ndirs++] = env;
    if (home && *home) {
        owned[0] = kevo__path_join(home, "lib64");
        owned[1] = kevo__path_join(home, "extras/CUPTI/lib64");
    }
#ifdef KEVO_CUDA_HOME
    owned[2] = kevo__path_join(KEVO_CUDA_HOME, "lib64");
    owned[3] = kevo__path_join(KEVO_CUDA_HOME, "extras/CUPTI/lib64");
#endif
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(owned); i++) {
        if (owned[i])
            dirs[ndirs++] = owned[i];
    }
    dirs[ndirs++] = "/usr/local/cuda/lib64";
    dirs[ndirs++] = "/usr/local/cuda/extras/CUPTI/lib64";
    dirs[ndirs++] = NULL; /* the loader's own search */

    void *lib = NULL;
    for (size_t i = 0; i < ndirs && !lib; i++)
        lib = open_cupti(dirs[i], &tried);
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(owned); i++)
        free(owned[i]);
    kevo_status rc = KEVO_OK;
    if (!lib) {
        rc = kevo__error_set(err, KEVO_ENOENT, "no CUPTI library: %s",
                             tried.data ? tried.data : "out of memory");
        goto done;
    }
    memset(&kevo__cupti, 0, sizeof(kevo__cupti));
    const char *missing = resolve(
        lib, cupti_required, KEVO_ARRAY_SIZE(cupti_required), &kevo__cupti);
    if (missing) {
        dlclose(lib);
        rc = kevo__error_set(err, KEVO_ENOENT, "the CUPTI library lacks %s",
                             missing);
        goto done;
    }
    kevo__cupti.profiler = !resolve(
        lib, cupti_profiler, KEVO_ARRAY_SIZE(cupti_profiler), &kevo__cupti);
    libcupti = lib;
done:
    kevo__buf_free(&tried);
    return rc;
}

const char *kevo__cu_error_name(CUresult r)
{
    static __thread char buf[32];
    const char *name = NULL;
    if (kevo__cu.cuGetErrorName &&
        kevo__cu.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
        return name;
    snprintf(buf, sizeof(buf), "CUDA error %d", (int)r);
    return buf;
}

bool kevo__cu_sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_UNKNOWN: return true;
    default: return false;
    }
}

kevo_status kevo__cu_check(CUresult r, const char *what, kevo_error *err)
{
    if (r == CUDA_SUCCESS)
        return KEVO_OK;
    const char *text = NULL;
    if (!kevo__cu.cuGetErrorString ||
        kevo__cu.cuGetErrorString(r, &text) != CUDA_SUCCESS || !text)
        text = "no description";
    return kevo__error_set_foreign(err, KEVO_EEXTERNAL, KEVO_DOMAIN_CUDA,
                                   (long)r, "%s: %s: %s", what,
                                   kevo__cu_error_name(r), text);
}

kevo_status kevo__cupti_check(CUptiResult r, const char *what, kevo_error *err)
{
    if (r == CUPTI_SUCCESS)
        return KEVO_OK;
    const char *text = NULL;
    if (!kevo__cupti.cuptiGetResultString ||
        kevo__cupti.cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text)
        text = "CUPTI error";
    return kevo__error_set_foreign(err, KEVO_EEXTERNAL, KEVO_DOMAIN_CUPTI,
                                   (long)r, "%s: %s (%d)", what, text, (int)r);
}

CUresult kevo__cu_error_of(const kevo_error *err)
{
    if (!err || err->code == KEVO_OK || err->domain != KEVO_DOMAIN_CUDA)
        return CUDA_SUCCESS;
    return (CUresult)err->foreign;
}

kevo_status kevo__cu_device_props(CUdevice dev, kevo_vars *vars,
                                  kevo_error *err)
{
    static const struct {
        const char *name;
        CUdevice_attribute attr;
    } props[] = {
        {"sm_count", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
        {"warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
        {"max_threads_per_block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {"max_threads_per_sm",
         CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
        {"max_smem_per_block",
         CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
        {"smem_per_sm",
         CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
        {"regs_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
        {"l2_bytes", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
    };
    kevo_status rc;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(props); i++) {
        int x = 0;
        rc = kevo__cu_check(
            kevo__cu.cuDeviceGetAttribute(&x, props[i].attr, dev),
            "cuDeviceGetAttribute", err);
        if (rc == KEVO_OK)
            rc = kevo_vars_set(vars, props[i].name, x);
        if (rc != KEVO_OK)
            return rc;
    }
    int major = 0, minor = 0;
    rc = kevo__cu_check(
        kevo__cu.cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(
            kevo__cu.cuDeviceGetAttribute(
                &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
            "cuDeviceGetAttribute", err);
    if (rc == KEVO_OK)
        rc = kevo_vars_set(vars, "cc", major * 10 + minor);
    return rc;
}
