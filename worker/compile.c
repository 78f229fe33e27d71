/*
 * compile.c: the compile mode of kevo-worker: NVRTC, one job at a time.
 *
 * request: {"op":"compile","id":N,"source":"...","name":"candidate.cu",
 *           "options":["-arch=sm_90",...],"kernels":["saxpy",...],
 *           "timeout_ms":M}
 * reply:   {"op":"compiled","id":N,"ok":true|false,"error":"..." (when
 *           !ok),"log":"...","ptx_bytes":P,"cubin_bytes":C,"nvrtc":"13.0",
 *           "seconds":S,"lowered":["saxpy",...],"cacheable":true|false}
 *          payload: the PTX (P bytes, no NUL), then the cubin (C bytes).
 * "kernels" (optional) are name expressions whose lowered names come back
 * in "lowered" (null where NVRTC has none). "cacheable" is false for a
 * failure that says nothing about the source (NVRTC out of memory, an
 * internal error), which the core must not cache. The time limit is the
 * core's to enforce: it kills this process. As a last resort, should the
 * core be gone, the process ends itself (SIGALRM) a few seconds after the
 * limit.
 *
 * The allowed headers (<cuda_fp16.h>, <cuda/std/...>, ...) are not built
 * into NVRTC: the process loads them and all they include from the toolkit
 * once, at start (headers.h), and hands them to NVRTC from memory with a
 * source that includes anything; there is never an include path. The
 * hello says what was loaded: {"op":"hello","ok":true,"mode":"compile",
 * "nvrtc":"13.0","headers":{"dir":"/usr/local/cuda/include","files":F,
 * "names":N,"bytes":B,"hash":"16 hex digits","conflicts":0,"seconds":S},
 * "sandbox":"landlock ABI 7","warmup_seconds":W} ("dir" null and "hash" ""
 * when no toolkit headers were found).
 *
 * A kernel can still make the preprocessor probe the host's files where
 * the include scan cannot see it (`#if CAT(__has_,include)("/etc/passwd")`
 * with a token-pasting CAT). So, before its hello, the process confines
 * itself (sandbox.h: Landlock; no file may be opened from then on, and
 * such a probe answers "not found") and compiles a small kernel once.
 * NVRTC's first compile opens libnvrtc-builtins and the C++ runtime it
 * needs, which are loaded beforehand, and the CUDA driver where there is
 * one, which it is denied (warm_up_confined says why). Where a confined
 * process cannot compile, the process compiles first and is confined
 * after. The hello's "sandbox" says "landlock ABI N" when the process is
 * confined, else "none: WHY" (no Landlock in the kernel, refused in a
 * container, the warm-up compile failed); "warmup_seconds" is the time
 * all this took. A confined process that cannot compile says hello with
 * ok false and exits with status 3. Environment: KEVO_NO_SANDBOX=1 leaves
 * the process unconfined (for comparisons and for debugging); CUDA_HOME
 * picks the headers (headers.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <nvrtc.h>

#include "headers.h"
#include "proc/compile_log.h"
#include "proc/include_scan.h"
#include "sandbox.h"
#include "worker.h"

/* How long after a job's time limit the process ends itself, when the
 * core has not killed it first. */
#define ALARM_GRACE_MS 5000

/* A parsed request. Strings are borrowed from the request's JSON. */
typedef struct job {
    uint64_t id;
    const char *source;
    size_t source_len;
    const char *name;
    const char **options;
    size_t noptions;
    const char **kernels;
    size_t nkernels;
} job;

/* What a compile produced. */
typedef struct outcome {
    bool ok;
    bool cacheable;
    char *error;
    char *log;
    char *ptx;
    size_t ptx_len;
    char *cubin;
    size_t cubin_len;
    char **lowered;
    double seconds;
} outcome;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void outcome_clear(outcome *o, size_t nkernels)
{
    free(o->error);
    free(o->log);
    free(o->ptx);
    free(o->cubin);
    for (size_t i = 0; o->lowered && i < nkernels; i++)
        free(o->lowered[i]);
    free(o->lowered);
    memset(o, 0, sizeof *o);
}

