/*
 * options.h: option tables. Every object with options (the evaluator, the
 * search, the prompt pool) describes them in one static table indexed by
 * its public option enum: each option's name in configuration files, the
 * kind of its value, its default, its bounds, and whether it may change
 * once the object has started. The defaults an object starts with, its
 * bounds queries, its name lookups, the check of every new value, the
 * option count and the JSON form of the values all come from that table,
 * so that every object words its errors the same way:
 *
 *   option min_reps: 0 is below the lowest allowed value 1 (allowed 1..100000)
 *   option device cannot change once the evaluator has started
 *   no evaluator option "warm_up" (known: compile_workers, device, ...)
 *
 * Values are integers (int64_t) in the unit their name ends with (_ms,
 * _ns, _ppm for fractions in millionths), booleans (0 or 1), or, where a
 * quantity is a real number by nature (the prompt pool's prior counts and
 * weight), doubles.
 */
#ifndef KEVO_OPTIONS_H
#define KEVO_OPTIONS_H

#include <jansson.h>

#include "kevo_private.h"

typedef enum kevo__option_kind {
    KEVO__OPTION_INT = 0,  /* a whole number in [lo, hi] */
    KEVO__OPTION_BOOL = 1, /* 0 or 1; true or false in JSON */
    KEVO__OPTION_REAL = 2  /* a real number in [real_lo, real_hi], or in
                              (real_lo, real_hi] with lo_open */
} kevo__option_kind;

typedef struct kevo__option {
    const char *name;
    kevo__option_kind kind;
    bool live;           /* may change after the object has started */
    int64_t def, lo, hi; /* INT and BOOL */
    double real_def, real_lo, real_hi; /* REAL */
    bool lo_open;                      /* REAL: real_lo itself is refused */
} kevo__option;

/* Table entries, for readability: a name, the default, the bounds, and
 * KEVO__OPTION_LIVE or KEVO__OPTION_FIXED. */
#define KEVO__OPTION_LIVE true
#define KEVO__OPTION_FIXED false
#define KEVO__OPTION_INT(nm, d, l, h, lv)                                      \
    {                                                                          \
        .name = (nm), .kind = KEVO__OPTION_INT, .live = (lv), .def = (d),      \
        .lo = (l), .hi = (h)                                                   \
    }
#define KEVO__OPTION_BOOL(nm, d, lv)                                           \
    {                                                                          \
        .name = (nm), .kind = KEVO__OPTION_BOOL, .live = (lv), .def = (d),     \
        .lo = 0, .hi = 1                                                       \
    }
#define KEVO__OPTION_REAL(nm, d, l, h, lv)                                     \
    {                                                                          \
        .name = (nm), .kind = KEVO__OPTION_REAL, .live = (lv),                 \
        .real_def = (d), .real_lo = (l), .real_hi = (h)                        \
    }
/* A real number above 0, at most h. */
#define KEVO__OPTION_POSITIVE(nm, d, h, lv)                                    \
    {                                                                          \
        .name = (nm), .kind = KEVO__OPTION_REAL, .live = (lv),                 \
        .real_def = (d), .real_lo = 0, .real_hi = (h), .lo_open = true         \
    }

/* One object's options: entries[i] describes the option whose enum value
 * is i. object names the object in messages ("evaluator", "search",
 * "prompt pool"). */
typedef struct kevo__option_table {
    const char *object;
    const kevo__option *entries;
    size_t count;
} kevo__option_table;

/* The table of a static array of entries; its count is the array's. */
#define KEVO__OPTION_TABLE(object, entries)                                    \
    {                                                                          \
        (object), (entries), KEVO_ARRAY_SIZE(entries)                          \
    }

/* The entry of option opt, or NULL when opt is not in the table. */
const kevo__option *kevo__option_at(const kevo__option_table *t, int opt);

/* The option's name, or NULL when opt is not in the table. */
const char *kevo__option_name(const kevo__option_table *t, int opt);

/* True when opt may change after the object has started (false for an
 * option not in the table). */
bool kevo__option_live(const kevo__option_table *t, int opt);

/*
 * kevo__option_find: the option called name in *out (out may be NULL: is
 * there one?). Returns KEVO_OK; KEVO_ENOENT for an unknown name ("no
 * evaluator option \"x\" (known: a, b, ...)"); KEVO_EINVAL for a NULL name.
 */
kevo_status kevo__option_find(const kevo__option_table *t, const char *name,
                              int *out, kevo_error *err);

/*
 * kevo__option_bounds: the lowest, highest and default value of an
 * integer or boolean option (each pointer may be NULL); _real: of any
 * option, as doubles. Return KEVO_OK, or KEVO_EINVAL for an option not in
 * the table (and, without _real, for a real option).
 */
kevo_status kevo__option_bounds(const kevo__option_table *t, int opt,
                                int64_t *lo, int64_t *hi, int64_t *def);
kevo_status kevo__option_bounds_real(const kevo__option_table *t, int opt,
                                     double *lo, double *hi, double *def);

/* Fills values[0 .. count - 1] with the defaults: integers (a real
 * option's entry gets 0), or, with _real, doubles of every kind. */
void kevo__option_defaults(const kevo__option_table *t, int64_t *values);
void kevo__option_defaults_real(const kevo__option_table *t, double *values);

/*
 * kevo__option_check: whether value may be given to option opt of an
 * object that has started (started) or not. Returns KEVO_OK; KEVO_EINVAL
 * for an option not in the table ("no evaluator option 99"); KEVO_ESTATE
 * for an option that is not live once started ("option device cannot
 * change once the evaluator has started"); KEVO_ERANGE for a value outside
 * the bounds, or, with _real, a NaN or a fraction given to an integer
 * option ("option min_reps: 0 is below the lowest allowed value 1 (allowed
 * 1..100000)").
 */
kevo_status kevo__option_check(const kevo__option_table *t, int opt,
                               int64_t value, bool started, kevo_error *err);
kevo_status kevo__option_check_real(const kevo__option_table *t, int opt,
                                    double value, bool started,
                                    kevo_error *err);

/*
 * kevo__option_json: value as the JSON its kind takes: an integer, true or
 * false, or a real number (_real: an integer option's value as an
 * integer). A new reference, or NULL when out of memory or for an option
 * not in the table.
 */
json_t *kevo__option_json(const kevo__option_table *t, int opt, int64_t value);
json_t *kevo__option_json_real(const kevo__option_table *t, int opt,
                               double value);

/*
 * kevo__option_read: the value of option opt from obj[name] in *out, or
 * its default when obj has no such key (obj may be NULL); _real: of any
 * kind, as a double. The JSON type must be the kind's (an integer, true or
 * false, a number) and the value within the bounds. Returns KEVO_OK or
 * KEVO_EINVALID ("option warmup: expected an integer, found a string"),
 * KEVO_ERANGE as kevo__option_check(), KEVO_EINVAL for an option not in
 * the table.
 */
kevo_status kevo__option_read(const kevo__option_table *t, int opt,
                              const json_t *obj, int64_t *out, kevo_error *err);
kevo_status kevo__option_read_real(const kevo__option_table *t, int opt,
                                   const json_t *obj, double *out,
                                   kevo_error *err);

#endif
