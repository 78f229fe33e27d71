/*
 * test-rng.c: random number streams: reproducibility, independence of
 * names, save and restore, bounds and distributions.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kevo.h>

#include "tap.h"

static int same_draws(kevo_rng *a, kevo_rng *b, int n)
{
    int same = 1;
    for (int i = 0; i < n; i++)
        if (kevo_rng_uniform_int(a, UINT64_MAX) !=
            kevo_rng_uniform_int(b, UINT64_MAX))
            same = 0;
    return same;
}

static void test_streams(void)
{
    kevo_rng *a = kevo_rng_new(42, "parents");
    kevo_rng *b = kevo_rng_new(42, "parents");
    kevo_rng *c = kevo_rng_new(42, "operators");
    kevo_rng *d = kevo_rng_new(43, "parents");
    kevo_rng *e = kevo_rng_new(42, NULL);
    kevo_rng *f = kevo_rng_new(42, "");
    ok(a && b && c && d && e && f, "streams created");
    ok(same_draws(a, b, 1000), "same seed and name: same sequence");

    kevo_rng *a2 = kevo_rng_new(42, "parents");
    int equal = 0;
    for (int i = 0; i < 1000; i++)
        equal += kevo_rng_uniform_int(a2, UINT32_MAX) ==
                 kevo_rng_uniform_int(c, UINT32_MAX);
    ok(equal < 5, "different names: different sequences (%d equal of 1000)",
       equal);
    kevo_rng_free(a2);

    a2 = kevo_rng_new(42, "parents");
    equal = 0;
    for (int i = 0; i < 1000; i++)
        equal += kevo_rng_uniform_int(a2, UINT32_MAX) ==
                 kevo_rng_uniform_int(d, UINT32_MAX);
    ok(equal < 5, "different seeds: different sequences (%d equal of 1000)",
       equal);
    kevo_rng_free(a2);
    ok(same_draws(e, f, 100), "a NULL name is the empty name");

    /* The mapping of seed and name to numbers is fixed on every machine and
     * in every release: a run seed written in a report reproduces the run. */
    kevo_rng *golden = kevo_rng_new(42, "parents");
    uint64_t g1 = kevo_rng_uniform_int(golden, 1000000000);
    uint64_t g2 = kevo_rng_uniform_int(golden, 1000000000);
    is_uint(g1, 775595103, "seed 42, \"parents\": first value is fixed");
    is_uint(g2, 430728673, "seed 42, \"parents\": second value is fixed");
    kevo_rng_free(golden);
    golden = kevo_rng_new(0, "");
    is_uint(kevo_rng_uniform_int(golden, 1000000000), 548869442,
            "seed 0, \"\": first value is fixed");
    kevo_rng_free(golden);

    kevo_rng *g = kevo_rng_new(0, "");
    kevo_rng *h = kevo_rng_new(0, "x");
    ok(g && h, "seed 0 streams created");
    ok(!same_draws(g, h, 10), "seed 0 with different names differ");
    kevo_rng_free(g);
    kevo_rng_free(h);

    kevo_rng *copy = kevo_rng_copy(a);
    ok(copy != NULL, "copy");
    ok(same_draws(a, copy, 1000), "a copy continues identically");
    kevo_rng_free(copy);
    ok(kevo_rng_copy(NULL) == NULL, "copy of NULL is NULL");

    for (int i = 0; i < 1000; i++) {
        double u = kevo_rng_uniform(a);
        if (!(u >= 0 && u < 1)) {
            ok(0, "uniform %.17g outside [0, 1)", u);
            break;
        }
    }
    ok(1, "uniform stays in [0, 1)");

    kevo_rng_free(a);
    kevo_rng_free(b);
    kevo_rng_free(c);
    kevo_rng_free(d);
    kevo_rng_free(e);
    kevo_rng_free(f);
    kevo_rng_free(NULL);
}