/* A JSON array of strings into a new array of borrowed pointers. */
static bool string_array(json_t *arr, const char ***out, size_t *n,
                         const char *what, char *why, size_t why_size)
{
    *out = NULL;
    *n = 0;
    if (!arr)
        return true;
    if (!json_is_array(arr)) {
        snprintf(why, why_size, "\"%s\" must be an array of strings", what);
        return false;
    }
    size_t count = json_array_size(arr);
    if (count == 0)
        return true;
    *out = calloc(count, sizeof **out);
    if (!*out) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *v = json_array_get(arr, i);
        if (!json_is_string(v) ||
            strlen(json_string_value(v)) != json_string_length(v)) {
            snprintf(why, why_size, "\"%s\"[%zu] must be a string", what, i);
            free(*out);
            *out = NULL;
            return false;
        }
        (*out)[i] = json_string_value(v);
    }
    *n = count;
    return true;
}

/* Fills *j from a request; false with why on a malformed one. */
static bool parse_job(json_t *msg, job *j, char *why, size_t why_size)
{
    json_t *source = json_object_get(msg, "source");
    json_t *name = json_object_get(msg, "name");
    memset(j, 0, sizeof *j);
    j->id = (uint64_t)json_integer_value(json_object_get(msg, "id"));
    if (!json_is_string(source) ||
        strlen(json_string_value(source)) != json_string_length(source)) {
        snprintf(why, why_size,
                 "\"source\" must be a string without NUL characters");
        return false;
    }
    if (name && !json_is_string(name)) {
        snprintf(why, why_size, "\"name\" must be a string");
        return false;
    }
    j->source = json_string_value(source);
    j->source_len = json_string_length(source);
    j->name = name ? json_string_value(name) : "candidate.cu";
    if (!string_array(json_object_get(msg, "options"), &j->options,
                      &j->noptions, "options", why, why_size))
        return false;
    if (!string_array(json_object_get(msg, "kernels"), &j->kernels,
                      &j->nkernels, "kernels", why, why_size)) {
        free(j->options);
        j->options = NULL;
        return false;
    }
    return true;
}

static char *program_log(nvrtcProgram prog)
{
    size_t n = 0;
    if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n <= 1)
        return kevo__strdup("");
    char *log = malloc(n);
    if (!log)
        return NULL;
    if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    log[n - 1] = '\0';
    return log;
}

/* The one line that says why a compile failed: a kernel name that is not
 * defined, else the log's first error (proc/compile_log.h). */
static char *compile_error_text(const job *j, const char *log)
{
    for (size_t i = 0; i < j->nkernels; i++) {
        char *needle = kevo__asprintf("nv_mangled_name %s\n", j->kernels[i]);
        if (!needle)
            return NULL;
        bool missing = strstr(log, needle) != NULL;
        free(needle);
        if (missing)
            return kevo__asprintf("kernel '%s' is not defined in %s",
                                  j->kernels[i], j->name);
    }
    return kevo__compile_log_reason(log);
}

static bool fail_nvrtc(outcome *o, const char *what, nvrtcResult r)
{
    o->ok = false;
    o->cacheable = r == NVRTC_ERROR_INVALID_OPTION;
    o->error =
        kevo__asprintf("NVRTC failed in %s: %s", what, nvrtcGetErrorString(r));
    return o->error != NULL;
}

static kevo_status count_include(void *ctx, const char *what, bool angle,
                                 const char *name, int line)
{
    (void)what;
    (void)angle;
    (void)name;
    (void)line;
    ++*(size_t *)ctx;
    return KEVO_OK;
}

/* Compiles j, with the headers when it includes any. Returns false only
 * when out of memory. */
