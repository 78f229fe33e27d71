/*
 * ceilings.c: measured device ceilings and their cache file.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ceilings.h"
#include "compile_cache.h"

/* 4: the bandwidth is the best of read, write, copy and triad streams
 * timed as candidates are; a tensor-core peak the best of mma.sync and
 * wgmma; each probe's figure kept; every figure the best of several
 * probe runs (3 took one run, which could come out low and stay). A file
 * of another format is measured again. */
#define FORMAT "kevo-ceilings-4"

static const char *const detail_names[KEVO__NDETAILS] = {
    "bandwidth_read", "bandwidth_write", "bandwidth_copy", "bandwidth_triad",
    "tf32_mma_sync",  "tf32_wgmma",      "fp16_mma_sync",  "fp16_wgmma",
    "bf16_mma_sync",  "bf16_wgmma",      "fp8_mma_sync",   "fp8_wgmma",
};

const char *kevo__ceilings_detail_name(int i)
{
    return i >= 0 && i < KEVO__NDETAILS ? detail_names[i] : NULL;
}

void kevo__ceilings_clear(kevo__ceilings *c)
{
    free(c->path);
    free(c->device);
    free(c->uuid);
    memset(c, 0, sizeof *c);
}

#define BANDWIDTH (-1)
#define NONE (-2)
#define LAUNCH (-3)
#define DETAIL 100 /* DETAIL + i: probe figure i */

/* The index of kind which in the peaks, DETAIL + i for probe figure i,
 * BANDWIDTH, LAUNCH, or NONE. */
static int which_index(const char *which)
{
    if (!which)
        return NONE;
    if (strcmp(which, "bandwidth") == 0)
        return BANDWIDTH;
    if (strcmp(which, "launch") == 0)
        return LAUNCH;
    for (int p = 0; p < KEVO__NPEAKS; p++) {
        const char *name = kevo_peak_name((kevo_peak)p);
        if (name && strcmp(name, which) == 0)
            return p;
    }
    for (int i = 0; i < KEVO__NDETAILS; i++) {
        if (strcmp(detail_names[i], which) == 0)
            return DETAIL + i;
    }
    return NONE;
}

bool kevo__ceilings_known(const char *which)
{
    return which_index(which) != NONE;
}

/* The value and the known flag of ceiling i; NULL for NONE. */
static double *slot(kevo__ceilings *c, int i, bool **has)
{
    if (i == BANDWIDTH) {
        *has = &c->has_bandwidth;
        return &c->bandwidth;
    }
    if (i == LAUNCH) {
        *has = &c->has_launch;
        return &c->launch;
    }
    if (i >= DETAIL) {
        *has = &c->has_detail[i - DETAIL];
        return &c->detail[i - DETAIL];
    }
    if (i >= 0) {
        *has = &c->has_peak[i];
        return &c->peak[i];
    }
    return NULL;
}

bool kevo__ceilings_has(const kevo__ceilings *c, const char *which)
{
    bool *has = NULL;
    return slot((kevo__ceilings *)c, which_index(which), &has) && *has;
}

double kevo__ceilings_get(const kevo__ceilings *c, const char *which)
{
    bool *has = NULL;
    double *v = slot((kevo__ceilings *)c, which_index(which), &has);
    return v && *has ? *v : 0;
}

double kevo__ceilings_peak(const kevo__ceilings *c, kevo_peak p)
{
    return (unsigned)p < KEVO__NPEAKS && c->has_peak[p] ? c->peak[p] : 0;
}

/* Takes peaks into c: every figure, or with best only those that beat
 * what c knows (a higher throughput, a lower launch latency). */
static kevo_status take(kevo__ceilings *c, const json_t *peaks, bool best,
                        kevo_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)peaks, key, v) {
        bool *has = NULL;
        int i = which_index(key);
        double *slot_of = slot(c, i, &has);
        double x = json_number_value(v);
        if (!slot_of)
            continue; /* a ceiling this release does not use */
        if (!json_is_number(v) || !(x > 0))
            return kevo__error_set(err, KEVO_EFORMAT,
                                   "ceiling \"%s\" is not a positive number",
                                   key);
        if (best && *has && (i == LAUNCH ? x >= *slot_of : x <= *slot_of))
            continue;
        *slot_of = x;
        *has = true;
    }
    return KEVO_OK;
}

