/*
 * test-options.c: every option of every object (the evaluator, the search,
 * the prompt pool) through the one option-table mechanism of
 * lib/core/options.c. For each option: its name maps to it and back, its
 * bounds hold its default, the object starts at the default, a value just
 * below or above the bounds is refused with the common text that names the
 * option and the bounds, and an option fixed at start is refused once the
 * object has started (the evaluator started compile-only where kevo-worker
 * is built, the search after a step with the params operator and a scoring
 * function). The defaults and bounds are written out here: figures depend
 * on them, and a change must show.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/kevo_private.h"
#include "core/options.h"
#include "proc/eval_options.h"
#include "tap.h"

/* ---- the expected tables --------------------------------------------------
 */

typedef struct int_option {
    int opt;
    const char *name;
    int64_t def, lo, hi;
    bool live;
} int_option;

static const int_option eval_want[] = {
    {KEVO_EVAL_COMPILE_WORKERS, "compile_workers", 0, 0, 1024, false},
    {KEVO_EVAL_DEVICE, "device", 0, 0, 1023, false},
    {KEVO_EVAL_COMPILE_TIMEOUT_MS, "compile_timeout_ms", 30000, 100, 3600000,
     true},
    {KEVO_EVAL_RUN_TIMEOUT_MS, "run_timeout_ms", 10000, 100, 3600000, true},
    {KEVO_EVAL_WARMUP, "warmup", 3, 0, 1000, true},
    {KEVO_EVAL_MIN_REPS, "min_reps", 10, 1, 100000, true},
    {KEVO_EVAL_MAX_REPS, "max_reps", 300, 1, 100000, true},
    {KEVO_EVAL_TARGET_SPREAD_PPM, "target_spread_ppm", 10000, 0, 1000000, true},
    {KEVO_EVAL_TIME_CAP_MS, "time_cap_ms", 1000, 1, 600000, true},
    {KEVO_EVAL_PROFILE, "profile", 0, 0, 1, true},
    {KEVO_EVAL_FLUSH_L2, "flush_l2", 1, 0, 1, true},
    {KEVO_EVAL_INPUT_SEEDS, "input_seeds", 4, 2, 64, false},
    {KEVO_EVAL_SUSPICIOUS_PPM, "suspicious_ppm", 1050000, 1000000, 100000000,
     true},
    {KEVO_EVAL_SEED, "seed", 1, 0, INT64_MAX, false},
    {KEVO_EVAL_PAIRED_MIN_REPS, "paired_min_reps", 30, 1, 100000, true},
    {KEVO_EVAL_PAIRED_SPREAD_PPM, "paired_spread_ppm", 2500, 0, 1000000, true},
};

