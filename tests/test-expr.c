/*
 * test-expr.c: integer expressions: syntax, precedence, functions,
 * checked arithmetic, and errors that name the column.
 */
#include "config.h"

#include "core/kevo_private.h"
#include "tap.h"

static kevo_vars *vars;

/* Evaluates text; checks the status and, on success, the value. */
static void check(const char *text, kevo_status want, int64_t value)
{
    kevo_error err;
    kevo_error_init(&err);
    int64_t got = -12345;
    kevo_status rc = kevo_expr_eval_string(text, vars, &got, &err);
    if (want == KEVO_OK) {
        is_int(rc, KEVO_OK, "'%s' evaluates", text);
        if (rc != KEVO_OK)
            diag("%s", err.text);
        is_int(got, value, "'%s' = %lld", text, (long long)value);
    } else {
        is_int(rc, want, "'%s' fails with %s", text, kevo_strerror(want));
        is_int(got, -12345, "'%s' leaves the result alone", text);
    }
}

/* Checks the failure of text: code, column and a piece of the message. */
static void check_error(const char *text, kevo_status want, int column,
                        const char *needle)
{
    kevo_error err;
    kevo_error_init(&err);
    int64_t got;
    kevo_status rc = kevo_expr_eval_string(text, vars, &got, &err);
    is_int(rc, want, "'%s': %s", text, kevo_strerror(want));
    is_int(err.column, column, "'%s': column %d", text, column);
    like_str(err.text, needle, "'%s': message", text);
}

static void test_values(void)
{
    check("42", KEVO_OK, 42);
    check("0x1F", KEVO_OK, 31);
    check("9223372036854775807", KEVO_OK, INT64_MAX);
    check("1 + 2 * 3", KEVO_OK, 7);
    check("(1 + 2) * 3", KEVO_OK, 9);
    check("10 - 4 - 3", KEVO_OK, 3);
    check("100 / 10 / 5", KEVO_OK, 2);
    check("-7 / 2", KEVO_OK, -3);
    check("-7 % 2", KEVO_OK, -1);
    check("7 % -2", KEVO_OK, 1);
    check("--5", KEVO_OK, 5);
    check("-+-5", KEVO_OK, 5);
    check("!0 + !7", KEVO_OK, 1);
    check("rows * cols", KEVO_OK, 8192LL * 4096);
    check("ceil_div(rows * cols, BLOCK * 4)", KEVO_OK, 32768);
    check("ceil_div(1000001, 256)", KEVO_OK, 3907);
    check("ceil_div(-7, 2)", KEVO_OK, -3);
    check("ceil_div(7, -2)", KEVO_OK, -3);
    check("ceil_div(-7, -2)", KEVO_OK, 4);
    check("ceil_div(6, 3)", KEVO_OK, 2);
    check("round_up(1000, 256)", KEVO_OK, 1024);
    check("round_up(1024, 256)", KEVO_OK, 1024);
    check("min(3, 1, 2)", KEVO_OK, 1);
    check("max(3, 9, 2, 8)", KEVO_OK, 9);
    check("abs(-12)", KEVO_OK, 12);
    check("1 < 2", KEVO_OK, 1);
    check("2 <= 1", KEVO_OK, 0);
    check("3 > 2 && 2 >= 2", KEVO_OK, 1);
    check("1 == 2 || 3 != 3", KEVO_OK, 0);
    check("BLOCK % 32 == 0", KEVO_OK, 1);
    check("rows > 4096 ? 2 : 1", KEVO_OK, 2);
    check("0 ? 1 : 0 ? 2 : 3", KEVO_OK, 3);
    check("1 ? 0 ? 5 : 6 : 7", KEVO_OK, 6);
    check("1 + 2 < 4", KEVO_OK, 1);

    kevo_error err;
    kevo_error_init(&err);
    int64_t v = 0;
    is_int(kevo_expr_eval_string("  \t rows\n\r", vars, &v, &err), KEVO_OK,
           "white space around a name");
    is_int(v, 8192, "white space value");
}