kevo_status kevo__ceilings_update(kevo__ceilings *c, const json_t *peaks,
                                  kevo_error *err)
{
    return take(c, peaks, false, err);
}

kevo_status kevo__ceilings_merge(kevo__ceilings *c, const json_t *peaks,
                                 kevo_error *err)
{
    return take(c, peaks, true, err);
}

/* A file name part made of the uuid's safe characters. */
static char *safe_name(const char *s)
{
    char *out = kevo__strdup(s);
    for (char *p = out; p && *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
            *p = '_';
    }
    return out;
}

kevo_status kevo__ceilings_load(kevo__ceilings *c, const char *base,
                                const json_t *device, int driver,
                                kevo_error *err)
{
    memset(c, 0, sizeof *c);
    const char *name = json_string_value(json_object_get(device, "name"));
    const char *uuid = json_string_value(json_object_get(device, "uuid"));
    c->driver = driver;
    c->device = kevo__strdup(name ? name : "unknown");
    c->uuid = kevo__strdup(uuid ? uuid : "unknown");
    char *dflt = NULL, *file = NULL, *safe = safe_name(c->uuid);
    kevo_error ignored;
    kevo_error_init(&ignored);
    if (!base)
        base = dflt = kevo__compile_cache_base_dir(&ignored);
    if (!c->device || !c->uuid || !safe) {
        free(safe);
        free(dflt);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    if (!base) {
        /* No cache directory at all: measure every time. */
        free(safe);
        return KEVO_OK;
    }
    file = kevo__asprintf("%s/ceilings/%s-%d.json", base, safe, driver);
    free(safe);
    free(dflt);
    if (!file)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    c->path = file;
    json_error_t jerr;
    json_t *root = json_load_file(file, 0, &jerr);
    if (!root)
        return KEVO_OK;
    const char *format = json_string_value(json_object_get(root, "format"));
    const char *fuuid = json_string_value(json_object_get(root, "uuid"));
    if (format && strcmp(format, FORMAT) == 0 && fuuid &&
        strcmp(fuuid, c->uuid) == 0 &&
        json_integer_value(json_object_get(root, "driver")) == driver) {
        kevo__ceilings probe = *c;
        if (kevo__ceilings_update(&probe, json_object_get(root, "peaks"),
                                  &ignored) == KEVO_OK)
            *c = probe;
    }
    json_decref(root);
    return KEVO_OK;
}

kevo_status kevo__ceilings_save(const kevo__ceilings *c, kevo_error *err)
{
    if (!c->path)
        return KEVO_OK;
    json_t *peaks = json_object();
    json_t *root = json_pack("{s:s, s:s, s:s, s:i, s:o}", "format", FORMAT,
                             "device", c->device, "uuid", c->uuid, "driver",
                             c->driver, "peaks", peaks ? peaks : json_null());
    if (!root)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (c->has_bandwidth)
        json_object_set_new(peaks, "bandwidth", json_real(c->bandwidth));
    if (c->has_launch)
        json_object_set_new(peaks, "launch", json_real(c->launch));
    for (int p = 0; p < KEVO__NPEAKS; p++) {
        if (c->has_peak[p])
            json_object_set_new(peaks, kevo_peak_name((kevo_peak)p),
                                json_real(c->peak[p]));
    }
    for (int i = 0; i < KEVO__NDETAILS; i++) {
        if (c->has_detail[i])
            json_object_set_new(peaks, detail_names[i],
                                json_real(c->detail[i]));
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = KEVO_OK;
    char *dir = kevo__dirname(c->path);
    if (!dir)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    else if ((rc = kevo__mkdir_p(dir, err)) == KEVO_OK)
        rc = kevo__write_file_atomic(c->path, text, strlen(text), err);
    free(dir);
    free(text);
    return rc;
}
