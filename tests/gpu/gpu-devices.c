/*
 * gpu-devices: one evaluator on several GPUs (the devices option).
 *
 *   1. devices "0": the seed, then 20 saxpy candidates (the seed of
 *      examples/tasks with its parameters varied) each come back once,
 *      with their own candidate, verdict ok, labelled "device 0 (NAME)",
 *      with finite speedups over the seed timed on that device: every
 *      result of a device carries the same seed time at each shape, and
 *      its speedup is the geometric mean of seed time / time.
 *   2. devices that do not exist are named, first in the list or later.
 *   3. devices "all", where the driver has two or more: the same checks,
 *      and both devices measure some of the candidates, against seed
 *      times of their own; then the worker of the second device is killed
 *      (SIGKILL) in the middle of a batch: the job on it ends worker_died
 *      with the reason, every other job ends ok, the worker is restarted
 *      on its own device, and the jobs after it run on both devices.
 *
 * Skipped (exit 77) where the evaluator finds no GPU; part 3 is left out
 * (with a note) where the driver has one device.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "core/kevo_private.h"
#include "eval/evaluator_private.h"

#define NCANDS 20

static kevo_task *task;

/* n copies of the seed, with parameters varied and ids from first on. */
static kevo_candidate **candidates(size_t n, uint64_t first)
{
    static const int64_t blocks[] = {64, 128, 256, 512, 1024};
    static const int64_t vecs[] = {1, 2, 4};
    static const int64_t items[] = {1, 2, 4, 8};
    kevo_candidate **c = calloc(n, sizeof *c);
    kevo_error err = KEVO__ERROR_INIT;
    if (!c)
        bail_out("out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t k = i + (size_t)first;
        if (!(c[i] = kevo_candidate_copy(kevo_task_seed(task))) ||
            kevo_candidate_set_param(c[i], "BLOCK", blocks[k % 5], &err) !=
                KEVO_OK ||
            kevo_candidate_set_param(c[i], "VEC", vecs[(k / 5) % 3], &err) !=
                KEVO_OK ||
            kevo_candidate_set_param(c[i], "ITEMS", items[(k / 15) % 4],
                                     &err) != KEVO_OK ||
            kevo_candidate_set_id(c[i], first + i) != KEVO_OK)
            bail_out("candidate %zu: %s", i, err.text);
    }
    return c;
}

static void candidates_free(kevo_candidate **c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kevo_candidate_free(c[i]);
    free(c);
}

/* The index of label among the evaluator's slots; -1 when none. */
static int slot_of(const kevo_evaluator *ev, const char *label)
{
    for (size_t s = 0; label && s < ev->nslots; s++) {
        if (strcmp(ev->slots[s].label, label) == 0)
            return (int)s;
    }
    return -1;
}

/* True when slot's worker has a reply waiting to be read. */
static bool reply_waiting(const evslot *slot)
{
    struct pollfd p = {.fd = kevo__gpu_client_fd(slot->gpu), .events = POLLIN};
    return p.fd >= 0 && poll(&p, 1, 0) > 0;
}

typedef struct batch {
    kevo_eval_result *res[NCANDS];
    size_t per_slot[KEVO__EV_DEVICES_MAX];
    uint64_t killed; /* the ticket of the job killed, 0 for none */
} batch;

/* Submits the candidates and collects every result. With victim >= 0, the
 * worker of slot victim is killed once a quarter of the results are in,
 * while it runs a job. */
