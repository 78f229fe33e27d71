/*
 * options.c: option tables (see options.h): lookups, bounds, defaults, the
 * check of a new value with its one error style, and the JSON form.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsonutil.h"
#include "options.h"

const kevo__option *kevo__option_at(const kevo__option_table *t, int opt)
{
    return opt >= 0 && (size_t)opt < t->count ? &t->entries[opt] : NULL;
}

const char *kevo__option_name(const kevo__option_table *t, int opt)
{
    const kevo__option *o = kevo__option_at(t, opt);
    return o ? o->name : NULL;
}

bool kevo__option_live(const kevo__option_table *t, int opt)
{
    const kevo__option *o = kevo__option_at(t, opt);
    return o && o->live;
}

kevo_status kevo__option_find(const kevo__option_table *t, const char *name,
                              int *out, kevo_error *err)
{
    if (!name)
        return kevo__error_set(err, KEVO_EINVAL,
                               "looking up a %s option: no name", t->object);
    for (size_t i = 0; i < t->count; i++) {
        if (strcmp(t->entries[i].name, name) == 0) {
            if (out)
                *out = (int)i;
            return KEVO_OK;
        }
    }
    kevo_buf known = {0};
    for (size_t i = 0; i < t->count; i++)
        kevo__buf_printf(&known, "%s%s", i ? ", " : "", t->entries[i].name);
    kevo_status rc =
        kevo__error_set(err, KEVO_ENOENT, "no %s option \"%.64s\" (known: %s)",
                        t->object, name, known.data ? known.data : "");
    kevo__buf_free(&known);
    return rc;
}

kevo_status kevo__option_bounds(const kevo__option_table *t, int opt,
                                int64_t *lo, int64_t *hi, int64_t *def)
{
    const kevo__option *o = kevo__option_at(t, opt);
    if (!o || o->kind == KEVO__OPTION_REAL)
        return KEVO_EINVAL;
    if (lo)
        *lo = o->lo;
    if (hi)
        *hi = o->hi;
    if (def)
        *def = o->def;
    return KEVO_OK;
}

kevo_status kevo__option_bounds_real(const kevo__option_table *t, int opt,
                                     double *lo, double *hi, double *def)
{
    const kevo__option *o = kevo__option_at(t, opt);
    if (!o)
        return KEVO_EINVAL;
    bool real = o->kind == KEVO__OPTION_REAL;
    if (lo)
        *lo = real ? o->real_lo : (double)o->lo;
    if (hi)
        *hi = real ? o->real_hi : (double)o->hi;
    if (def)
        *def = real ? o->real_def : (double)o->def;
    return KEVO_OK;
}

void kevo__option_defaults(const kevo__option_table *t, int64_t *values)
{
    for (size_t i = 0; i < t->count; i++)
        values[i] =
            t->entries[i].kind == KEVO__OPTION_REAL ? 0 : t->entries[i].def;
}

void kevo__option_defaults_real(const kevo__option_table *t, double *values)
{
    for (size_t i = 0; i < t->count; i++)
        kevo__option_bounds_real(t, (int)i, NULL, NULL, &values[i]);
}

/* The option, or an error for one not in the table or not live once
 * started. */
static kevo_status entry(const kevo__option_table *t, int opt, bool started,
                         const kevo__option **out, kevo_error *err)
{
    *out = kevo__option_at(t, opt);
    if (!*out)
        return kevo__error_set(err, KEVO_EINVAL, "no %s option %d", t->object,
                               opt);
    if (started && !(*out)->live)
        return kevo__error_set(err, KEVO_ESTATE,
                               "option %s cannot change once the %s has "
                               "started",
                               (*out)->name, t->object);
    return KEVO_OK;
}

kevo_status kevo__option_check(const kevo__option_table *t, int opt,
                               int64_t value, bool started, kevo_error *err)
{
    const kevo__option *o;
    kevo_status rc = entry(t, opt, started, &o, err);
    if (rc != KEVO_OK)
        return rc;
    if (o->kind == KEVO__OPTION_REAL)
        return kevo__option_check_real(t, opt, (double)value, started, err);
    if (value < o->lo)
        return kevo__error_set(err, KEVO_ERANGE,
                               "option %s: %" PRId64
                               " is below the lowest allowed value %" PRId64
                               " (allowed %" PRId64 "..%" PRId64 ")",
                               o->name, value, o->lo, o->lo, o->hi);
    if (value > o->hi)
        return kevo__error_set(err, KEVO_ERANGE,
                               "option %s: %" PRId64
                               " is above the highest allowed value %" PRId64
                               " (allowed %" PRId64 "..%" PRId64 ")",
                               o->name, value, o->hi, o->lo, o->hi);
    return KEVO_OK;
}