static void test_short_circuit(void)
{
    /* The side not taken is never evaluated, so it cannot fail. */
    check("0 && 1 / 0", KEVO_OK, 0);
    check("1 || 1 / 0", KEVO_OK, 1);
    check("1 ? 5 : 1 / 0", KEVO_OK, 5);
    check("0 ? missing : 6", KEVO_OK, 6);
    check("1 && 1 / 0", KEVO_EDIVZERO, 0);
}

static void test_errors(void)
{
    check_error("rows / (cols - 4096)", KEVO_EDIVZERO, 6, "division by zero");
    check_error("rows % 0", KEVO_EDIVZERO, 6, "remainder by zero");
    check_error("ceil_div(rows, 0)", KEVO_EDIVZERO, 1, "division by zero");
    check_error("9223372036854775807 + 1", KEVO_EOVERFLOW, 21, "overflows");
    check_error("-9223372036854775807 - 2", KEVO_EOVERFLOW, 22, "overflows");
    check_error("rows * rows * rows * rows * rows", KEVO_EOVERFLOW, 27,
                "overflows");
    check_error("(-9223372036854775807 - 1) / -1", KEVO_EOVERFLOW, 28,
                "overflows");
    check_error("-(-9223372036854775807 - 1)", KEVO_EOVERFLOW, 1, "overflows");
    check_error("abs(-9223372036854775807 - 1)", KEVO_EOVERFLOW, 1,
                "overflows");
    check_error("round_up(9223372036854775807, 2)", KEVO_EOVERFLOW, 1,
                "overflows");
    check_error("9223372036854775808", KEVO_EOVERFLOW, 1, "64 bits");
    check_error("rows * colz", KEVO_EUNDEFINED, 8, "'colz' has no value");
    check_error("rows +", KEVO_EPARSE, 7, "found the end");
    check_error("", KEVO_EPARSE, 1, "empty");
    check_error("   ", KEVO_EPARSE, 4, "empty");
    check_error("rows cols", KEVO_EPARSE, 6, "expected an operator");
    check_error("(rows", KEVO_EPARSE, 6, "expected ')'");
    check_error("rows)", KEVO_EPARSE, 5, "expected an operator");
    check_error("rows = 4", KEVO_EPARSE, 6, "use '=='");
    check_error("rows & 4", KEVO_EPARSE, 6, "use '&&'");
    check_error("rows | 4", KEVO_EPARSE, 6, "use '||'");
    check_error("rows $ 4", KEVO_EPARSE, 6, "unexpected character '$'");
    check_error("1 < 2 < 3", KEVO_EPARSE, 7, "do not chain");
    check_error("sqrt(4)", KEVO_EPARSE, 1, "unknown function 'sqrt'");
    check_error("min(4)", KEVO_EPARSE, 1, "at least 2 arguments");
    check_error("abs(1, 2)", KEVO_EPARSE, 1, "takes 1 argument, not 2");
    check_error("ceil_div(1)", KEVO_EPARSE, 1, "takes 2 arguments, not 1");
    check_error("min(1, 2", KEVO_EPARSE, 9, "expected ',' or ')'");
    check_error("12abc", KEVO_EPARSE, 3, "after a number");
    check_error("0x", KEVO_EPARSE, 1, "needs digits");
    check_error("1 ? 2", KEVO_EPARSE, 6, "expected ':'");
    check_error("rows \x01", KEVO_EPARSE, 6, "unexpected byte 0x01");
}

