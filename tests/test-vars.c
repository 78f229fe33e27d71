/*
 * test-vars.c: named integer sets.
 */
#include "config.h"

#include "core/kevo_private.h"
#include "tap.h"

int main(void)
{
    kevo_vars *v = kevo_vars_new();
    ok(v != NULL, "new");
    is_uint(kevo_vars_count(v), 0, "empty");
    is_int(kevo_vars_set(v, "rows", 8192), KEVO_OK, "set rows");
    is_int(kevo_vars_set(v, "cols", 4096), KEVO_OK, "set cols");
    is_int(kevo_vars_set(v, "_x9", -5), KEVO_OK, "underscore and digits");
    is_int(kevo_vars_set(v, "9x", 1), KEVO_EINVAL, "leading digit rejected");
    is_int(kevo_vars_set(v, "a-b", 1), KEVO_EINVAL, "dash rejected");
    is_int(kevo_vars_set(v, "", 1), KEVO_EINVAL, "empty name rejected");
    is_int(kevo_vars_set(v, NULL, 1), KEVO_EINVAL, "NULL name rejected");
    char longname[80];
    memset(longname, 'a', 64);
    longname[64] = '\0';
    is_int(kevo_vars_set(v, longname, 1), KEVO_EINVAL, "64 chars rejected");
    longname[63] = '\0';
    is_int(kevo_vars_set(v, longname, 1), KEVO_OK, "63 chars accepted");
    kevo_vars_unset(v, longname);

    int64_t x = 0;
    is_int(kevo_vars_get(v, "cols", &x), KEVO_OK, "get cols");
    is_int(x, 4096, "cols value");
    is_int(kevo_vars_get(v, "nope", &x), KEVO_ENOENT, "missing name");
    is_int(x, 4096, "missing leaves value");
    is_int(kevo_vars_get(v, "rows", NULL), KEVO_OK, "get with NULL value");

    is_int(kevo_vars_set(v, "rows", 1), KEVO_OK, "overwrite rows");
    is_str(kevo_vars_name(v, 0), "rows", "overwrite keeps position");
    is_int(kevo_vars_value(v, 0), 1, "overwrite changes value");
    is_uint(kevo_vars_count(v), 3, "count");
    ok(kevo_vars_name(v, 3) == NULL, "name past end");
    is_int(kevo_vars_value(v, 3), 0, "value past end");

    kevo_vars *c = kevo_vars_copy(v);
    ok(c && kevo_vars_count(c) == 3, "copy count");
    is_int(kevo_vars_unset(v, "cols"), KEVO_OK, "unset");
    is_int(kevo_vars_unset(v, "cols"), KEVO_ENOENT, "unset twice");
    is_str(kevo_vars_name(v, 1), "_x9", "unset keeps order");
    is_int(kevo_vars_get(c, "cols", &x), KEVO_OK, "copy independent");

    kevo_vars *d = kevo_vars_new();
    kevo_vars_set(d, "cols", 7);
    kevo_vars_set(d, "zeta", 9);
    is_int(kevo_vars_update(c, d), KEVO_OK, "update");
    kevo_vars_get(c, "cols", &x);
    is_int(x, 7, "update overrides");
    is_str(kevo_vars_name(c, 3), "zeta", "update appends new names");
    is_int(kevo_vars_update(c, NULL), KEVO_OK, "update from NULL");
    is_int(kevo_vars_update(NULL, d), KEVO_EINVAL, "update into NULL");

    /* Many names: growth beyond the first allocation. */
    for (int i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", i);
        kevo_vars_set(d, name, i);
    }
    kevo_vars_get(d, "v199", &x);
    is_int(x, 199, "200 names");
    kevo_vars_clear(d);
    is_uint(kevo_vars_count(d), 0, "clear");

    kevo_vars *e = kevo_vars_copy(NULL);
    ok(e && kevo_vars_count(e) == 0, "copy of NULL is empty");
    kevo_vars_free(e);
    kevo_vars_free(d);
    kevo_vars_free(c);
    kevo_vars_free(v);
    kevo_vars_free(NULL);
    ok(1, "free NULL");
    return done_testing();
}