static bool compile_job(const job *j, const kevo__headers *headers, outcome *o)
{
    nvrtcProgram prog = NULL;
    kevo_error scan = KEVO__ERROR_INIT;
    bool good = false;
    nvrtcResult r;

    memset(o, 0, sizeof *o);
    /* The core scans too; this keeps NVRTC away from a host file even
     * when a request did not come through the pool. */
    if (kevo__include_scan(j->source, j->source_len, j->name, &scan) !=
        KEVO_OK) {
        o->cacheable = true;
        o->error = kevo__strdup(scan.text);
        o->log = kevo__strdup("");
        return o->error && o->log;
    }
    /* Handing NVRTC the headers costs every compile a little (about 3 ms
     * of 60 for a small kernel with NVRTC 13.0): a source that includes
     * nothing does without them. */
    size_t includes = 0;
    kevo__include_each(j->source, j->source_len, count_include, &includes);
    int nheaders = includes ? (int)headers->count : 0;
    double t0 = now_seconds();
    r = nvrtcCreateProgram(&prog, j->source, j->name, nheaders,
                           nheaders ? headers->texts : NULL,
                           nheaders ? headers->names : NULL);
    if (r != NVRTC_SUCCESS) {
        good = fail_nvrtc(o, "nvrtcCreateProgram", r);
        goto done;
    }
    for (size_t i = 0; i < j->nkernels; i++) {
        bool dup = false;
        for (size_t k = 0; k < i; k++)
            dup = dup || strcmp(j->kernels[k], j->kernels[i]) == 0;
        if (!dup && (r = nvrtcAddNameExpression(prog, j->kernels[i])) !=
                        NVRTC_SUCCESS) {
            good = fail_nvrtc(o, "nvrtcAddNameExpression", r);
            goto done;
        }
    }
    r = nvrtcCompileProgram(prog, (int)j->noptions, j->options);
    o->seconds = now_seconds() - t0;
    if (!(o->log = program_log(prog)))
        goto done;
    if (r == NVRTC_ERROR_COMPILATION) {
        o->cacheable = true;
        o->error = compile_error_text(j, o->log);
        good = o->error != NULL;
        goto done;
    }
    if (r != NVRTC_SUCCESS) {
        good = fail_nvrtc(o, "nvrtcCompileProgram", r);
        goto done;
    }
    size_t ptx_size = 0, cubin_size = 0;
    if ((r = nvrtcGetPTXSize(prog, &ptx_size)) != NVRTC_SUCCESS ||
        (r = nvrtcGetCUBINSize(prog, &cubin_size)) != NVRTC_SUCCESS) {
        good = fail_nvrtc(o, "nvrtcGetPTXSize", r);
        goto done;
    }
    o->ptx = malloc(ptx_size + 1);
    o->cubin = malloc(cubin_size + 1);
    if (!o->ptx || !o->cubin)
        goto done;
    if ((r = nvrtcGetPTX(prog, o->ptx)) != NVRTC_SUCCESS) {
        good = fail_nvrtc(o, "nvrtcGetPTX", r);
        goto done;
    }
    if (cubin_size && (r = nvrtcGetCUBIN(prog, o->cubin)) != NVRTC_SUCCESS) {
        good = fail_nvrtc(o, "nvrtcGetCUBIN", r);
        goto done;
    }
    o->ptx[ptx_size] = '\0';
    o->ptx_len = strlen(o->ptx);
    o->cubin_len = cubin_size;
    if (cubin_size == 0) {
        o->cacheable = true;
        o->error = kevo__strdup("NVRTC made no cubin (is -arch a real "
                                "architecture, sm_NN?)");
        good = o->error != NULL;
        goto done;
    }
    if (j->nkernels) {
        o->lowered = calloc(j->nkernels, sizeof *o->lowered);
        if (!o->lowered)
            goto done;
        for (size_t i = 0; i < j->nkernels; i++) {
            const char *low = NULL;
            if (nvrtcGetLoweredName(prog, j->kernels[i], &low) ==
                    NVRTC_SUCCESS &&
                low && !(o->lowered[i] = kevo__strdup(low)))
                goto done;
        }
    }
    o->seconds = now_seconds() - t0;
    o->ok = true;
    o->cacheable = true;
    good = true;
done:
    if (prog)
        nvrtcDestroyProgram(&prog);
    if (good && !o->log && !(o->log = kevo__strdup("")))
        good = false;
    return good;
}

