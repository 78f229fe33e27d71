/*
 * ceilings.c: measured device ceilings and their cache file.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ceilings.h"
#include "compile_cache.h"

#define FORMAT                                                                 \
    "kevo-ceilings-2" /* 2: bandwidth includes the two-in, one-out probe */

void kevo__ceilings_clear(kevo__ceilings *c)
{
    free(c->path);
    free(c->device);
    free(c->uuid);
    memset(c, 0, sizeof *c);
}

/* The index of kind which in the peaks, -1 for the bandwidth, -3 for the
 * launch latency, -2 for none. */
static int which_index(const char *which)
{
    if (strcmp(which, "bandwidth") == 0)
        return -1;
    if (strcmp(which, "launch") == 0)
        return -3;
    for (int p = 0; p < KEVO__NPEAKS; p++) {
        const char *name = kevo_peak_name((kevo_peak)p);
        if (name && strcmp(name, which) == 0)
            return p;
    }
    return -2;
}

bool kevo__ceilings_has(const kevo__ceilings *c, const char *which)
{
    int i = which_index(which);
    if (i == -3)
        return c->has_launch;
    return i == -1 ? c->has_bandwidth : i >= 0 && c->has_peak[i];
}

double kevo__ceilings_peak(const kevo__ceilings *c, kevo_peak p)
{
    return (unsigned)p < KEVO__NPEAKS && c->has_peak[p] ? c->peak[p] : 0;
}

kevo_status kevo__ceilings_update(kevo__ceilings *c, const json_t *peaks,
                                  kevo_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)peaks, key, v) {
        int i = which_index(key);
        double x = json_number_value(v);
        if (i == -2)
            continue; /* a ceiling this release does not use */
        if (!json_is_number(v) || !(x > 0))
            return kevo__error_set(err, KEVO_EFORMAT,
                                   "ceiling \"%s\" is not a positive number",
                                   key);
        if (i == -1) {
            c->bandwidth = x;
            c->has_bandwidth = true;
        } else if (i == -3) {
            c->launch = x;
            c->has_launch = true;
        } else {
            c->peak[i] = x;
            c->has_peak[i] = true;
        }
    }
    return KEVO_OK;
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