static void run_batch(kevo_evaluator *ev, kevo_candidate **c, batch *b,
                      int victim, const char *what)
{
    uint64_t tickets[NCANDS];
    kevo_error err = KEVO__ERROR_INIT;
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < NCANDS; i++) {
        if (kevo_evaluator_submit(ev, task, c[i], 0, &tickets[i], &err) !=
            KEVO_OK)
            bail_out("%s: submit: %s", what, err.text);
    }
    size_t got = 0, twice = 0, stray = 0;
    for (;;) {
        kevo_eval_result *r = NULL;
        kevo_error_init(&err);
        kevo_status rc = kevo_evaluator_wait(ev, 100, &r, &err);
        if (rc == KEVO_DONE)
            break;
        if (rc != KEVO_OK && rc != KEVO_ETIMEDOUT)
            bail_out("%s: wait: %s", what, err.text);
        if (r) {
            size_t i = 0;
            while (i < NCANDS && tickets[i] != kevo_eval_result_ticket(r))
                i++;
            if (i == NCANDS) {
                stray++;
                kevo_eval_result_free(r);
            } else if (b->res[i]) {
                twice++;
                kevo_eval_result_free(r);
            } else {
                b->res[i] = r;
                got++;
            }
        }
        evslot *slot = victim >= 0 ? &ev->slots[victim] : NULL;
        if (slot && !b->killed && got >= NCANDS / 4 && slot->running &&
            kevo__gpu_client_busy(slot->gpu) && !reply_waiting(slot)) {
            b->killed = slot->running->ticket;
            long pid = kevo__gpu_client_pid(slot->gpu);
            diag("%s: killing the worker of %s (pid %ld) in ticket %" PRIu64,
                 what, slot->label, pid, b->killed);
            kill((pid_t)pid, SIGKILL);
        }
    }
    is_uint(got, NCANDS, "%s: every ticket came back", what);
    is_uint(twice + stray, 0, "%s: none twice, none unknown", what);
    if (victim >= 0)
        ok(b->killed != 0, "%s: a job was killed on %s", what,
           ev->slots[victim].label);
    size_t own = 0;
    for (size_t i = 0; i < NCANDS; i++) {
        const kevo_candidate *rc = kevo_eval_result_candidate(b->res[i]);
        own += rc && kevo_candidate_id(rc) == kevo_candidate_id(c[i]) &&
               kevo_candidate_hash(rc) == kevo_candidate_hash(c[i]);
        int s = slot_of(ev, kevo_eval_result_device(b->res[i]));
        if (s >= 0)
            b->per_slot[s]++;
        else
            diag("%s: candidate %zu measured by '%s'", what, i,
                 kevo_eval_result_device(b->res[i])
                     ? kevo_eval_result_device(b->res[i])
                     : "(none)");
    }
    is_uint(own, NCANDS, "%s: each result has its own candidate", what);
    size_t labelled = 0;
    for (size_t s = 0; s < ev->nslots; s++)
        labelled += b->per_slot[s];
    is_uint(labelled, NCANDS, "%s: each result names a device of the evaluator",
            what);
}

/* The verdicts: ok, but for the killed job, which died with a reason. */
static void check_verdicts(const batch *b, const char *what)
{
    size_t okays = 0;
    for (size_t i = 0; i < NCANDS; i++) {
        kevo_eval_result *r = b->res[i];
        if (b->killed && kevo_eval_result_ticket(r) == b->killed) {
            const char *why = kevo_eval_result_reason(r);
            is_int(kevo_eval_result_verdict(r), KEVO_VERDICT_WORKER_DIED,
                   "%s: the killed job: worker_died", what);
            like_str(why ? why : "", "signal 9",
                     "%s: the reason says how the worker ended", what);
        } else if (kevo_eval_result_verdict(r) == KEVO_VERDICT_OK) {
            okays++;
        } else {
            diag("%s: candidate %zu: %s: %s", what, i,
                 kevo_verdict_name(kevo_eval_result_verdict(r)),
                 kevo_eval_result_reason(r) ? kevo_eval_result_reason(r) : "");
        }
    }
    is_uint(okays, NCANDS - (b->killed ? 1 : 0), "%s: every other job is ok",
            what);
}

/* Speedups: finite, over the seed of the device that measured them (one
 * seed time per shape and device, and speedup = geomean(seed / time));
 * seed times of different devices are measurements of their own. */