static const int_option search_want[] = {
    {KEVO_SEARCH_SEED, "seed", 1, 0, INT64_MAX, false},
    {KEVO_SEARCH_MAX_EVALS, "max_evals", 300, 0, INT64_MAX, true},
    {KEVO_SEARCH_MAX_SECONDS, "max_seconds", 0, 0, INT64_MAX, true},
    {KEVO_SEARCH_MAX_TOKENS, "max_tokens", 20000000, 0, INT64_MAX, true},
    {KEVO_SEARCH_MAX_COST_MICROS, "max_cost_micros", 0, 0, INT64_MAX, true},
    {KEVO_SEARCH_TARGET_PPM, "target_ppm", 0, 0, INT64_MAX, true},
    {KEVO_SEARCH_STAGNATION, "stagnation", 0, 0, INT64_MAX, true},
    {KEVO_SEARCH_CHECKPOINT_EVERY, "checkpoint_every", 50, 1, INT64_MAX, true},
    {KEVO_SEARCH_ISLANDS, "islands", 1, 1, 64, false},
    {KEVO_SEARCH_MIGRATE_EVERY, "migrate_every", 50, 1, INT64_MAX, false},
    {KEVO_SEARCH_PICK_UNIFORM, "pick_uniform", 40, 0, 1000000, false},
    {KEVO_SEARCH_PICK_SOFTMAX, "pick_softmax", 40, 0, 1000000, false},
    {KEVO_SEARCH_PICK_CURIOSITY, "pick_curiosity", 20, 0, 1000000, false},
    {KEVO_SEARCH_TEMPERATURE_PPM, "temperature_ppm", 100000, 1, 1000000000,
     false},
    {KEVO_SEARCH_DEPTH, "depth", 0, 0, 4096, false},
    {KEVO_SEARCH_INSPIRATIONS, "inspirations", 2, 0, 16, false},
    {KEVO_SEARCH_GATE_TOP, "gate_top", 10, 1, 1000, true},
    {KEVO_SEARCH_TUNE, "tune", 1, 0, 1, true},
    {KEVO_SEARCH_CHILDREN, "children", 1, 1, 64, false},
    {KEVO_SEARCH_REPAIR_TURNS, "repair_turns", 1, 0, 8, true},
    {KEVO_SEARCH_GATE_SLACK_PPM, "gate_slack_ppm", 100000, 0, 10000000, true},
    {KEVO_SEARCH_GATE_FLOOR_NS, "gate_floor_ns", -1, -1, 1000000000, true},
    {KEVO_SEARCH_RANK_DEPTH, "rank_depth", 0, 0, 4096, false},
    {KEVO_SEARCH_OPERATOR_FAILURES, "operator_failures", 20, 0, 1000000, true},
    {KEVO_SEARCH_FAILURE_BACKOFF_MS, "failure_backoff_ms", 500, 0, 3600000,
     true},
    {KEVO_SEARCH_FAILURE_BACKOFF_MAX_MS, "failure_backoff_max_ms", 30000, 0,
     3600000, true},
};

static bool same(const char *got, const char *want)
{
    return got && strcmp(got, want) == 0;
}

/* ---- one face for the integer options of the evaluator and the search ---- */

typedef struct object_face {
    const char *object; /* as the messages name it */
    const int_option *want;
    size_t n;
    const char *(*name)(int opt);
    kevo_status (*from_name)(const char *name, int *opt);
    kevo_status (*bounds)(int opt, int64_t *lo, int64_t *hi, int64_t *def);
    bool (*live)(int opt);
    kevo_status (*set)(void *obj, int opt, int64_t v, kevo_error *err);
    int64_t (*get)(const void *obj, int opt);
} object_face;

static const char *eval_name(int opt)
{
    return kevo_eval_option_name((kevo_eval_option)opt);
}

static kevo_status eval_from_name(const char *name, int *opt)
{
    kevo_eval_option o = (kevo_eval_option)-1;
    kevo_status rc = kevo_eval_option_from_name(name, opt ? &o : NULL);
    if (opt)
        *opt = (int)o;
    return rc;
}

static kevo_status eval_bounds(int opt, int64_t *lo, int64_t *hi, int64_t *def)
{
    return kevo_eval_option_bounds((kevo_eval_option)opt, lo, hi, def);
}

static bool eval_live(int opt)
{
    return kevo_eval_option_live((kevo_eval_option)opt);
}

static kevo_status eval_set(void *obj, int opt, int64_t v, kevo_error *err)
{
    return kevo_evaluator_set_int(obj, (kevo_eval_option)opt, v, err);
}

static int64_t eval_get(const void *obj, int opt)
{
    return kevo_evaluator_get_int(obj, (kevo_eval_option)opt);
}

static const char *search_name(int opt)
{
    return kevo_search_option_name((kevo_search_option)opt);
}

static kevo_status search_from_name(const char *name, int *opt)
{
    kevo_search_option o = (kevo_search_option)-1;
    kevo_status rc = kevo_search_option_from_name(name, opt ? &o : NULL);
    if (opt)
        *opt = (int)o;
    return rc;
}

static kevo_status search_bounds(int opt, int64_t *lo, int64_t *hi,
                                 int64_t *def)
{
    return kevo_search_option_bounds((kevo_search_option)opt, lo, hi, def);
}

static bool search_live(int opt)
{
    return kevo_search_option_live((kevo_search_option)opt);
}

static kevo_status search_set(void *obj, int opt, int64_t v, kevo_error *err)
{
    return kevo_search_set_int(obj, (kevo_search_option)opt, v, err);
}