kevo_status kevo__option_check_real(const kevo__option_table *t, int opt,
                                    double value, bool started, kevo_error *err)
{
    const kevo__option *o;
    kevo_status rc = entry(t, opt, started, &o, err);
    if (rc != KEVO_OK)
        return rc;
    double lo, hi;
    kevo__option_bounds_real(t, opt, &lo, &hi, NULL);
    char allowed[96];
    int n = snprintf(allowed, sizeof allowed, "allowed %.15g..%.15g", lo, hi);
    if (o->lo_open && n > 0 && (size_t)n < sizeof allowed)
        snprintf(allowed + n, sizeof allowed - (size_t)n, ", %.15g excluded",
                 lo);
    if (isnan(value))
        return kevo__error_set(err, KEVO_ERANGE,
                               "option %s: NaN is not a number (%s)", o->name,
                               allowed);
    if (o->lo_open && value <= lo)
        return kevo__error_set(err, KEVO_ERANGE,
                               "option %s: %.15g is not above %.15g (%s)",
                               o->name, value, lo, allowed);
    if (value < lo)
        return kevo__error_set(err, KEVO_ERANGE,
                               "option %s: %.15g is below the lowest allowed "
                               "value %.15g (%s)",
                               o->name, value, lo, allowed);
    if (value > hi)
        return kevo__error_set(err, KEVO_ERANGE,
                               "option %s: %.15g is above the highest allowed "
                               "value %.15g (%s)",
                               o->name, value, hi, allowed);
    if (o->kind != KEVO__OPTION_REAL && value != floor(value))
        return kevo__error_set(err, KEVO_ERANGE,
                               "option %s: %.15g is not a whole number (%s)",
                               o->name, value, allowed);
    return KEVO_OK;
}

json_t *kevo__option_json(const kevo__option_table *t, int opt, int64_t value)
{
    const kevo__option *o = kevo__option_at(t, opt);
    if (!o)
        return NULL;
    switch (o->kind) {
    case KEVO__OPTION_BOOL: return json_boolean(value != 0);
    case KEVO__OPTION_REAL: return json_real((double)value);
    default: return json_integer((json_int_t)value);
    }
}

json_t *kevo__option_json_real(const kevo__option_table *t, int opt,
                               double value)
{
    const kevo__option *o = kevo__option_at(t, opt);
    if (!o)
        return NULL;
    if (o->kind == KEVO__OPTION_REAL)
        return json_real(value);
    return kevo__option_json(t, opt, (int64_t)value);
}

/* The JSON value v of option o, type-checked by its kind: in *iout for
 * an integer or boolean option, and in *out as a double for every kind. */
static kevo_status read_value(const kevo__option *o, const json_t *v,
                              double *out, int64_t *iout, kevo_error *err)
{
    const char *want = NULL;
    switch (o->kind) {
    case KEVO__OPTION_BOOL:
        if (json_is_boolean(v))
            *iout = json_is_true(v);
        else
            want = "true or false";
        *out = (double)*iout;
        break;
    case KEVO__OPTION_REAL:
        if (json_is_number(v))
            *out = json_number_value(v);
        else
            want = "a number";
        break;
    default:
        if (json_is_integer(v)) {
            *iout = json_integer_value(v);
            *out = (double)*iout;
        } else {
            want = "an integer";
        }
    }
    if (want)
        return kevo__error_set(err, KEVO_EINVALID,
                               "option %s: expected %s, found %s", o->name,
                               want, kevo__json_type_name(v));
    return KEVO_OK;
}

kevo_status kevo__option_read(const kevo__option_table *t, int opt,
                              const json_t *obj, int64_t *out, kevo_error *err)
{
    const kevo__option *o = kevo__option_at(t, opt);
    if (!o || o->kind == KEVO__OPTION_REAL)
        return kevo__error_set(err, KEVO_EINVAL, "no integer %s option %d",
                               t->object, opt);
    const json_t *v = obj ? json_object_get(obj, o->name) : NULL;
    if (!v) {
        *out = o->def;
        return KEVO_OK;
    }
    double x = 0;
    int64_t i = 0;
    kevo_status rc = read_value(o, v, &x, &i, err);
    if (rc == KEVO_OK)
        rc = kevo__option_check(t, opt, i, false, err);
    if (rc == KEVO_OK)
        *out = i;
    return rc;
}

kevo_status kevo__option_read_real(const kevo__option_table *t, int opt,
                                   const json_t *obj, double *out,
                                   kevo_error *err)
{
    const kevo__option *o = kevo__option_at(t, opt);
    if (!o)
        return kevo__error_set(err, KEVO_EINVAL, "no %s option %d", t->object,
                               opt);
    const json_t *v = obj ? json_object_get(obj, o->name) : NULL;
    if (!v)
        return kevo__option_bounds_real(t, opt, NULL, NULL, out);
    double x = 0;
    int64_t i = 0;
    kevo_status rc = read_value(o, v, &x, &i, err);
    if (rc == KEVO_OK)
        rc = o->kind == KEVO__OPTION_REAL
                 ? kevo__option_check_real(t, opt, x, false, err)
                 : kevo__option_check(t, opt, i, false, err);
    if (rc == KEVO_OK)
        *out = x;
    return rc;
}