static void check_speedups(const kevo_evaluator *ev, const batch *b,
                           const char *what)
{
    size_t nshapes = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
    double seed[KEVO__EV_DEVICES_MAX][8];
    size_t finite = 0, okays = 0, same = 0, checked = 0, matches = 0;
    for (size_t s = 0; s < KEVO__EV_DEVICES_MAX; s++)
        for (size_t k = 0; k < 8; k++)
            seed[s][k] = NAN;
    for (size_t i = 0; i < NCANDS; i++) {
        kevo_eval_result *r = b->res[i];
        int s = slot_of(ev, kevo_eval_result_device(r));
        if (kevo_eval_result_verdict(r) != KEVO_VERDICT_OK || s < 0)
            continue;
        okays++;
        double sp = kevo_eval_result_speedup(r, KEVO_BASELINE_SEED);
        finite += isfinite(sp) && sp > 0;
        double logsum = 0;
        bool all = true;
        for (size_t k = 0; k < kevo_eval_result_shape_count(r) && k < 8; k++) {
            kevo_shape_result sr = {.size = sizeof sr};
            kevo_eval_result_shape(r, k, &sr);
            all = all && sr.seed_time > 0 && sr.time > 0;
            logsum += log(sr.seed_time / sr.time);
            checked++;
            if (isnan(seed[s][sr.index]))
                seed[s][sr.index] = sr.seed_time;
            same += seed[s][sr.index] == sr.seed_time;
        }
        if (all && fabs(exp(logsum / (double)nshapes) / sp - 1) < 1e-9)
            matches++;
    }
    is_uint(finite, okays, "%s: every speedup over the seed is finite", what);
    is_uint(matches, okays,
            "%s: each is the geometric mean of its seed times over its times",
            what);
    is_uint(same, checked,
            "%s: the results of a device share its seed time at each shape",
            what);
    if (ev->nslots < 2 || b->per_slot[0] == 0 || b->per_slot[1] == 0)
        return;
    bool differ = false;
    for (size_t k = 0; k < nshapes; k++)
        differ = differ || seed[0][k] != seed[1][k];
    ok(differ, "%s: the devices' seed times are measurements of their own",
       what);
}

/* An evaluator, not started, whose devices option is devices. */
static kevo_evaluator *with_devices(const char *devices)
{
    kevo_evaluator *ev = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK ||
        kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, devices, &err) !=
            KEVO_OK)
        bail_out("devices %s: %s", devices, err.text);
    return ev;
}

/* A device that does not exist is named, with those there are. */
static void check_missing(const char *devices, int missing, size_t count)
{
    kevo_evaluator *ev = with_devices(devices);
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo_evaluator_start(ev, 0, &err), KEVO_ENODEV,
           "devices %s: no such device", devices);
    char want[128];
    if (count == 1)
        snprintf(want, sizeof want,
                 "option devices: device %d does not exist (the driver has 1: "
                 "0)",
                 missing);
    else
        snprintf(want, sizeof want,
                 "option devices: device %d does not exist (the driver has "
                 "%zu: 0..%zu)",
                 missing, count, count - 1);
    is_str(err.text, want, "devices %s: the message names it", devices);
    is_uint(kevo_evaluator_device_count(ev), 0, "devices %s: nothing counted",
            devices);
    kevo_evaluator_free(ev);
}

/* A batch on several devices (ids from first on): the checks of every
 * batch, and both of the first two devices measure some. */
static void both_devices(kevo_evaluator *ev, uint64_t first, const char *what)
{
    batch b;
    kevo_candidate **c = candidates(NCANDS, first);
    run_batch(ev, c, &b, -1, what);
    ok(b.per_slot[0] > 0 && b.per_slot[1] > 0,
       "%s: both devices measured some (%zu, %zu)", what, b.per_slot[0],
       b.per_slot[1]);
    check_verdicts(&b, what);
    check_speedups(ev, &b, what);
    for (size_t i = 0; i < NCANDS; i++)
        kevo_eval_result_free(b.res[i]);
    candidates_free(c, NCANDS);
}

