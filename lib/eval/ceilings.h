/*
 * ceilings.h: a device's measured ceilings (memory bandwidth, arithmetic
 * peaks, launch latency) and the figures of the probes each is the best
 * of, cached on disk per device and driver so that they are measured
 * once: BASE/ceilings/UUID-DRIVER.json, where BASE is the cache's base
 * directory (see compile_cache.h).
 */
#ifndef KEVO_CEILINGS_H
#define KEVO_CEILINGS_H

#include <jansson.h>
#include <stdbool.h>

#include <kevo/task.h>

#include "core/kevo_private.h"

#define KEVO__NPEAKS 6 /* the kevo_peak values */

/* The probe figures, by kevo__ceilings_detail_name. */
#define KEVO__NDETAILS 12

typedef struct kevo__ceilings {
    double bandwidth;              /* bytes read + written per second */
    double peak[KEVO__NPEAKS];     /* operations per second, by kevo_peak */
    double launch;                 /* seconds: an empty kernel, start to end */
    double detail[KEVO__NDETAILS]; /* the probes' figures */
    bool has_bandwidth;
    bool has_launch;
    bool has_peak[KEVO__NPEAKS];
    bool has_detail[KEVO__NDETAILS];
    char *path;   /* the cache file; NULL: not cached */
    char *device; /* the device's name, for the file */
    char *uuid;
    int driver;
} kevo__ceilings;

/*
 * kevo__ceilings_load: clears *c, then reads the cache file of device (the
 * GPU worker's hello "device" object: name, uuid) and driver under base
 * (NULL: the default base directory). A missing file leaves *c empty; a
 * file that does not parse or belongs to another device is ignored (and
 * rewritten by the next save). Returns KEVO_OK or KEVO_ENOMEM.
 */
kevo_status kevo__ceilings_load(kevo__ceilings *c, const char *base,
                                const json_t *device, int driver,
                                kevo_error *err);

/*
 * The name of probe figure i (0 to KEVO__NDETAILS - 1), NULL past them:
 * "bandwidth_read", "bandwidth_write", "bandwidth_copy",
 * "bandwidth_triad" (bytes per second of the streams the bandwidth is the
 * best of), then "K_mma_sync" and "K_wgmma" (operations per second of the
 * instruction families the tensor-core peak K is the best of) for K of
 * "tf32", "fp16", "bf16" and "fp8".
 */
const char *kevo__ceilings_detail_name(int i);

/* True when which names a ceiling: "bandwidth", "launch", a
 * kevo_peak_name() or a probe figure's name. */
bool kevo__ceilings_known(const char *which);

/* True when the ceiling called which is known. */
bool kevo__ceilings_has(const kevo__ceilings *c, const char *which);

/* The ceiling called which (bytes or operations per second, seconds for
 * "launch"); 0 when unknown. */
double kevo__ceilings_get(const kevo__ceilings *c, const char *which);

/* The peak of kind p in operations per second; 0 when unknown. */
double kevo__ceilings_peak(const kevo__ceilings *c, kevo_peak p);

/*
 * kevo__ceilings_update: takes the positive numbers of a worker's "peaks"
 * object ({"bandwidth": B, "bandwidth_read": R, "fp32": F, ...}); names it
 * does not know are left out. Returns KEVO_OK, or KEVO_EFORMAT naming a
 * member that is not a positive number.
 */
kevo_status kevo__ceilings_update(kevo__ceilings *c, const json_t *peaks,
                                  kevo_error *err);

/*
 * kevo__ceilings_merge: the same for a fresh measurement of the device and
 * driver of c: a ceiling is a maximum, so a figure replaces the one c
 * knows only when it beats it (a higher throughput, a lower launch
 * latency), and a cached value is never below a fresh measurement.
 */
kevo_status kevo__ceilings_merge(kevo__ceilings *c, const json_t *peaks,
                                 kevo_error *err);

/* kevo__ceilings_save: writes the cache file atomically (making its
 * directory). Returns KEVO_OK, or KEVO_EIO with the path. */
kevo_status kevo__ceilings_save(const kevo__ceilings *c, kevo_error *err);

/* kevo__ceilings_clear: frees what *c holds and empties it. */
void kevo__ceilings_clear(kevo__ceilings *c);

#endif