static int64_t search_get(const void *obj, int opt)
{
    return kevo_search_get_int(obj, (kevo_search_option)opt);
}

static const object_face eval_face = {
    "evaluator", eval_want,      KEVO_ARRAY_SIZE(eval_want),
    eval_name,   eval_from_name, eval_bounds,
    eval_live,   eval_set,       eval_get};

static const object_face search_face = {
    "search",    search_want,      KEVO_ARRAY_SIZE(search_want),
    search_name, search_from_name, search_bounds,
    search_live, search_set,       search_get};

/* Sets option w of obj to v, which is out of bounds: refused with the
 * common text, the value unchanged. */
static void check_refused(const object_face *f, void *obj, const int_option *w,
                          int64_t v)
{
    kevo_error e = KEVO__ERROR_INIT;
    bool below = v < w->lo;
    char want[256];
    snprintf(want, sizeof want,
             "option %s: %" PRId64 " is %s allowed value %" PRId64
             " (allowed %" PRId64 "..%" PRId64 ")",
             w->name, v, below ? "below the lowest" : "above the highest",
             below ? w->lo : w->hi, w->lo, w->hi);
    is_int(f->set(obj, w->opt, v, &e), KEVO_ERANGE,
           "%s %s: %" PRId64 " refused", f->object, w->name, v);
    is_str(e.text, want, "%s %s: ... with the common text", f->object, w->name);
    is_int(f->get(obj, w->opt), w->def, "%s %s: ... and the value kept",
           f->object, w->name);
}

/* Every option of f on obj, not started yet. */
static void check_options(const object_face *f, void *obj)
{
    for (size_t i = 0; i < f->n; i++) {
        const int_option *w = &f->want[i];
        int back = -1;
        int64_t lo = -5, hi = -5, def = -5;
        ok(same(f->name(w->opt), w->name), "%s option %d is called %s",
           f->object, w->opt, w->name);
        ok(f->from_name(w->name, &back) == KEVO_OK && back == w->opt,
           "%s %s: from its name", f->object, w->name);
        ok(f->bounds(w->opt, &lo, &hi, &def) == KEVO_OK && lo == w->lo &&
               hi == w->hi && def == w->def,
           "%s %s: default %" PRId64 ", bounds %" PRId64 "..%" PRId64,
           f->object, w->name, w->def, w->lo, w->hi);
        ok(lo <= def && def <= hi, "%s %s: the default is inside the bounds",
           f->object, w->name);
        is_int(f->get(obj, w->opt), w->def, "%s %s: starts at the default",
               f->object, w->name);
        ok(f->live(w->opt) == w->live, "%s %s: %s", f->object, w->name,
           w->live ? "may change after start" : "fixed at start");
        if (w->lo > INT64_MIN)
            check_refused(f, obj, w, w->lo - 1);
        if (w->hi < INT64_MAX)
            check_refused(f, obj, w, w->hi + 1);
        ok(f->set(obj, w->opt, w->lo, NULL) == KEVO_OK &&
               f->set(obj, w->opt, w->hi, NULL) == KEVO_OK &&
               f->set(obj, w->opt, w->def, NULL) == KEVO_OK &&
               f->get(obj, w->opt) == w->def,
           "%s %s: the lowest, the highest and the default are taken",
           f->object, w->name);
    }
    /* The table ends where the list does. */
    int n = (int)f->n;
    kevo_error e = KEVO__ERROR_INIT;
    char want[64];
    ok(f->name(n - 1) && !f->name(n) && !f->name(-1), "%s: %d options, no more",
       f->object, n);
    snprintf(want, sizeof want, "no %s option %d", f->object, n);
    is_int(f->set(obj, n, 0, &e), KEVO_EINVAL, "%s: an unknown option refused",
           f->object);
    is_str(e.text, want, "%s: ... named by its number", f->object);
    is_int(f->get(obj, n), -1, "%s: an unknown option reads -1", f->object);
    is_int(f->bounds(n, NULL, NULL, NULL), KEVO_EINVAL,
           "%s: an unknown option has no bounds", f->object);
    ok(!f->live(n), "%s: an unknown option is not live", f->object);
    is_int(f->from_name(f->want[0].name, NULL), KEVO_OK,
           "%s: a NULL out asks whether the name exists", f->object);
    is_int(f->from_name("nosuch", NULL), KEVO_ENOENT, "%s: ... and it does not",
           f->object);
    int back = 7;
    is_int(f->from_name("nosuch", &back), KEVO_ENOENT, "%s: an unknown name",
           f->object);
    is_int(f->from_name(NULL, &back), KEVO_EINVAL, "%s: a NULL name",
           f->object);
}