static void test_save_restore(void)
{
    kevo_rng *a = kevo_rng_new(7, "save");
    for (int i = 0; i < 12345; i++)
        kevo_rng_uniform(a);
    char *state = NULL;
    is_int(kevo_rng_save(a, &state), KEVO_OK, "save");
    ok(state && strncmp(state, "mt19937:", 8) == 0, "state names mt19937");
    size_t len = state ? strlen(state) : 0;
    ok(len > 8 && (len - 8) % 2 == 0 &&
           strspn(state + 8, "0123456789abcdef") == len - 8,
       "state is lower-case hexadecimal of whole bytes (%zu digits)", len - 8);

    uint64_t want[1000];
    for (int i = 0; i < 1000; i++)
        want[i] = kevo_rng_uniform_int(a, UINT64_MAX);

    /* Restore into a stream of another seed and name. */
    kevo_rng *b = kevo_rng_new(99, "other");
    kevo_error err;
    kevo_error_init(&err);
    is_int(kevo_rng_restore(b, state, &err), KEVO_OK, "restore");
    int same = 1;
    for (int i = 0; i < 1000; i++)
        same &= kevo_rng_uniform_int(b, UINT64_MAX) == want[i];
    ok(same, "restored stream reproduces 1000 draws exactly");

    /* Saving the same state twice gives the same string. */
    kevo_rng *c = kevo_rng_new(99, "other");
    kevo_rng_restore(c, state, NULL);
    char *again = NULL;
    kevo_rng_save(c, &again);
    is_str(again, state, "save after restore gives the same text");
    free(again);
    kevo_rng_free(c);

    /* Each bad state leaves the stream as it was. */
    struct {
        const char *what;
        char *text;
        const char *needle;
    } bad[8];
    size_t nbad = 0;
    bad[nbad].what = "another generator";
    bad[nbad].text = malloc(len + 1);
    memcpy(bad[nbad].text, "ranlxd2:", 8);
    memcpy(bad[nbad].text + 8, state + 8, len - 8 + 1);
    bad[nbad++].needle = "random state of generator \"ranlxd2\": expected "
                         "\"mt19937\"";
    bad[nbad].what = "one digit short";
    bad[nbad].text = malloc(len);
    memcpy(bad[nbad].text, state, len - 1);
    bad[nbad].text[len - 1] = '\0';
    bad[nbad++].needle = "hexadecimal digits, expected";
    bad[nbad].what = "upper-case digit";
    bad[nbad].text = malloc(len + 1);
    memcpy(bad[nbad].text, state, len + 1);
    bad[nbad].text[20] = 'A';
    bad[nbad++].needle = "character 21 ('A') is not a lower-case hexadecimal "
                         "digit";
    bad[nbad].what = "a non-hex letter";
    bad[nbad].text = malloc(len + 1);
    memcpy(bad[nbad].text, state, len + 1);
    bad[nbad].text[len - 1] = 'g';
    bad[nbad++].needle = "('g') is not a lower-case hexadecimal digit";
    bad[nbad].what = "a control byte";
    bad[nbad].text = malloc(len + 1);
    memcpy(bad[nbad].text, state, len + 1);
    bad[nbad].text[9] = '\001';
    bad[nbad++].needle = "character 10 (byte 0x01)";
    bad[nbad].what = "no colon";
    bad[nbad].text = strdup("mt19937");
    bad[nbad++].needle = "no generator name";
    bad[nbad].what = "empty";
    bad[nbad].text = strdup("");
    bad[nbad++].needle = "no generator name";

    for (size_t i = 0; i < nbad; i++) {
        kevo_rng *ref = kevo_rng_new(5, "unchanged");
        kevo_rng *t = kevo_rng_new(5, "unchanged");
        kevo_rng_uniform(ref);
        kevo_rng_uniform(t);
        kevo_error_init(&err);
        is_int(kevo_rng_restore(t, bad[i].text, &err), KEVO_EFORMAT,
               "restore with %s fails", bad[i].what);
        like_str(err.text, bad[i].needle, "message for %s", bad[i].what);
        ok(same_draws(ref, t, 1000), "stream unchanged after %s", bad[i].what);
        kevo_rng_free(ref);
        kevo_rng_free(t);
        free(bad[i].text);
    }

    /* A state of the right shape whose table position is impossible: GSL
     * would read outside its table. The position is the int after 624
     * unsigned longs (checked on LP64 little-endian machines only). */
    uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    if (len == 8 + 2 * (624 * 8 + 8) && first == 1) {
        char *damaged = strdup(state);
        memcpy(damaged + 8 + 2 * 624 * 8, "ffffffff", 8);
        kevo_rng *t = kevo_rng_new(5, "unchanged");
        kevo_rng *ref = kevo_rng_new(5, "unchanged");
        kevo_error_init(&err);
        is_int(kevo_rng_restore(t, damaged, &err), KEVO_EFORMAT,
               "impossible table position refused");
        like_str(err.text, "position -1 is outside 0..624", "its message");
        ok(same_draws(ref, t, 100), "stream unchanged after it");
        memcpy(damaged + 8 + 2 * 624 * 8, "70020000", 8); /* 624 */
        memcpy(damaged + 8 + 8, "01", 2);                 /* word 0, byte 4 */
        kevo_error_init(&err);
        is_int(kevo_rng_restore(t, damaged, &err), KEVO_EFORMAT,
               "a word wider than 32 bits refused");
        like_str(err.text, "word 0 is 0x1", "its message");
        ok(same_draws(ref, t, 100), "stream unchanged after it");
        kevo_rng_free(t);
        kevo_rng_free(ref);
        free(damaged);
    } else {
        diag("state layout not LP64 little-endian: damaged-state checks "
             "skipped");
    }

    kevo_error_init(&err);
    is_int(kevo_rng_restore(b, NULL, &err), KEVO_EINVAL, "NULL state");

    free(state);
    kevo_rng_free(a);
    kevo_rng_free(b);
}