/* Sends the reply for j. */
static kevo_status send_reply(int out_fd, const job *j, const outcome *o,
                              const char *nvrtc, kevo_error *err)
{
    kevo_status rc = KEVO_ENOMEM;
    json_t *lowered = json_array();
    json_t *msg = NULL;
    unsigned char *payload = NULL;
    size_t plen = o->ok ? o->ptx_len + o->cubin_len : 0;

    if (!lowered)
        goto done;
    for (size_t i = 0; o->ok && i < j->nkernels; i++) {
        json_t *v = o->lowered && o->lowered[i] ? json_string(o->lowered[i])
                                                : json_null();
        if (json_array_append_new(lowered, v) != 0)
            goto done;
    }
    msg = json_pack(
        "{s:s, s:I, s:b, s:s?, s:s, s:I, s:I, s:s, s:f, s:O, "
        "s:b}",
        "op", "compiled", "id", (json_int_t)j->id, "ok", (int)o->ok, "error",
        o->ok ? NULL : o->error, "log", o->log ? o->log : "", "ptx_bytes",
        (json_int_t)(o->ok ? o->ptx_len : 0), "cubin_bytes",
        (json_int_t)(o->ok ? o->cubin_len : 0), "nvrtc", nvrtc, "seconds",
        o->seconds, "lowered", lowered, "cacheable", (int)o->cacheable);
    if (!msg)
        goto done;
    if (plen) {
        payload = malloc(plen);
        if (!payload)
            goto done;
        memcpy(payload, o->ptx, o->ptx_len);
        memcpy(payload + o->ptx_len, o->cubin, o->cubin_len);
    }
    rc = kevo__ipc_send(out_fd, msg, payload, plen, -1, err);
done:
    if (rc == KEVO_ENOMEM)
        kevo__error_set(err, KEVO_ENOMEM, "out of memory for a reply");
    free(payload);
    json_decref(msg);
    json_decref(lowered);
    return rc;
}

/* Ends the process by SIGALRM (default action) a while after timeout_ms;
 * 0 disarms. */
static void arm_alarm(json_int_t timeout_ms)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    if (timeout_ms > 0) {
        long long ms = (long long)timeout_ms + ALARM_GRACE_MS;
        it.it_value.tv_sec = (time_t)(ms / 1000);
        it.it_value.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    }
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Says hello: NVRTC's version, what headers there are, the sandbox. */
static kevo_status say_hello(int out_fd, const char *nvrtc,
                             const kevo__headers *h, double seconds,
                             const char *sandbox, double warmup_seconds,
                             kevo_error *err)
{
    json_t *hello = json_pack(
        "{s:s, s:b, s:s, s:s, s:{s:s?, s:I, s:I, s:I, s:s, s:I, s:f}, s:s, "
        "s:f}",
        "op", "hello", "ok", 1, "mode", "compile", "nvrtc", nvrtc, "headers",
        "dir", h->dir, "files", (json_int_t)h->files, "names",
        (json_int_t)h->count, "bytes", (json_int_t)h->bytes, "hash", h->hash,
        "conflicts", (json_int_t)h->conflicts, "seconds", seconds, "sandbox",
        sandbox, "warmup_seconds", warmup_seconds);
    if (!hello)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo__ipc_send(out_fd, hello, NULL, 0, -1, err);
    json_decref(hello);
    return rc;
}

/* The oldest real architecture NVRTC compiles for, as "-arch=sm_NN" in
 * buf. */
static void warm_up_arch(char *buf, size_t size)
{
    int n = 0, archs[64];
    snprintf(buf, size, "-arch=sm_75");
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 ||
        n > (int)KEVO_ARRAY_SIZE(archs) ||
        nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
        return;
    snprintf(buf, size, "-arch=sm_%d", archs[0]);
}

/* Compiles a small kernel with the pool's fixed options, so that NVRTC
 * opens now, while it still may, whatever it opens on its first compile.
 * Returns false with why when the compile fails. */
