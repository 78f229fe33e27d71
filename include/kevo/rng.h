/*
 * kevo/rng.h: random number streams. Every random decision kevo makes comes
 * from one of these, so a run seed fixes them all.
 *
 * A stream is a GSL generator (MT19937) seeded from a run seed and a stream
 * name: the same seed and name give the same numbers on every machine, and
 * different names give independent streams. A stream's whole state can be
 * saved as a string and restored, so a resumed run continues exactly.
 *
 * Every function here is experimental (kevo-api(7)).
 */
#ifndef KEVO_RNG_H
#define KEVO_RNG_H

#include <kevo/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_rng kevo_rng;

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_rng_new: a stream for run seed seed and the stream name (NULL means
 * ""). Returns NULL when out of memory.
 */
KEVO_API kevo_rng *kevo_rng_new(uint64_t seed, const char *stream);

/* kevo_rng_free: frees a stream. NULL does nothing. */
KEVO_API void kevo_rng_free(kevo_rng *rng);

/*
 * kevo_rng_copy: a new stream in the same state: both then produce the same
 * numbers. Returns NULL when out of memory.
 */
KEVO_API kevo_rng *kevo_rng_copy(const kevo_rng *rng);

/* kevo_rng_uniform: a double uniform on [0, 1). */
KEVO_API double kevo_rng_uniform(kevo_rng *rng);

/*
 * kevo_rng_uniform_int: an integer uniform on [0, n), without modulo bias;
 * 0 when n is 0.
 */
KEVO_API uint64_t kevo_rng_uniform_int(kevo_rng *rng, uint64_t n);

/* kevo_rng_gaussian: a normal variate with mean 0 and standard deviation
 * sigma (sigma >= 0). */
KEVO_API double kevo_rng_gaussian(kevo_rng *rng, double sigma);

/*
 * kevo_rng_beta: a Beta(a, b) variate. Returns NaN, drawing nothing, unless
 * a > 0 and b > 0 are finite.
 */
KEVO_API double kevo_rng_beta(kevo_rng *rng, double a, double b);

/*
 * kevo_rng_save: the whole state as a new string (the generator's name, a
 * colon and its state in hexadecimal) in *state; the caller frees it with
 * free(). Returns KEVO_OK or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_rng_save(const kevo_rng *rng, char **state);

/*
 * kevo_rng_restore: puts rng in the state that kevo_rng_save() wrote.
 * Returns KEVO_OK, or KEVO_EFORMAT for a string of another generator, length
 * or alphabet, in which case rng is unchanged.
 */
KEVO_API kevo_status kevo_rng_restore(kevo_rng *rng, const char *state,
                                      kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