/* Every option of f on obj, started: the live ones take a value, the
 * others are refused with the common text. */
static void check_started(const object_face *f, void *obj)
{
    for (size_t i = 0; i < f->n; i++) {
        const int_option *w = &f->want[i];
        kevo_error e = KEVO__ERROR_INIT;
        kevo_status rc = f->set(obj, w->opt, w->def, &e);
        if (w->live) {
            is_int(rc, KEVO_OK, "%s %s: may change once started", f->object,
                   w->name);
            continue;
        }
        char want[128];
        snprintf(want, sizeof want,
                 "option %s cannot change once the %s has started", w->name,
                 f->object);
        is_int(rc, KEVO_ESTATE, "%s %s: fixed once started", f->object,
               w->name);
        is_str(e.text, want, "%s %s: ... with the common text", f->object,
               w->name);
    }
}

/* ---- the evaluator ------------------------------------------------------- */

static void test_evaluator(void)
{
    kevo_evaluator *ev = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_evaluator_new(&ev, &e) != KEVO_OK)
        bail_out("an evaluator: %s", e.text);
    check_options(&eval_face, ev);
    kevo_evaluator_set_int(ev, KEVO_EVAL_COMPILE_WORKERS, 1, NULL);
    if (kevo_evaluator_start(ev, KEVO_EVAL_START_COMPILE_ONLY, &e) == KEVO_OK) {
        check_started(&eval_face, ev);
        is_int(kevo_evaluator_get_int(ev, KEVO_EVAL_COMPILE_WORKERS), 1,
               "evaluator: compile_workers kept its value");
    } else {
        diag("no kevo-worker (%s): the options fixed at start are not "
             "checked after it",
             e.text);
    }
    kevo_evaluator_free(ev);
}

/* ---- the evaluator's devices ------------------------------------------- */

/* value is refused with code and exactly the text want. */
static void devices_refused(const char *value, kevo_status code,
                            const char *want)
{
    kevo_evaluator *ev = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_evaluator_new(&ev, &e) != KEVO_OK)
        bail_out("an evaluator: %s", e.text);
    kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, "1", NULL);
    kevo_status rc =
        kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, value, &e);
    is_int(rc, code, "devices '%.40s': refused with %s", value,
           kevo_strerror(code));
    is_str(e.text, want,
           "devices '%.40s': the message names the option and "
           "the value",
           value);
    /* The option keeps its value: "1" still parses, as at start. */
    kevo_evaluator_free(ev);
}