static bool warm_up(const kevo__headers *headers, char *why, size_t why_size)
{
    static const char source[] =
        "extern \"C\" __global__ void kevo_warm_up(int *x, int n)\n"
        "{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n)\n"
        "        x[i] = i;\n"
        "}\n";
    char arch[32];
    const char *options[] = {arch,
                             "-std=c++17",
                             "--ptxas-options=-v",
                             "-default-device",
                             "--no-source-include",
                             "-DKEVO_EVAL=1"};
    const char *kernels[] = {"kevo_warm_up"};
    job j = {.source = source,
             .source_len = sizeof source - 1,
             .name = "kevo_warm_up.cu",
             .options = options,
             .noptions = KEVO_ARRAY_SIZE(options),
             .kernels = kernels,
             .nkernels = KEVO_ARRAY_SIZE(kernels)};
    outcome o;

    warm_up_arch(arch, sizeof arch);
    bool good = compile_job(&j, headers, &o);
    if (!good)
        snprintf(why, why_size, "out of memory");
    else if (!o.ok)
        snprintf(why, why_size, "%.160s", o.error ? o.error : "no reason");
    good = good && o.ok;
    outcome_clear(&o, j.nkernels);
    return good;
}

/* Opens now what NVRTC opens on its first compile and a confined process
 * could not: libnvrtc-builtins (with the C++ runtime it needs), from
 * libnvrtc's directory or else by name, and the time zone (for __DATE__
 * and __TIME__). NVRTC's own dlopen of the builtins then finds them loaded.
 * Returns the handle (NULL when they cannot be loaded; then the confined
 * warm-up fails and the process confines itself only after an unconfined
 * one). */