static void test_uniform_int(void)
{
    kevo_rng *r = kevo_rng_new(2024, "ints");
    const uint64_t ns[] = {1,
                           2,
                           3,
                           (uint64_t)UINT32_MAX,
                           (uint64_t)UINT32_MAX + 1,
                           (uint64_t)UINT32_MAX + 2,
                           UINT64_C(1) << 63,
                           UINT64_MAX};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        uint64_t n = ns[k], max = 0;
        int inside = 1;
        for (int i = 0; i < 20000; i++) {
            uint64_t x = kevo_rng_uniform_int(r, n);
            inside &= x < n;
            if (x > max)
                max = x;
        }
        ok(inside, "uniform_int(%llu) stays below n", (unsigned long long)n);
        if (n > 1)
            ok(max >= n / 2, "uniform_int(%llu) reaches the upper half",
               (unsigned long long)n);
        else
            is_uint(max, 0, "uniform_int(1) is always 0");
    }
    is_uint(kevo_rng_uniform_int(r, 0), 0, "uniform_int(0) is 0");

    /* The two 32-bit halves must both vary for a 64-bit n. */
    int low_set = 0, high_set = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = kevo_rng_uniform_int(r, UINT64_MAX);
        low_set |= (x & 1) != 0;
        high_set |= (x >> 63) != 0;
    }
    ok(low_set && high_set, "64-bit draws set both low and high bits");

    /* Chi-square against the uniform distribution. The seed is fixed, so
     * the outcome is too; the bounds are the 0.1% and 99.9% quantiles, so a
     * biased generator fails and a sound one passes. */
    const struct {
        uint64_t n;
        double lo, hi;
    } cases[] = {{2, 0.0, 10.83}, {3, 0.002, 13.82}, {10, 1.15, 27.88}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t n = cases[k].n;
        long counts[10] = {0};
        const long draws = 100000;
        for (long i = 0; i < draws; i++)
            counts[kevo_rng_uniform_int(r, n)]++;
        double expect = (double)draws / (double)n, chi2 = 0;
        for (uint64_t j = 0; j < n; j++)
            chi2 += (counts[j] - expect) * (counts[j] - expect) / expect;
        ok(chi2 >= cases[k].lo && chi2 <= cases[k].hi,
           "chi-square for n = %llu: %.3f within [%.3f, %.2f]",
           (unsigned long long)n, chi2, cases[k].lo, cases[k].hi);
    }

    /* Modulo bias would show for n = 3 * 2^62: a plain x % n of a 64-bit x
     * gives the lowest quarter of [0, n) twice the weight of the rest. */
    uint64_t n = UINT64_C(3) << 62;
    long low = 0;
    for (int i = 0; i < 30000; i++)
        low += kevo_rng_uniform_int(r, n) < n / 3;
    ok(low > 9400 && low < 10600,
       "n = 3 * 2^62: the lowest third gets a third (%ld of 30000)", low);
    kevo_rng_free(r);
}

static void test_variates(void)
{
    kevo_rng *r = kevo_rng_new(11, "variates");
    kevo_rng *ref = kevo_rng_new(11, "variates");
    const double bad[][2] = {{0, 1},   {1, 0},   {-1, 2},       {2, -0.5},
                             {NAN, 1}, {1, NAN}, {INFINITY, 1}, {1, INFINITY}};
    int all_nan = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        all_nan &= isnan(kevo_rng_beta(r, bad[i][0], bad[i][1]));
    ok(all_nan, "beta with a bad argument is NaN");
    ok(isnan(kevo_rng_gaussian(r, -1)) && isnan(kevo_rng_gaussian(r, NAN)),
       "gaussian with a bad sigma is NaN");
    ok(same_draws(r, ref, 100), "bad arguments draw nothing");

    const double good[][2] = {
        {1, 1}, {0.5, 0.5}, {2, 5}, {1e-3, 1e-3}, {100, 0.01}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int inside = 1;
        double sum = 0;
        for (int k = 0; k < 2000; k++) {
            double x = kevo_rng_beta(r, good[i][0], good[i][1]);
            inside &= x >= 0 && x <= 1;
            sum += x;
        }
        ok(inside, "beta(%g, %g) in [0, 1]", good[i][0], good[i][1]);
        double mean = good[i][0] / (good[i][0] + good[i][1]);
        is_double(sum / 2000, mean, 0.05, "beta(%g, %g) mean", good[i][0],
                  good[i][1]);
    }

    double sum = 0, sq = 0;
    for (int k = 0; k < 20000; k++) {
        double x = kevo_rng_gaussian(r, 2.0);
        sum += x;
        sq += x * x;
    }
    is_double(sum / 20000, 0, 0.05, "gaussian mean");
    is_double(sqrt(sq / 20000), 2.0, 0.05, "gaussian standard deviation");
    is_double(kevo_rng_gaussian(r, 0), 0, 0, "gaussian with sigma 0 is 0");
    kevo_rng_free(r);
    kevo_rng_free(ref);
}

int main(void)
{
    test_streams();
    test_save_restore();
    test_uniform_int();
    test_variates();
    return done_testing();
}
