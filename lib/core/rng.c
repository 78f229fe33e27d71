/*
 * rng.c: random number streams on GSL's MT19937, seeded from a run seed and
 * a stream name, with their state saved as text.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kevo_private.h"

struct kevo_rng {
    gsl_rng *r;
};

/* GSL's MT19937 state (gsl/rng/mt.c). restore() checks a state against it
 * before handing it to the generator, whose code trusts its state. */
#define MT_N 624
typedef struct {
    unsigned long mt[MT_N];
    int mti;
} mt_state;

static uint64_t splitmix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    return kevo__hash_finish(x);
}

/* The 32-bit GSL seed of a stream. GSL's mt19937 replaces seed 0 with its
 * default seed 4357, so 0 never reaches it: two streams would share one
 * sequence. */
static unsigned long stream_seed(uint64_t seed, const char *stream)
{
    uint64_t h = kevo__hash_finish(
        kevo__hash_bytes(KEVO__HASH_INIT, stream, strlen(stream)));
    uint64_t z = splitmix64(splitmix64(seed) ^ h);
    uint32_t s = (uint32_t)(z >> 32);
    if (s == 0)
        s = (uint32_t)z ? (uint32_t)z : 1;
    return s;
}

kevo_rng *kevo_rng_new(uint64_t seed, const char *stream)
{
    kevo_rng *rng = calloc(1, sizeof *rng);
    if (!rng)
        return NULL;
    rng->r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng->r) {
        free(rng);
        return NULL;
    }
    /* The state's padding is never written by GSL; clear it so that a saved
     * state is fully defined. */
    memset(gsl_rng_state(rng->r), 0, gsl_rng_size(rng->r));
    gsl_rng_set(rng->r, stream_seed(seed, stream ? stream : ""));
    return rng;
}

void kevo_rng_free(kevo_rng *rng)
{
    if (!rng)
        return;
    gsl_rng_free(rng->r);
    free(rng);
}

kevo_rng *kevo_rng_copy(const kevo_rng *rng)
{
    if (!rng)
        return NULL;
    kevo_rng *copy = calloc(1, sizeof *copy);
    if (!copy)
        return NULL;
    copy->r = gsl_rng_clone(rng->r);
    if (!copy->r) {
        free(copy);
        return NULL;
    }
    return copy;
}

double kevo_rng_uniform(kevo_rng *rng)
{
    return gsl_rng_uniform(rng->r);
}

static uint64_t draw64(kevo_rng *rng)
{
    uint64_t hi = gsl_rng_get(rng->r) & UINT32_MAX;
    uint64_t lo = gsl_rng_get(rng->r) & UINT32_MAX;
    return hi << 32 | lo;
}

uint64_t kevo_rng_uniform_int(kevo_rng *rng, uint64_t n)
{
    if (n == 0)
        return 0;
    if (n <= gsl_rng_max(rng->r) - gsl_rng_min(rng->r))
        return gsl_rng_uniform_int(rng->r, (unsigned long)n);
    /* Two 32-bit draws make a 64-bit one; the lowest 2^64 mod n values are
     * rejected, so that every residue is equally likely. */
    uint64_t threshold = (0 - n) % n;
    uint64_t x;
    do
        x = draw64(rng);
    while (x < threshold);
    return x % n;
}

double kevo_rng_gaussian(kevo_rng *rng, double sigma)
{
    if (!(sigma >= 0) || !isfinite(sigma))
        return NAN;
    return gsl_ran_gaussian_ziggurat(rng->r, sigma);
}

double kevo_rng_beta(kevo_rng *rng, double a, double b)
{
    if (!(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b))
        return NAN;
    return gsl_ran_beta(rng->r, a, b);
}