static void test_devices(void)
{
    static const char *const good[] = {"all",    "0",    "0,2,3", "3,0",
                                       " 1 , 4", "1023", "",      NULL};
    kevo_evaluator *ev = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_evaluator_new(&ev, &e) != KEVO_OK)
        bail_out("an evaluator: %s", e.text);
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(good); i++) {
        kevo_error_init(&e);
        ok(kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, good[i], &e) ==
               KEVO_OK,
           "devices '%s' is taken (%s)", good[i] ? good[i] : "(NULL)", e.text);
    }
    is_uint(kevo_evaluator_device_count(ev), 0,
            "no device counted before start");
    kevo_evaluator_free(ev);

    devices_refused("0,x", KEVO_EINVALID,
                    "option devices: '0,x' is not \"all\" or a list of "
                    "device numbers such as 0,2,3");
    devices_refused("All", KEVO_EINVALID,
                    "option devices: 'All' is not \"all\" or a list of "
                    "device numbers such as 0,2,3");
    devices_refused("0,,1", KEVO_EINVALID,
                    "option devices: '0,,1' is not \"all\" or a list of "
                    "device numbers such as 0,2,3");
    devices_refused("1,", KEVO_EINVALID,
                    "option devices: '1,' is not \"all\" or a list of "
                    "device numbers such as 0,2,3");
    devices_refused("-1", KEVO_EINVALID,
                    "option devices: '-1' is not \"all\" or a list of "
                    "device numbers such as 0,2,3");
    devices_refused("0 1", KEVO_EINVALID,
                    "option devices: '0 1' is not \"all\" or a list of "
                    "device numbers such as 0,2,3");
    devices_refused("0,2,0", KEVO_EINVALID,
                    "option devices: '0,2,0' names device 0 twice");
    devices_refused("1024", KEVO_ERANGE,
                    "option devices: '1024': a device number is at most "
                    "1023");
    devices_refused("99999999999999999999999", KEVO_ERANGE,
                    "option devices: '99999999999999999999999': a device "
                    "number is at most 1023");
    kevo_buf many = {0};
    for (int i = 0; i <= 64; i++)
        kevo__buf_printf(&many, "%s%d", i ? "," : "", i);
    char *want = kevo__asprintf("option devices: '%s' names more than 64 "
                                "devices, the most an evaluator drives",
                                many.data);
    kevo_error cut = KEVO__ERROR_INIT;
    kevo__error_set(&cut, KEVO_ELIMIT, "%s", want); /* cut as errors are */
    devices_refused(many.data, KEVO_ELIMIT, cut.text);
    free(want);
    /* 64 devices are the most, and are taken. */
    char *comma = strrchr(many.data, ',');
    *comma = '\0';
    if (kevo_evaluator_new(&ev, &e) != KEVO_OK)
        bail_out("an evaluator: %s", e.text);
    ok(kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, many.data, &e) ==
           KEVO_OK,
       "64 devices are taken");
    kevo__buf_free(&many);

    /* Compile-only, the option is kept but no device is counted; it
     * cannot change once started. */
    kevo_evaluator_set_int(ev, KEVO_EVAL_COMPILE_WORKERS, 1, NULL);
    kevo_error_init(&e);
    if (kevo_evaluator_start(ev, KEVO_EVAL_START_COMPILE_ONLY, &e) == KEVO_OK) {
        is_uint(kevo_evaluator_device_count(ev), 0,
                "compile-only: no device counted");
        kevo_error_init(&e);
        is_int(kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, "0", &e),
               KEVO_ESTATE, "devices cannot change once started");
    } else {
        diag("no kevo-worker (%s): not started", e.text);
    }
    kevo_evaluator_free(ev);
}

/* ---- the search ---------------------------------------------------------- */

static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task, (void)c, (void)user, (void)err;
    *fitness = 0.5;
    desc[0] = desc[1] = 0;
    return KEVO_OK;
}

static void test_search(void)
{
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    kevo_task *task = NULL;
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_load(path, &task, &e) != KEVO_OK ||
        kevo_search_new(task, &s, &e) != KEVO_OK)
        bail_out("a search: %s", e.text);
    free(path);
    check_options(&search_face, s);
    if (kevo_search_set_score_fn(s, score, NULL, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 1, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK)
        bail_out("setting the search up: %s", e.text);
    kevo_status rc = kevo_search_step(s, 0, &e);
    ok(rc == KEVO_OK || rc == KEVO_DONE, "search: a first step (%s)",
       rc == KEVO_OK || rc == KEVO_DONE ? "ok" : e.text);
    kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 300, NULL);
    check_started(&search_face, s);
    kevo_search_free(s);
    kevo_task_free(task);
}

/* ---- the prompt pool ------------------------------------------------------
 */