static void *preload(int major, int minor)
{
    char name[64];
    void *handle = NULL;
    Dl_info info;

    tzset();
    snprintf(name, sizeof name, "libnvrtc-builtins.so.%d.%d", major, minor);
    if (dladdr((void *)nvrtcVersion, &info) && info.dli_fname &&
        strchr(info.dli_fname, '/')) {
        char *dir = kevo__dirname(info.dli_fname);
        char *path = dir ? kevo__path_join(dir, name) : NULL;
        if (path)
            handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        free(dir);
        free(path);
    }
    return handle ? handle : dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

/* Whether a confined process can compile: a child confines itself and
 * makes the warm-up compile, so that a failure costs only the child. The
 * child frees its copy of headers before it ends. */
static bool confined_compile_works(kevo__headers *headers)
{
    int status = 0;
    pid_t pid = fork();

    if (pid < 0)
        return false;
    if (pid == 0) {
        char what[KEVO__SANDBOX_TEXT_SIZE], why[192];
        bool works = kevo__sandbox_enter(what, sizeof what) &&
                     warm_up(headers, why, sizeof why);
        kevo__headers_free(headers);
        _exit(works ? 0 : 1);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return false;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Makes the first compile and confines the process (sandbox.h); what
 * the sandbox is goes to what. Best confined before the warm-up compile:
 * NVRTC's first compile also loads the CUDA driver where there is one
 * (for NVRTC's own compile cache in ~/.nv/ComputeCache), whose cuInit
 * starts a thread that Landlock would leave free; denied the driver, NVRTC
 * compiles without that cache (kevo has its own). Where a confined process
 * cannot compile, the warm-up runs first and the process is confined
 * after it, if it can be. Returns false, with why, only when the process
 * is confined and cannot compile. */
static bool warm_up_confined(kevo__headers *headers, int major, int minor,
                             char *what, size_t what_size, char *why,
                             size_t why_size)
{
    void *builtins = preload(major, minor);
    bool confined =
        confined_compile_works(headers) && kevo__sandbox_enter(what, what_size);
    bool warm = warm_up(headers, why, why_size);

    /* NVRTC holds the builtins too; this handle is not needed again. */
    if (builtins)
        dlclose(builtins);
    if (confined)
        return warm;
    if (!warm)
        snprintf(what, what_size, "none: the warm-up compile failed: %.120s",
                 why);
    else
        kevo__sandbox_enter(what, what_size);
    return true;
}

/* Answers requests until end of file; returns the exit status. */
static int serve(int in_fd, int out_fd, const char *nvrtc,
                 const kevo__headers *headers)
{
    kevo_error err = KEVO__ERROR_INIT;
    for (;;) {
        kevo__frame frame = {0};
        kevo_status rc = kevo__ipc_recv(in_fd, -1, &frame, &err);
        if (rc == KEVO_DONE)
            return 0;
        if (rc != KEVO_OK) {
            fprintf(stderr, "kevo-worker: %s\n", err.text);
            return 1;
        }
        const char *op = json_string_value(json_object_get(frame.json, "op"));
        uint64_t id =
            (uint64_t)json_integer_value(json_object_get(frame.json, "id"));
        char why[256];
        job j;
        outcome o;
        if (!op || strcmp(op, "compile") != 0) {
            snprintf(why, sizeof why, "unknown op \"%s\" for a compile worker",
                     op ? op : "(none)");
            rc = kevo__worker_reply_error(out_fd, "error", id, why, &err);
        } else if (!parse_job(frame.json, &j, why, sizeof why)) {
            rc = kevo__worker_reply_error(out_fd, "compiled", id, why, &err);
        } else {
            arm_alarm(
                json_integer_value(json_object_get(frame.json, "timeout_ms")));
            bool compiled = compile_job(&j, headers, &o);
            arm_alarm(0);
            if (!compiled) {
                rc = kevo__worker_reply_error(out_fd, "compiled", id,
                                              "out of memory in the compile "
                                              "worker",
                                              &err);
            } else {
                rc = send_reply(out_fd, &j, &o, nvrtc, &err);
            }
            outcome_clear(&o, j.nkernels);
            free(j.options);
            free(j.kernels);
        }
        kevo__frame_clear(&frame);
        if (rc != KEVO_OK) {
            fprintf(stderr, "kevo-worker: cannot reply: %s\n", err.text);
            return 1;
        }
    }
}

int kevo__worker_compile_main(int in_fd, int out_fd)
{
    kevo_error err = KEVO__ERROR_INIT;
    int major = 0, minor = 0;
    char nvrtc[32], why[KEVO_ERROR_TEXT_SIZE + 64];
    kevo__headers *headers = NULL;
    char *dir = NULL;
    int status = 1;
    nvrtcResult r = nvrtcVersion(&major, &minor);

    if (r != NVRTC_SUCCESS) {
        snprintf(why, sizeof why, "NVRTC does not work: nvrtcVersion: %s",
                 nvrtcGetErrorString(r));
        status = KEVO__WORKER_EXIT_UNAVAILABLE;
        goto refuse;
    }
    snprintf(nvrtc, sizeof nvrtc, "%d.%d", major, minor);
    double t0 = now_seconds();
    dir = kevo__headers_dir();
    headers = kevo__headers_load(dir, &err);
    if (!headers) {
        snprintf(why, sizeof why, "cannot load the CUDA headers from %s: %s",
                 dir ? dir : "(no directory)", err.text);
        status = KEVO__WORKER_EXIT_UNAVAILABLE;
        goto refuse;
    }
    double headers_seconds = now_seconds() - t0;
    char sandbox[KEVO__SANDBOX_TEXT_SIZE], failed[192];
    t0 = now_seconds();
    /* jansson seeds its hash tables from /dev/urandom on its first object:
     * now, while the file may still be opened. */
    json_object_seed(0);
    if (!warm_up_confined(headers, major, minor, sandbox, sizeof sandbox,
                          failed, sizeof failed)) {
        snprintf(why, sizeof why,
                 "NVRTC does not work in the sandbox (%s): the warm-up "
                 "compile failed: %s; KEVO_NO_SANDBOX=1 compiles without it",
                 sandbox, failed);
        status = KEVO__WORKER_EXIT_UNAVAILABLE;
        goto refuse;
    }
    double warmup_seconds = now_seconds() - t0;
    signal(SIGALRM, SIG_DFL);
    if (say_hello(out_fd, nvrtc, headers, headers_seconds, sandbox,
                  warmup_seconds, &err) != KEVO_OK) {
        fprintf(stderr, "kevo-worker: cannot say hello: %s\n", err.text);
        goto done;
    }
    status = serve(in_fd, out_fd, nvrtc, headers);
    goto done;
refuse:;
    json_t *hello = json_pack("{s:s, s:b, s:s, s:s}", "op", "hello", "ok", 0,
                              "mode", "compile", "error", why);
    if (hello)
        kevo__ipc_send(out_fd, hello, NULL, 0, -1, NULL);
    json_decref(hello);
done:
    kevo__headers_free(headers);
    free(dir);
    return status;
}
