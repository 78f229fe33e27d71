/*
 * devprops.h: the device properties that expressions may name (launch
 * geometry, constraints), a nominal device to check tasks against where
 * there is no GPU, and the device described to operators.
 */
#ifndef KEVO_DEVPROPS_H
#define KEVO_DEVPROPS_H

#include "core/kevo_private.h"

/* The number of kevo_peak values. */
#define KEVO__PEAK_COUNT 6

/* The measured ceilings of one device. A value <= 0 (or not finite) is
 * unknown: a floor that needs it is unknown too. */
typedef struct kevo_ceilings {
    double bandwidth;              /* bytes read + written per second */
    double peak[KEVO__PEAK_COUNT]; /* per kevo_peak, operations per second
                                      (an FMA counts two) */
    double launch; /* seconds from start to end of the shortest kernel (an
                      empty one): no shape can take less. 0: unknown, and
                      then the floor leaves the term out */
} kevo_ceilings;

/* The i-th property's name, in a fixed order; NULL past the last. */
const char *kevo__devprop_name(size_t i);

/* True when name is a device property. */
bool kevo__devprop_is_name(const char *name);

/* Sets every device property of the nominal device (an H100 SXM: 132 SMs,
 * 227 KiB of shared memory per block, 50 MiB of L2) in vars. */
kevo_status kevo__devprops_nominal(kevo_vars *vars);

/* The longest target kevo__devprops_arch writes, with its NUL. */
#define KEVO__ARCH_SIZE 16

/*
 * kevo__devprops_arch: the target kevo compiles for on a device of compute
 * capability cc (major * 10 + minor), into buf: the architecture-specific
 * target ("sm_90a", "sm_100a", "sm_120a") from compute capability 9.0 on,
 * where there is one for every device, since a candidate only ever runs
 * on the device it was compiled for and wgmma, setmaxnreg and tcgen05 exist
 * only there; "sm_NN" before. "" for a cc below 10. Returns buf.
 */
char *kevo__devprops_arch(int64_t cc, char *buf, size_t size);

/*
 * The device as operators see it (kevo_host_api's device_json): a JSON
 * object with the device's name (when known), its properties under their
 * expression names (sm_count, max_smem_per_block, ...), "arch", the
 * target NVRTC compiles for (kevo__devprops_arch of its cc), and its measured
 * ceilings: "bandwidth" in bytes (read plus written) per second,
 * "launch_latency" in seconds, "peaks" {"fp32": operations per second,
 * ...} with the known peaks, and "peak", the kind the task's cost model
 * counts flops against. Unknown ceilings (<= 0 or not finite) are left
 * out. Returns a new string, or NULL when out of memory.
 */
char *kevo__devprops_json(const char *name, const kevo_vars *props,
                          const kevo_ceilings *ceilings, kevo_peak task_peak);

#endif
