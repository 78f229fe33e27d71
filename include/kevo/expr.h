/*
 * kevo/expr.h: integer expressions over named variables.
 *
 * Element counts, launch geometry, cost models and parameter constraints are
 * all expressions such as "ceil_div(rows*cols, BLOCK*VEC)". The language:
 *
 *   literals     decimal or 0x hexadecimal integers
 *   names        [A-Za-z_][A-Za-z0-9_]*, looked up in a kevo_vars
 *   arithmetic   + - * / % and unary - + with C precedence; / and % round
 *                toward zero as in C
 *   functions    min(a, b, ...), max(a, b, ...), ceil_div(a, b),
 *                round_up(a, b) (a rounded up to a multiple of b), abs(a)
 *   comparisons  < <= > >= == != (1 or 0; not chained)
 *   logic        ! && || (short-circuit), and c ? a : b
 *
 * All arithmetic is on signed 64-bit integers. Overflow, division or
 * remainder by zero and names without a value are errors that name the
 * expression and the 1-based column of the offending operator or name.
 */
#ifndef KEVO_EXPR_H
#define KEVO_EXPR_H

#include <kevo/error.h>
#include <kevo/vars.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_expr kevo_expr;

/*
 * kevo_expr_parse: parses text into a new expression stored in *out. The
 * text is copied. Returns KEVO_OK, KEVO_EPARSE with the column of the first
 * bad token in err, KEVO_EINVAL for NULL arguments, or KEVO_ENOMEM. On
 * failure *out is set to NULL.
 */
KEVO_API kevo_status kevo_expr_parse(const char *text, kevo_expr **out,
                                     kevo_error *err);

/* kevo_expr_free: frees an expression. NULL does nothing. */
KEVO_API void kevo_expr_free(kevo_expr *expr);

/*
 * kevo_expr_text: the text the expression was parsed from, borrowed from the
 * expression.
 */
KEVO_API const char *kevo_expr_text(const kevo_expr *expr);

/*
 * kevo_expr_eval: evaluates the expression with the values in vars (which
 * may be NULL when the expression names no variable) and stores the result
 * in *value. Returns KEVO_OK, KEVO_EUNDEFINED for a name without a value,
 * KEVO_EOVERFLOW or KEVO_EDIVZERO; err then names the expression and the
 * column. *value is untouched on failure.
 */
KEVO_API kevo_status kevo_expr_eval(const kevo_expr *expr,
                                    const kevo_vars *vars, int64_t *value,
                                    kevo_error *err);

/*
 * kevo_expr_eval_string: parses and evaluates text in one call, as
 * kevo_expr_parse() and kevo_expr_eval() do, with their errors.
 */
KEVO_API kevo_status kevo_expr_eval_string(const char *text,
                                           const kevo_vars *vars,
                                           int64_t *value, kevo_error *err);

/*
 * kevo_expr_var_count: how many distinct names the expression mentions
 * (function names excluded).
 */
KEVO_API size_t kevo_expr_var_count(const kevo_expr *expr);

/*
 * kevo_expr_var_name: the i-th distinct name in order of first mention,
 * borrowed from the expression; NULL when i is out of range.
 */
KEVO_API const char *kevo_expr_var_name(const kevo_expr *expr, size_t i);

#ifdef __cplusplus
}
#endif

#endif