static void test_limits(void)
{
    kevo_buf b = {0};
    for (int i = 0; i < 200; i++)
        kevo__buf_puts(&b, "(");
    kevo__buf_puts(&b, "1");
    for (int i = 0; i < 200; i++)
        kevo__buf_puts(&b, ")");
    char *deep = kevo__buf_take(&b);
    check_error(deep, KEVO_EPARSE, 129, "nested deeper");
    free(deep);

    for (int i = 0; i < 2000; i++)
        kevo__buf_puts(&b, "1+");
    kevo__buf_puts(&b, "1");
    char *chain = kevo__buf_take(&b);
    kevo_error err;
    kevo_error_init(&err);
    int64_t v;
    is_int(kevo_expr_eval_string(chain, vars, &v, &err), KEVO_EPARSE,
           "a 2000-term chain is refused");
    like_str(err.text, "nested deeper than 512", "chain message");
    free(chain);

    for (int i = 0; i < 250; i++)
        kevo__buf_puts(&b, "1+");
    kevo__buf_puts(&b, "1");
    char *ok_chain = kevo__buf_take(&b);
    check(ok_chain, KEVO_OK, 251);
    free(ok_chain);

    char *huge = malloc(70000);
    memset(huge, '1', 69999);
    huge[69999] = '\0';
    kevo_error_init(&err);
    is_int(kevo_expr_eval_string(huge, vars, &v, &err), KEVO_ELIMIT,
           "over-long text refused");
    free(huge);

    char longname[80];
    memset(longname, 'x', 70);
    longname[70] = '\0';
    check_error(longname, KEVO_EPARSE, 1, "longer than 63");
}

static void test_api(void)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_expr *e = NULL;
    is_int(kevo_expr_parse("max(rows, BLOCK) * rows + cols", &e, &err), KEVO_OK,
           "parse");
    is_str(kevo_expr_text(e), "max(rows, BLOCK) * rows + cols", "text kept");
    is_uint(kevo_expr_var_count(e), 3, "three distinct names");
    is_str(kevo_expr_var_name(e, 0), "rows", "first name");
    is_str(kevo_expr_var_name(e, 1), "BLOCK", "second name");
    is_str(kevo_expr_var_name(e, 2), "cols", "third name");
    ok(kevo_expr_var_name(e, 3) == NULL, "past the end");
    int64_t v;
    is_int(kevo_expr_eval(e, vars, &v, &err), KEVO_OK, "eval");
    is_int(v, 8192LL * 8192 + 4096, "value");
    is_int(kevo_expr_eval(e, NULL, &v, &err), KEVO_EUNDEFINED,
           "NULL vars: names undefined");
    kevo_expr *dup = kevo__expr_copy(e);
    kevo_expr_free(e);
    ok(dup != NULL, "copy");
    is_str(kevo_expr_text(dup), "max(rows, BLOCK) * rows + cols",
           "copy keeps the text");
    is_uint(kevo_expr_var_count(dup), 3, "copy keeps the names");
    v = 0;
    is_int(kevo_expr_eval(dup, vars, &v, &err), KEVO_OK,
           "copy evaluates after the original is freed");
    is_int(v, 8192LL * 8192 + 4096, "copy value");
    kevo_expr_free(dup);

    kevo_expr *c = NULL;
    kevo_error_init(&err);
    is_int(kevo_expr_eval_string("6 * 7", NULL, &v, &err), KEVO_OK,
           "constant with NULL vars");
    is_int(v, 42, "constant value");
    is_int(kevo_expr_parse(NULL, &c, &err), KEVO_EINVAL, "NULL text");
    ok(c == NULL, "out cleared");
    kevo_error_init(&err);
    c = (kevo_expr *)&err; /* garbage the call must clear */
    is_int(kevo_expr_parse("1 +", &c, &err), KEVO_EPARSE, "bad text");
    ok(c == NULL, "out cleared on failure");
    kevo_expr_free(NULL);

    /* The message quotes a long expression cut to a readable length. */
    kevo_buf b = {0};
    for (int i = 0; i < 100; i++)
        kevo__buf_puts(&b, "rows + ");
    kevo__buf_puts(&b, "nothere");
    char *text = kevo__buf_take(&b);
    kevo_error_init(&err);
    kevo_expr_eval_string(text, vars, &v, &err);
    like_str(err.text, "...', column 701: 'nothere' has no value",
             "long expression quoted with an ellipsis");
    free(text);
}

int main(void)
{
    vars = kevo_vars_new();
    kevo_vars_set(vars, "rows", 8192);
    kevo_vars_set(vars, "cols", 4096);
    kevo_vars_set(vars, "BLOCK", 256);
    test_values();
    test_short_circuit();
    test_errors();
    test_limits();
    test_api();
    kevo_vars_free(vars);
    return done_testing();
}
