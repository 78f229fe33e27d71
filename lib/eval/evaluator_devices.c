/*
 * evaluator_devices.c: the GPUs an evaluator evaluates on. The devices
 * option says which ("all", or device numbers such as "0,2,3"; unset, the
 * one of the device option); each device gets a slot: its GPU worker
 * (kevo-worker gpu --device N), the properties the worker's hello reports,
 * the label its results carry, and its ceilings, which are cached per
 * physical device (ceilings.h names the cache file by the device's UUID
 * and driver, so that two devices never share an entry). Every device
 * compiles to one arch, since one compile pool serves them all.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evaluator_private.h"
#include "model/devprops.h"

/* ---- the option --------------------------------------------------------- */

static kevo_status not_a_list(const char *text, kevo_error *err)
{
    return kevo__error_set(err, KEVO_EINVALID,
                           "option devices: '%s' is not \"all\" or a list of "
                           "device numbers such as 0,2,3",
                           text);
}

kevo_status kevo__ev_devices_parse(const char *text, bool *all, int *list,
                                   size_t *n, kevo_error *err)
{
    *all = false;
    *n = 0;
    if (!text || !text[0])
        return KEVO_OK;
    if (strcmp(text, "all") == 0) {
        *all = true;
        return KEVO_OK;
    }
    int64_t hi = 0;
    kevo__option_bounds(&kevo__eval_options, KEVO_EVAL_DEVICE, NULL, &hi, NULL);
    bool *seen = calloc((size_t)hi + 1, sizeof *seen);
    if (!seen)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = KEVO_OK;
    size_t count = 0;
    for (const char *p = text; rc == KEVO_OK;) {
        while (*p == ' ')
            p++;
        if (*p < '0' || *p > '9') {
            rc = not_a_list(text, err);
            break;
        }
        int64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            v = v > hi ? v : v * 10 + (*p - '0'); /* past hi: too large */
        while (*p == ' ')
            p++;
        if (*p != ',' && *p != '\0') {
            rc = not_a_list(text, err);
            break;
        }
        if (v > hi)
            rc = kevo__error_set(err, KEVO_ERANGE,
                                 "option devices: '%s': a device number is "
                                 "at most %" PRId64,
                                 text, hi);
        else if (seen[v])
            rc = kevo__error_set(
                err, KEVO_EINVALID,
                "option devices: '%s' names device %" PRId64 " twice", text, v);
        else if (count == KEVO__EV_DEVICES_MAX)
            rc = kevo__error_set(err, KEVO_ELIMIT,
                                 "option devices: '%s' names more than %d "
                                 "devices, the most an evaluator drives",
                                 text, KEVO__EV_DEVICES_MAX);
        if (rc != KEVO_OK)
            break;
        seen[v] = true;
        if (list)
            list[count] = (int)v;
        count++;
        if (*p++ == '\0')
            break;
    }
    free(seen);
    if (rc == KEVO_OK)
        *n = count;
    return rc;
}

/* ---- slots -------------------------------------------------------------- */

/* The device properties of slot's hello, under the names expressions use,
 * its name and its label. */