kevo_status kevo_rng_save(const kevo_rng *rng, char **state)
{
    static const char hex[] = "0123456789abcdef";
    if (!rng || !state)
        return KEVO_EINVAL;
    const char *name = gsl_rng_name(rng->r);
    const unsigned char *bytes = gsl_rng_state(rng->r);
    size_t size = gsl_rng_size(rng->r);
    size_t nlen = strlen(name);
    char *s = malloc(nlen + 1 + 2 * size + 1);
    if (!s)
        return KEVO_ENOMEM;
    memcpy(s, name, nlen);
    s[nlen] = ':';
    char *p = s + nlen + 1;
    for (size_t i = 0; i < size; i++) {
        *p++ = hex[bytes[i] >> 4];
        *p++ = hex[bytes[i] & 15];
    }
    *p = '\0';
    *state = s;
    return KEVO_OK;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Checks what GSL's code assumes of an MT19937 state: words of 32 bits and
 * a position within the table. */
static kevo_status check_mt_state(const void *bytes, size_t size,
                                  kevo_error *err)
{
    if (size != sizeof(mt_state))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "random state: this GSL's mt19937 state has %zu "
                               "bytes where kevo expects %zu",
                               size, sizeof(mt_state));
    const mt_state *st = bytes;
    if (st->mti < 0 || st->mti > MT_N)
        return kevo__error_set(err, KEVO_EFORMAT,
                               "random state: mt19937 position %d is outside "
                               "0..%d (a damaged state)",
                               st->mti, MT_N);
    for (size_t i = 0; i < MT_N; i++)
        if (st->mt[i] >> 16 >> 16 != 0)
            return kevo__error_set(err, KEVO_EFORMAT,
                                   "random state: mt19937 word %zu is %#lx, "
                                   "wider than 32 bits (a damaged state)",
                                   i, st->mt[i]);
    return KEVO_OK;
}

kevo_status kevo_rng_restore(kevo_rng *rng, const char *state, kevo_error *err)
{
    if (!rng || !state)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_rng_restore: rng and state must not be "
                               "NULL");
    kevo_status rc = KEVO_OK;
    const char *name = gsl_rng_name(rng->r);
    size_t nlen = strlen(name);
    size_t size = gsl_rng_size(rng->r);
    unsigned char *bytes = NULL;
    const char *colon = strchr(state, ':');
    if (!colon) {
        rc = kevo__error_set(err, KEVO_EFORMAT,
                             "random state: no generator name: expected "
                             "\"%s:\" followed by hexadecimal digits",
                             name);
        goto out;
    }
    if ((size_t)(colon - state) != nlen || memcmp(state, name, nlen) != 0) {
        rc = kevo__error_set(err, KEVO_EFORMAT,
                             "random state of generator \"%.*s\": expected "
                             "\"%s\"",
                             (int)(colon - state > 64 ? 64 : colon - state),
                             state, name);
        goto out;
    }
    const char *digits = colon + 1;
    size_t ndigits = strlen(digits);
    if (ndigits != 2 * size) {
        rc = kevo__error_set(err, KEVO_EFORMAT,
                             "random state for %s: %zu hexadecimal digits, "
                             "expected %zu",
                             name, ndigits, 2 * size);
        goto out;
    }
    bytes = malloc(size);
    if (!bytes) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < size; i++) {
        int hi = hex_value(digits[2 * i]), lo = hex_value(digits[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            size_t at = 2 * i + (hi < 0 ? 0 : 1);
            unsigned char c = (unsigned char)digits[at];
            size_t pos = nlen + 1 + at + 1;
            if (c >= 0x20 && c < 0x7f)
                rc = kevo__error_set(err, KEVO_EFORMAT,
                                     "random state for %s: character %zu "
                                     "('%c') is not a lower-case hexadecimal "
                                     "digit",
                                     name, pos, c);
            else
                rc = kevo__error_set(err, KEVO_EFORMAT,
                                     "random state for %s: character %zu "
                                     "(byte 0x%02x) is not a lower-case "
                                     "hexadecimal digit",
                                     name, pos, c);
            goto out;
        }
        bytes[i] = (unsigned char)(hi << 4 | lo);
    }
    rc = check_mt_state(bytes, size, err);
    if (rc != KEVO_OK)
        goto out;
    memcpy(gsl_rng_state(rng->r), bytes, size);
out:
    free(bytes);
    return rc;
}

/* kevo_global_init lives beside the generators: GSL is the one library
 * whose process-wide state it may change. */
kevo_status kevo_global_init(unsigned flags)
{
    if (flags & ~(unsigned)KEVO_INIT_GSL_HANDLER_OFF)
        return KEVO_EINVAL;
    if (flags & KEVO_INIT_GSL_HANDLER_OFF)
        gsl_set_error_handler_off();
    return KEVO_OK;
}