static void test_promptpool(void)
{
    static const struct {
        kevo_promptpool_option opt;
        const char *name;
        double def, lo, hi;
        bool whole, lo_open;
    } want[] = {
        {KEVO_PROMPTPOOL_PRIOR_SUCCESS, "prior_success", 1, 0, 1e6, false,
         true},
        {KEVO_PROMPTPOOL_PRIOR_FAILURE, "prior_failure", 1, 0, 1e6, false,
         true},
        {KEVO_PROMPTPOOL_BEAT_WEIGHT, "beat_weight", 0.5, 0, 1, false, false},
        {KEVO_PROMPTPOOL_REVISE_EVERY, "revise_every", 50, 0, 1e9, true, false},
        {KEVO_PROMPTPOOL_REVISE_MIN_USES, "revise_min_uses", 20, 1, 1e9, true,
         false},
        {KEVO_PROMPTPOOL_REVISE_MIN_AGE, "revise_min_age", 100, 0, 1e9, true,
         false},
    };
    kevo_promptpool *pool = NULL;
    if (kevo_promptpool_new(8, &pool, NULL) != KEVO_OK)
        bail_out("a prompt pool");
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(want); i++) {
        const char *name = want[i].name;
        kevo_promptpool_option back = (kevo_promptpool_option)-1;
        double lo = -5, hi = -5, def = -5;
        kevo_error e = KEVO__ERROR_INIT;
        char text[256], range[96];
        snprintf(range, sizeof range, "allowed %.15g..%.15g%s", want[i].lo,
                 want[i].hi, want[i].lo_open ? ", 0 excluded" : "");
        ok(same(kevo_promptpool_option_name(want[i].opt), name),
           "prompt pool option %d is called %s", (int)want[i].opt, name);
        ok(kevo_promptpool_option_from_name(name, &back) == KEVO_OK &&
               back == want[i].opt,
           "prompt pool %s: from its name", name);
        ok(kevo_promptpool_option_bounds(want[i].opt, &lo, &hi, &def) ==
                   KEVO_OK &&
               lo == want[i].lo && hi == want[i].hi && def == want[i].def,
           "prompt pool %s: default %g, bounds %g..%g", name, want[i].def,
           want[i].lo, want[i].hi);
        ok(lo <= def && def <= hi && !(want[i].lo_open && def == lo),
           "prompt pool %s: the default is inside the bounds", name);
        is_double(kevo_promptpool_get(pool, want[i].opt), want[i].def, 0,
                  "prompt pool %s: starts at the default", name);
        if (want[i].lo_open)
            snprintf(text, sizeof text,
                     "option %s: %.15g is not above %.15g (%s)", name, lo, lo,
                     range);
        else
            snprintf(text, sizeof text,
                     "option %s: %.15g is below the lowest allowed value "
                     "%.15g (%s)",
                     name, lo - 1, lo, range);
        is_int(kevo_promptpool_set(pool, want[i].opt,
                                   want[i].lo_open ? lo : lo - 1, &e),
               KEVO_ERANGE, "prompt pool %s: below the bounds refused", name);
        is_str(e.text, text, "prompt pool %s: ... with the common text", name);
        kevo_error_init(&e);
        snprintf(text, sizeof text,
                 "option %s: %.15g is above the highest allowed value %.15g "
                 "(%s)",
                 name, hi + 1, hi, range);
        is_int(kevo_promptpool_set(pool, want[i].opt, hi + 1, &e), KEVO_ERANGE,
               "prompt pool %s: above the bounds refused", name);
        is_str(e.text, text, "prompt pool %s: ... with the common text", name);
        kevo_error_init(&e);
        kevo_status rc = kevo_promptpool_set(pool, want[i].opt, def + 0.5, &e);
        if (want[i].whole) {
            snprintf(text, sizeof text,
                     "option %s: %.15g is not a whole number (%s)", name,
                     def + 0.5, range);
            is_int(rc, KEVO_ERANGE, "prompt pool %s: whole numbers only", name);
            is_str(e.text, text, "prompt pool %s: ... with the common text",
                   name);
        } else {
            is_int(rc, KEVO_OK, "prompt pool %s: takes a real number", name);
        }
        is_int(kevo_promptpool_set(pool, want[i].opt, NAN, NULL), KEVO_ERANGE,
               "prompt pool %s: NaN refused", name);
        ok(kevo_promptpool_set(pool, want[i].opt, hi, NULL) == KEVO_OK &&
               kevo_promptpool_set(pool, want[i].opt, def, NULL) == KEVO_OK &&
               kevo_promptpool_get(pool, want[i].opt) == def,
           "prompt pool %s: the highest and the default are taken", name);
    }
    int n = (int)KEVO_ARRAY_SIZE(want);
    ok(kevo_promptpool_option_name((kevo_promptpool_option)(n - 1)) &&
           !kevo_promptpool_option_name((kevo_promptpool_option)n),
       "prompt pool: %d options, no more", n);
    kevo_promptpool_option o;
    is_int(kevo_promptpool_option_from_name("temperature", &o), KEVO_ENOENT,
           "prompt pool: an unknown name");
    is_int(kevo_promptpool_option_bounds((kevo_promptpool_option)n, NULL, NULL,
                                         NULL),
           KEVO_EINVAL, "prompt pool: an unknown option has no bounds");
    kevo_promptpool_free(pool);
}