static kevo_status read_device(evslot *slot, kevo_error *err)
{
    const json_t *dev = kevo__gpu_client_device(slot->gpu);
    if (!(slot->device = kevo_vars_new()))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; kevo__devprop_name(i); i++) {
        const char *name = kevo__devprop_name(i);
        json_t *v = json_object_get(dev, name);
        if (!json_is_integer(v))
            return kevo__error_set(err, KEVO_EWORKER,
                                   "the GPU worker's hello lacks the device "
                                   "property \"%s\"",
                                   name);
        kevo_status rc =
            kevo_vars_set(slot->device, name, json_integer_value(v));
        if (rc != KEVO_OK)
            return kevo__error_set(err, rc, "device property %s", name);
    }
    const char *name = json_string_value(json_object_get(dev, "name"));
    if (!(slot->name = kevo__strdup(name ? name : "unknown GPU")) ||
        !(slot->label =
              kevo__asprintf("device %d (%s)", slot->ordinal, slot->name)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

static int64_t slot_cc(const evslot *slot)
{
    int64_t cc = 0;
    kevo_vars_get(slot->device, "cc", &cc);
    return cc;
}

/* "(the driver has 2: 0..1)" for count devices. */
static void driver_has(int count, char *buf, size_t size)
{
    if (count <= 0)
        snprintf(buf, size, "(the driver has none)");
    else if (count == 1)
        snprintf(buf, size, "(the driver has 1: 0)");
    else
        snprintf(buf, size, "(the driver has %d: 0..%d)", count, count - 1);
}

/* Starts the worker of ev->slots[ev->nslots] on device ordinal and reads
 * its device and ceilings; *count gets the number of devices the driver
 * has (-1 when the worker did not say). named: the device was named by
 * the devices option, so that a device that does not exist is named so. */
static kevo_status slot_start(kevo_evaluator *ev, const char *worker,
                              int ordinal, bool named, int *count,
                              kevo_error *err)
{
    evslot *slot = &ev->slots[ev->nslots];
    kevo_error inner = KEVO__ERROR_INIT;
    slot->ordinal = ordinal;
    slot->gpu = kevo__gpu_client_open(worker, ordinal, 60000, count,
                                      named ? &inner : err);
    if (!slot->gpu) {
        char has[64];
        if (!named)
            return err ? err->code : KEVO_ENODEV;
        if (inner.code != KEVO_ENODEV || *count < 0 || ordinal < *count)
            return kevo__error_wrap(err, &inner, "%s", "");
        driver_has(*count, has, sizeof has);
        return kevo__error_set(err, KEVO_ENODEV,
                               "option devices: device %d does not exist %s",
                               ordinal, has);
    }
    ev->nslots++;
    kevo_status rc = read_device(slot, err);
    if (rc == KEVO_OK)
        rc = kevo__ceilings_load(&slot->ceilings, ev->str[KEVO_EVAL_CACHE_DIR],
                                 kevo__gpu_client_device(slot->gpu),
                                 kevo__gpu_client_driver(slot->gpu), err);
    if (rc != KEVO_OK || ev->nslots == 1)
        return rc;
    const evslot *first = &ev->slots[0];
    int64_t a = slot_cc(first), b = slot_cc(slot);
    if (a != b)
        return kevo__error_set(
            err, KEVO_EINVALID,
            "option devices: %s has compute capability %" PRId64 ".%" PRId64
            " and %s %" PRId64 ".%" PRId64
            ": the devices of one evaluator must compile to one arch",
            first->label, a / 10, a % 10, slot->label, b / 10, b % 10);
    return KEVO_OK;
}

kevo_status kevo__ev_slots_start(kevo_evaluator *ev, const char *worker,
                                 kevo_error *err)
{
    int list[KEVO__EV_DEVICES_MAX];
    size_t n = 0;
    bool all = false;
    kevo_status rc =
        kevo__ev_devices_parse(ev->str[KEVO_EVAL_DEVICES], &all, list, &n, err);
    if (rc != KEVO_OK)
        return rc;
    bool named = all || n > 0;
    if (!named) {
        list[0] = (int)ev->opt[KEVO_EVAL_DEVICE];
        n = 1;
    } else if (all) {
        list[0] = 0;
        n = 1;
    }
    if (!(ev->slots = calloc(KEVO__EV_DEVICES_MAX, sizeof *ev->slots)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    int count = -1;
    if ((rc = slot_start(ev, worker, list[0], named, &count, err)) != KEVO_OK)
        return rc;
    if (all) {
        /* Every device the first worker's driver reports. */
        n = count > KEVO__EV_DEVICES_MAX ? KEVO__EV_DEVICES_MAX
            : count > 1                  ? (size_t)count
                                         : 1;
        for (size_t i = 1; i < n; i++)
            list[i] = (int)i;
    }
    for (size_t i = 1; i < n && count >= 0; i++) {
        char has[64];
        driver_has(count, has, sizeof has);
        if (list[i] >= count)
            return kevo__error_set(err, KEVO_ENODEV,
                                   "option devices: device %d does not exist "
                                   "%s",
                                   list[i], has);
    }
    for (size_t i = 1; i < n && rc == KEVO_OK; i++) {
        int ignored = -1;
        rc = slot_start(ev, worker, list[i], true, &ignored, err);
    }
    if (rc != KEVO_OK)
        return rc;
    /* The arch-specific target (sm_90a) unlocks wgmma and setmaxnreg on
     * the device at hand; the code only ever runs there. Operators are
     * told the same target (kevo__devprops_json). */
    kevo__devprops_arch(slot_cc(&ev->slots[0]), ev->arch, sizeof ev->arch);
    if (!(ev->device = kevo_vars_copy(ev->slots[0].device)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if ((rc = kevo__ev_ensure_ceiling(ev, "bandwidth", true, err)) != KEVO_OK ||
        (rc = kevo__ev_ensure_ceiling(ev, "fp32", true, err)) != KEVO_OK ||
        (rc = kevo__ev_ensure_ceiling(ev, "fp64", true, err)) != KEVO_OK ||
        (rc = kevo__ev_ensure_ceiling(ev, "launch", true, err)) != KEVO_OK)
        return rc;
    return KEVO_OK;
}

void kevo__ev_slots_free(kevo_evaluator *ev)
{
    for (size_t i = 0; i < ev->nslots; i++) {
        evslot *slot = &ev->slots[i];
        kevo__gpu_client_free(slot->gpu);
        kevo_vars_free(slot->device);
        free(slot->name);
        free(slot->label);
        kevo__ceilings_clear(&slot->ceilings);
    }
    free(ev->slots);
    ev->slots = NULL;
    ev->nslots = 0;
}

size_t kevo_evaluator_device_count(const kevo_evaluator *ev)
{
    return ev && ev->started && !ev->compile_only ? ev->nslots : 0;
}

/* ---- ceilings ----------------------------------------------------------- */

/* Takes slot's reply to a peaks request for which. */
static kevo_status take_peaks(const kevo_evaluator *ev, evslot *slot,
                              const char *which, const json_t *reply,
                              kevo_error *err)
{
    if (!json_is_true(json_object_get(reply, "ok"))) {
        const char *why = json_string_value(json_object_get(reply, "error"));
        if (ev->nslots > 1)
            return kevo__error_set(err, KEVO_EWORKER,
                                   "%s: measuring the %s ceiling: %s",
                                   slot->label, which, why ? why : "failed");
        return kevo__error_set(err, KEVO_EWORKER,
                               "measuring the %s ceiling: %s", which,
                               why ? why : "failed");
    }
    kevo_status rc = kevo__ceilings_merge(&slot->ceilings,
                                          json_object_get(reply, "peaks"), err);
    if (rc == KEVO_OK)
        rc = kevo__ceilings_save(&slot->ceilings, err);
    return rc;
}

kevo_status kevo__ev_ensure_ceiling(kevo_evaluator *ev, const char *which,
                                    bool all, kevo_error *err)
{
    size_t upto = all ? ev->nslots : (ev->nslots > 0 ? 1 : 0);
    bool need[KEVO__EV_DEVICES_MAX] = {false}, sent[KEVO__EV_DEVICES_MAX];
    bool any = false;
    for (size_t s = 0; s < upto; s++) {
        need[s] = !kevo__ceilings_has(&ev->slots[s].ceilings, which);
        any = any || need[s];
    }
    if (!any)
        return KEVO_OK;
    /* Let the jobs on the slots to measure finish first: a worker does one
     * thing at a time. The other slots go on with theirs. */
    for (size_t s = 0; s < upto; s++) {
        while (need[s] && kevo__gpu_client_busy(ev->slots[s].gpu)) {
            kevo_status rc = kevo__ev_gpu_step(ev, s, 1000, err);
            if (rc != KEVO_OK)
                return rc;
        }
    }
    json_t *msg = json_pack("{s:s, s:I, s:[s]}", "op", "peaks", "id",
                            (json_int_t)0x7fffffff, "which", which);
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    /* Every slot measures at once; each reply is read, even after an
     * error, so that none is left for a job to take. */
    kevo_status rc = KEVO_OK;
    int64_t deadline = kevo__now_ms() + 120000;
    for (size_t s = 0; s < upto; s++) {
        sent[s] = false;
        if (need[s] && rc == KEVO_OK) {
            rc = kevo__gpu_client_send(ev->slots[s].gpu, msg, NULL, 0, deadline,
                                       err);
            sent[s] = rc == KEVO_OK;
        }
    }
    json_decref(msg);
    for (size_t s = 0; s < upto; s++) {
        json_t *reply = NULL;
        kevo_status prc = KEVO_OK;
        while (sent[s] && prc == KEVO_OK && !reply)
            prc = kevo__gpu_client_poll(ev->slots[s].gpu, -1, &reply, err);
        if (reply && prc == KEVO_OK && rc == KEVO_OK)
            prc = take_peaks(ev, &ev->slots[s], which, reply, err);
        json_decref(reply);
        if (rc == KEVO_OK)
            rc = prc;
    }
    return rc;
}

double kevo_evaluator_peak(kevo_evaluator *ev, kevo_peak peak)
{
    if (!ev->started || ev->compile_only)
        return 0;
    const char *which = kevo_peak_name(peak);
    if (!which || kevo__ev_ensure_ceiling(ev, which, false, NULL) != KEVO_OK)
        return 0;
    return kevo__ceilings_peak(&ev->slots[0].ceilings, peak);
}

double kevo_evaluator_ceiling(kevo_evaluator *ev, const char *name)
{
    if (!ev || !ev->started || ev->compile_only ||
        !kevo__ceilings_known(name) ||
        kevo__ev_ensure_ceiling(ev, name, false, NULL) != KEVO_OK)
        return 0;
    return kevo__ceilings_get(&ev->slots[0].ceilings, name);
}