static kevo_evaluator *start(const char *devices)
{
    kevo_evaluator *ev = with_devices(devices);
    kevo_error err = KEVO__ERROR_INIT;
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc == KEVO_ENODEV) {
        kevo_evaluator_free(ev);
        kevo_task_free(task);
        skip_all("no GPU: %s", err.text);
    }
    if (rc != KEVO_OK)
        bail_out("devices %s: the evaluator does not start: %s", devices,
                 err.text);
    return ev;
}

int main(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    if (!path || kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("saxpy.json: %s", err.text);
    free(path);

    /* 1. One device, named. */
    kevo_evaluator *ev = start("0");
    is_uint(kevo_evaluator_device_count(ev), 1, "devices 0: one device");
    char *label =
        kevo__asprintf("device 0 (%s)", kevo_evaluator_device_name(ev));
    if (!label)
        bail_out("out of memory");
    /* With one device the seed's evaluation is not waited for: evaluate it
     * first, so that every candidate has its baseline. (With several,
     * each device evaluates it first.) */
    kevo_eval_result *seed = NULL;
    if (kevo_evaluator_evaluate(ev, task, kevo_task_seed(task), 0, &seed,
                                &err) != KEVO_OK)
        bail_out("the seed: %s", err.text);
    is_str(kevo_eval_result_device(seed), label, "the seed: measured on %s",
           label);
    kevo_eval_result_free(seed);
    kevo_candidate **c = candidates(NCANDS, 1000);
    batch b;
    run_batch(ev, c, &b, -1, "devices 0");
    is_uint(b.per_slot[0], NCANDS, "devices 0: all labelled %s", label);
    check_verdicts(&b, "devices 0");
    check_speedups(ev, &b, "devices 0");
    for (size_t i = 0; i < NCANDS; i++)
        kevo_eval_result_free(b.res[i]);
    candidates_free(c, NCANDS);
    free(label);
    kevo_evaluator_free(ev);

    /* 2. Every device; those that do not exist. */
    ev = start("all");
    size_t count = kevo_evaluator_device_count(ev);
    diag("the driver has %zu devices", count);
    ok(count >= 1, "devices all: %zu devices", count);
    check_missing("1000", 1000, count);
    check_missing("0,1000", 1000, count);
    if (count < 2) {
        diag("one device: the several-device checks are left out");
        kevo_evaluator_free(ev);
        kevo_task_free(task);
        return done_testing();
    }

    /* 3. Several devices; a worker killed in the middle of a batch. */
    both_devices(ev, 2000, "devices all");

    long pid = kevo__gpu_client_pid(ev->slots[1].gpu);
    c = candidates(NCANDS, 3000);
    run_batch(ev, c, &b, 1, "killed");
    check_verdicts(&b, "killed");
    for (size_t i = 0; i < NCANDS; i++) {
        if (kevo_eval_result_ticket(b.res[i]) == b.killed)
            is_str(kevo_eval_result_device(b.res[i]), ev->slots[1].label,
                   "killed: the dead job names the device it ran on");
        kevo_eval_result_free(b.res[i]);
    }
    candidates_free(c, NCANDS);
    is_uint(kevo__gpu_client_restarts(ev->slots[1].gpu), 1,
            "killed: its worker was restarted once");
    ok(kevo__gpu_client_pid(ev->slots[1].gpu) != pid &&
           kevo__gpu_client_pid(ev->slots[1].gpu) > 0,
       "killed: by a new process");
    is_uint(kevo__gpu_client_restarts(ev->slots[0].gpu), 0,
            "killed: the other worker went on");

    both_devices(ev, 4000, "after");

    kevo_evaluator_free(ev);
    kevo_task_free(task);
    return done_testing();
}
