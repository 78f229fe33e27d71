/*
 * fuzz-expr.c: the expression parser and evaluator on arbitrary bytes.
 * Whatever the input, parsing either fails cleanly or gives an expression
 * that evaluates (or fails cleanly) over a fixed set of variables.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kevo.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    kevo_error err;
    kevo_error_init(&err);
    kevo_expr *e = NULL;
    if (kevo_expr_parse(text, &e, &err) == KEVO_OK) {
        kevo_vars *vars = kevo_vars_new();
        if (vars) {
            kevo_vars_set(vars, "n", 1000003);
            kevo_vars_set(vars, "BLOCK", 256);
            kevo_vars_set(vars, "zero", 0);
            kevo_vars_set(vars, "big", INT64_MAX);
            kevo_vars_set(vars, "small", INT64_MIN);
            int64_t v;
            kevo_error_init(&err);
            kevo_expr_eval(e, vars, &v, &err);
            for (size_t i = 0; i < kevo_expr_var_count(e); i++) {
                if (!kevo_expr_var_name(e, i))
                    abort();
            }
            if (strcmp(kevo_expr_text(e), text) != 0)
                abort();
            kevo_vars_free(vars);
        }
        kevo_expr_free(e);
    } else if (e != NULL || err.code == KEVO_OK || err.text[0] == '\0') {
        abort(); /* a failure must say why and leave nothing behind */
    }
    free(text);
    return 0;
}
