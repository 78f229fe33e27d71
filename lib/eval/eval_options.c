/*
 * eval_options.c: the evaluator's options: the public queries over its
 * option table (proc/eval_options.c) and the typed setters and getters.
 */
#include "config.h"

#include <stdlib.h>

#include "evaluator_private.h"
#include "fitness/fitness.h"

#define TABLE (&kevo__eval_options)

const char *kevo_eval_option_name(kevo_eval_option opt)
{
    return kevo__option_name(TABLE, (int)opt);
}

kevo_status kevo_eval_option_from_name(const char *name, kevo_eval_option *out)
{
    int i;
    kevo_status rc = kevo__option_find(TABLE, name, &i, NULL);
    if (rc == KEVO_OK && out)
        *out = (kevo_eval_option)i;
    return rc;
}

kevo_status kevo_eval_option_bounds(kevo_eval_option opt, int64_t *lo,
                                    int64_t *hi, int64_t *def)
{
    return kevo__option_bounds(TABLE, (int)opt, lo, hi, def);
}

bool kevo_eval_option_live(kevo_eval_option opt)
{
    return kevo__option_live(TABLE, (int)opt);
}

kevo_status kevo_evaluator_set_int(kevo_evaluator *ev, kevo_eval_option opt,
                                   int64_t value, kevo_error *err)
{
    kevo_status rc =
        kevo__option_check(TABLE, (int)opt, value, ev->started, err);
    if (rc == KEVO_OK)
        ev->opt[opt] = value;
    return rc;
}

int64_t kevo_evaluator_get_int(const kevo_evaluator *ev, kevo_eval_option opt)
{
    if (!kevo__option_at(TABLE, (int)opt))
        return -1;
    return ev->opt[opt];
}

kevo_status kevo_evaluator_set_string(kevo_evaluator *ev,
                                      kevo_eval_string_option opt,
                                      const char *value, kevo_error *err)
{
    if ((unsigned)opt >= KEVO__EV_NSTRS)
        return kevo__error_set(err, KEVO_EINVAL,
                               "no evaluator string option %d", (int)opt);
    if (ev->started)
        return kevo__error_set(err, KEVO_ESTATE,
                               "string options cannot change once the "
                               "evaluator has started");
    if (opt == KEVO_EVAL_FITNESS && value && !kevo__fitness_find(value)) {
        kevo_buf names = {0};
        for (size_t i = 0; kevo__fitness_at(i); i++)
            kevo__buf_printf(&names, "%s%s", i ? ", " : "",
                             kevo__fitness_at(i)->name);
        kevo_status rc = kevo__error_set(
            err, KEVO_ENOENT, "no fitness function \"%s\" (known: %s)", value,
            names.data ? names.data : "");
        kevo__buf_free(&names);
        return rc;
    }
    if (opt == KEVO_EVAL_DEVICES) {
        bool all;
        size_t n;
        kevo_status rc = kevo__ev_devices_parse(value, &all, NULL, &n, err);
        if (rc != KEVO_OK)
            return rc;
    }
    char *copy = NULL;
    if (value && !(copy = kevo__strdup(value)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    free(ev->str[opt]);
    ev->str[opt] = copy;
    return KEVO_OK;
}