/* ---- the mechanism itself -------------------------------------------------
 */

static void test_lookup_and_json(void)
{
    const kevo__option_table *t = &kevo__eval_options;
    kevo_error e = KEVO__ERROR_INIT;
    int opt = -1;
    is_int(kevo__option_find(t, "warm_up", &opt, &e), KEVO_ENOENT,
           "an unknown name");
    like_str(e.text,
             "no evaluator option \"warm_up\" (known: compile_workers, "
             "device, compile_timeout_ms,",
             "... the message lists the known names");

    /* The worker reads the timing options with the same table. */
    json_t *msg = json_pack("{s:i, s:b, s:s}", "warmup", 7, "flush_l2", 0,
                            "min_reps", "many");
    int64_t v = -1;
    ok(kevo__option_read(t, KEVO_EVAL_WARMUP, msg, &v, NULL) == KEVO_OK &&
           v == 7,
       "read: an integer option");
    ok(kevo__option_read(t, KEVO_EVAL_FLUSH_L2, msg, &v, NULL) == KEVO_OK &&
           v == 0,
       "read: a boolean option from false");
    ok(kevo__option_read(t, KEVO_EVAL_MAX_REPS, msg, &v, NULL) == KEVO_OK &&
           v == 300,
       "read: a missing option takes its default");
    ok(kevo__option_read(t, KEVO_EVAL_PROFILE, NULL, &v, NULL) == KEVO_OK &&
           v == 0,
       "read: no object at all, the default");
    kevo_error_init(&e);
    is_int(kevo__option_read(t, KEVO_EVAL_MIN_REPS, msg, &v, &e), KEVO_EINVALID,
           "read: a string for an integer refused");
    is_str(e.text, "option min_reps: expected an integer, found a string",
           "... and named");
    json_object_set_new(msg, "profile", json_integer(1));
    json_object_set_new(msg, "time_cap_ms", json_integer(600001));
    kevo_error_init(&e);
    is_int(kevo__option_read(t, KEVO_EVAL_PROFILE, msg, &v, &e), KEVO_EINVALID,
           "read: an integer for a boolean refused");
    is_str(e.text, "option profile: expected true or false, found an integer",
           "... and named");
    kevo_error_init(&e);
    is_int(kevo__option_read(t, KEVO_EVAL_TIME_CAP_MS, msg, &v, &e),
           KEVO_ERANGE, "read: out of bounds refused");
    is_str(e.text,
           "option time_cap_ms: 600001 is above the highest allowed value "
           "600000 (allowed 1..600000)",
           "... with the common text");
    json_decref(msg);

    json_t *b = kevo__option_json(t, KEVO_EVAL_FLUSH_L2, 1);
    json_t *i = kevo__option_json(t, KEVO_EVAL_WARMUP, 3);
    ok(json_is_true(b) && json_integer_value(i) == 3,
       "a boolean option's value is written as true, an integer as one");
    json_decref(b);
    json_decref(i);
    ok(!kevo__option_json(t, KEVO__EVAL_OPTION_COUNT, 0),
       "no JSON for an unknown option");
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);

    test_evaluator();
    test_devices();
    test_search();
    test_promptpool();
    test_lookup_and_json();
    return done_testing();
}
