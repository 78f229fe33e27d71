/*
 * devprops.h: the device properties that expressions may name (launch
 * geometry, constraints), and a nominal device to check tasks against where
 * there is no GPU.
 */
#ifndef KEVO_DEVPROPS_H
#define KEVO_DEVPROPS_H

#include "kevo_private.h"

/* The i-th property's name, in a fixed order; NULL past the last. */
const char *kevo__devprop_name(size_t i);

/* True when name is a device property. */
bool kevo__devprop_is_name(const char *name);

/* Sets every device property of the nominal device (an H100 SXM: 132 SMs,
 * 227 KiB of shared memory per block, 50 MiB of L2) in vars. */
kevo_status kevo__devprops_nominal(kevo_vars *vars);

#endif
