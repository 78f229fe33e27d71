/*
 * expr.c: integer expressions over named variables. A recursive-descent
 * parser builds a tree of nodes in one array; evaluation walks it with
 * checked 64-bit arithmetic. Every node remembers the column of its
 * operator or name, so errors point at the culprit.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kevo_private.h"

/* Deeper nesting than this is refused, so that neither the parser nor the
 * evaluator can exhaust the stack on hostile input: MAX_DEPTH bounds the
 * parser's recursion, MAX_HEIGHT the tree's (a long chain such as
 * a+a+...+a parses in a loop but evaluates recursively). */
#define MAX_DEPTH 128
#define MAX_HEIGHT 512
/* Longer texts are refused. */
#define MAX_TEXT 65536

typedef enum node_kind {
    N_NUM,
    N_VAR,
    N_NEG,
    N_NOT,
    N_ADD,
    N_SUB,
    N_MUL,
    N_DIV,
    N_MOD,
    N_LT,
    N_LE,
    N_GT,
    N_GE,
    N_EQ,
    N_NE,
    N_AND,
    N_OR,
    N_COND,
    N_MIN,
    N_MAX,
    N_CEIL_DIV,
    N_ROUND_UP,
    N_ABS
} node_kind;

typedef struct node {
    node_kind kind;
    int column;  /* 1-based column of the operator, name or number */
    int a, b, c; /* child indices, -1 when unused */
    int64_t num; /* N_NUM: the value; N_VAR: the variable's index */
    int height;  /* 1 for a leaf */
} node;

struct kevo_expr {
    char *text;
    node *nodes;
    size_t count, cap;
    int root;
    char **vars; /* distinct names in order of first mention */
    size_t nvars;
};

/* ---- parsing ------------------------------------------------------------ */

typedef enum tok_kind {
    T_END,
    T_NUM,
    T_NAME,
    T_LPAREN,
    T_RPAREN,
    T_COMMA,
    T_PLUS,
    T_MINUS,
    T_STAR,
    T_SLASH,
    T_PERCENT,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_EQ,
    T_NE,
    T_NOT,
    T_AND,
    T_OR,
    T_QUESTION,
    T_COLON
} tok_kind;

typedef struct parser {
    kevo_expr *e;
    const char *s;
    size_t pos;  /* start of the current token */
    size_t next; /* just past it */
    tok_kind tok;
    int64_t num;     /* T_NUM */
    size_t name_len; /* T_NAME */
    int depth;
    kevo_error *err;
    kevo_status rc;
} parser;

/* The expression's text as it appears in messages: cut to a readable
 * length. */
static void quote_text(const char *text, char *out, size_t size)
{
    size_t n = strlen(text);
    if (n + 1 <= size)
        memcpy(out, text, n + 1);
    else
        snprintf(out, size, "%.*s...", (int)(size - 4), text);
}

static kevo_status fail_at(kevo_error *err, kevo_status code, const char *text,
                           int column, const char *fmt, ...) KEVO_PRINTF(5, 6);

static kevo_status fail_at(kevo_error *err, kevo_status code, const char *text,
                           int column, const char *fmt, ...)
{
    char msg[512], quoted[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    quote_text(text, quoted, sizeof quoted);
    return kevo__error_set_at(err, code, NULL, 0, column,
                              "expression '%s', column %d: %s", quoted, column,
                              msg);
}

static bool is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *token_desc(const parser *p, char *buf, size_t size)
{
    if (p->tok == T_END)
        return "the end";
    size_t n = p->next - p->pos;
    if (n > 32)
        n = 32;
    snprintf(buf, size, "'%.*s'", (int)n, p->s + p->pos);
    return buf;
}

static bool perr(parser *p, kevo_status code, size_t pos, const char *fmt, ...)
    KEVO_PRINTF(4, 5);

static bool perr(parser *p, kevo_status code, size_t pos, const char *fmt, ...)
{
    if (p->rc != KEVO_OK)
        return false;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->rc = fail_at(p->err, code, p->s, (int)pos + 1, "%s", msg);
    return false;
}

static bool lex(parser *p)
{
    size_t i = p->next;
    while (p->s[i] == ' ' || p->s[i] == '\t' || p->s[i] == '\n' ||
           p->s[i] == '\r')
        i++;
    p->pos = i;
    char c = p->s[i];
    if (c == '\0') {
        p->tok = T_END;
        p->next = i;
        return true;
    }
    if (is_digit(c)) {
        int base = 10;
        size_t j = i;
        if (c == '0' && (p->s[i + 1] == 'x' || p->s[i + 1] == 'X')) {
            base = 16;
            j += 2;
        }
        size_t start = j;
        uint64_t v = 0;
        for (;; j++) {
            char d = p->s[j];
            int digit;
            if (is_digit(d))
                digit = d - '0';
            else if (base == 16 && d >= 'a' && d <= 'f')
                digit = d - 'a' + 10;
            else if (base == 16 && d >= 'A' && d <= 'F')
                digit = d - 'A' + 10;
            else
                break;
            if (v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)digit) /
                        (uint64_t)base) {
                p->next = j;
                return perr(p, KEVO_EOVERFLOW, i,
                            "the number does not fit in 64 bits");
            }
            v = v * (uint64_t)base + (uint64_t)digit;
        }
        if (j == start)
            return perr(p, KEVO_EPARSE, i, "a hexadecimal number needs digits");
        if (is_name_char(p->s[j]))
            return perr(p, KEVO_EPARSE, j, "unexpected '%c' after a number",
                        p->s[j]);
        p->tok = T_NUM;
        p->num = (int64_t)v;
        p->next = j;
        return true;
    }
    if (is_name_start(c)) {
        size_t j = i;
        while (is_name_char(p->s[j]))
            j++;
        if (j - i > KEVO__IDENT_MAX)
            return perr(p, KEVO_EPARSE, i, "a name longer than %d characters",
                        KEVO__IDENT_MAX);
        p->tok = T_NAME;
        p->name_len = j - i;
        p->next = j;
        return true;
    }
    char c2 = p->s[i + 1];
    p->next = i + 1;
    switch (c) {
    case '(': p->tok = T_LPAREN; return true;
    case ')': p->tok = T_RPAREN; return true;
    case ',': p->tok = T_COMMA; return true;
    case '+': p->tok = T_PLUS; return true;
    case '-': p->tok = T_MINUS; return true;
    case '*': p->tok = T_STAR; return true;
    case '/': p->tok = T_SLASH; return true;
    case '%': p->tok = T_PERCENT; return true;
    case '?': p->tok = T_QUESTION; return true;
    case ':': p->tok = T_COLON; return true;
    case '<':
        p->tok = c2 == '=' ? T_LE : T_LT;
        p->next += c2 == '=';
        return true;
    case '>':
        p->tok = c2 == '=' ? T_GE : T_GT;
        p->next += c2 == '=';
        return true;
    case '=':
        if (c2 == '=') {
            p->tok = T_EQ;
            p->next++;
            return true;
        }
        return perr(p, KEVO_EPARSE, i, "'=' is not an operator (use '==')");
    case '!':
        p->tok = c2 == '=' ? T_NE : T_NOT;
        p->next += c2 == '=';
        return true;
    case '&':
        if (c2 == '&') {
            p->tok = T_AND;
            p->next++;
            return true;
        }
        return perr(p, KEVO_EPARSE, i, "'&' is not an operator (use '&&')");
    case '|':
        if (c2 == '|') {
            p->tok = T_OR;
            p->next++;
            return true;
        }
        return perr(p, KEVO_EPARSE, i, "'|' is not an operator (use '||')");
    default:
        if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
            return perr(p, KEVO_EPARSE, i, "unexpected byte 0x%02x",
                        (unsigned char)c);
        return perr(p, KEVO_EPARSE, i, "unexpected character '%c'", c);
    }
}

static int add_node(parser *p, node_kind kind, size_t pos, int a, int b, int c,
                    int64_t num)
{
    kevo_expr *e = p->e;
    if (e->count == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 16;
        node *nodes = realloc(e->nodes, cap * sizeof(node));
        if (!nodes) {
            perr(p, KEVO_ENOMEM, pos, "out of memory");
            return -1;
        }
        e->nodes = nodes;
        e->cap = cap;
    }
    int height = 0;
    int kids[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        if (kids[k] >= 0 && e->nodes[kids[k]].height > height)
            height = e->nodes[kids[k]].height;
    }
    if (++height > MAX_HEIGHT) {
        perr(p, KEVO_EPARSE, pos, "nested deeper than %d levels", MAX_HEIGHT);
        return -1;
    }
    e->nodes[e->count] = (node){kind, (int)pos + 1, a, b, c, num, height};
    return (int)e->count++;
}

static int var_index(parser *p, const char *name, size_t len, size_t pos)
{
    kevo_expr *e = p->e;
    for (size_t i = 0; i < e->nvars; i++) {
        if (strlen(e->vars[i]) == len && memcmp(e->vars[i], name, len) == 0)
            return (int)i;
    }
    char **vars = realloc(e->vars, (e->nvars + 1) * sizeof(char *));
    if (!vars) {
        perr(p, KEVO_ENOMEM, pos, "out of memory");
        return -1;
    }
    e->vars = vars;
    e->vars[e->nvars] = kevo__strndup(name, len);
    if (!e->vars[e->nvars]) {
        perr(p, KEVO_ENOMEM, pos, "out of memory");
        return -1;
    }
    return (int)e->nvars++;
}

static int parse_cond(parser *p);

static bool expect(parser *p, tok_kind tok, const char *what)
{
    if (p->tok != tok) {
        char buf[48];
        return perr(p, KEVO_EPARSE, p->pos, "expected %s, found %s", what,
                    token_desc(p, buf, sizeof buf));
    }
    return lex(p);
}

static const struct {
    const char *name;
    node_kind kind;
    int min_args, max_args; /* max_args 0: any number >= min_args */
} functions[] = {
    {"min", N_MIN, 2, 0},           {"max", N_MAX, 2, 0},
    {"ceil_div", N_CEIL_DIV, 2, 2}, {"round_up", N_ROUND_UP, 2, 2},
    {"abs", N_ABS, 1, 1},
};

static int parse_call(parser *p, size_t name_pos, size_t name_len)
{
    const char *name = p->s + name_pos;
    int f = -1;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(functions); i++) {
        if (strlen(functions[i].name) == name_len &&
            memcmp(functions[i].name, name, name_len) == 0)
            f = (int)i;
    }
    if (f < 0) {
        perr(p, KEVO_EPARSE, name_pos,
             "unknown function '%.*s' (known: min, max, ceil_div, round_up, "
             "abs)",
             (int)name_len, name);
        return -1;
    }
    if (!lex(p)) /* past '(' */
        return -1;
    int args[2] = {-1, -1};
    int nargs = 0, acc = -1;
    for (;;) {
        int arg = parse_cond(p);
        if (arg < 0)
            return -1;
        nargs++;
        if (functions[f].max_args == 0) {
            /* min and max fold left: min(a, b, c) = min(min(a, b), c). */
            if (acc < 0)
                acc = arg;
            else if ((acc = add_node(p, functions[f].kind, name_pos, acc, arg,
                                     -1, 0)) < 0)
                return -1;
        } else if (nargs <= 2) {
            args[nargs - 1] = arg;
        }
        if (p->tok != T_COMMA)
            break;
        if (!lex(p))
            return -1;
    }
    if (!expect(p, T_RPAREN, "',' or ')'"))
        return -1;
    int lo = functions[f].min_args, hi = functions[f].max_args;
    if (nargs < lo || (hi && nargs > hi)) {
        perr(p, KEVO_EPARSE, name_pos, "%s() takes %s%d argument%s, not %d",
             functions[f].name, hi ? "" : "at least ", hi ? hi : lo,
             (hi ? hi : lo) == 1 ? "" : "s", nargs);
        return -1;
    }
    if (functions[f].max_args == 0)
        return acc;
    return add_node(p, functions[f].kind, name_pos, args[0], args[1], -1, 0);
}

static int parse_primary(parser *p)
{
    char buf[48];
    size_t pos = p->pos;
    switch (p->tok) {
    case T_NUM: {
        int64_t v = p->num;
        if (!lex(p))
            return -1;
        return add_node(p, N_NUM, pos, -1, -1, -1, v);
    }
    case T_NAME: {
        size_t len = p->name_len;
        if (!lex(p))
            return -1;
        if (p->tok == T_LPAREN)
            return parse_call(p, pos, len);
        int v = var_index(p, p->s + pos, len, pos);
        if (v < 0)
            return -1;
        return add_node(p, N_VAR, pos, -1, -1, -1, v);
    }
    case T_LPAREN: {
        if (!lex(p))
            return -1;
        int inner = parse_cond(p);
        if (inner < 0)
            return -1;
        if (!expect(p, T_RPAREN, "')'"))
            return -1;
        return inner;
    }
    default:
        perr(p, KEVO_EPARSE, pos, "expected a number, a name or '(', found %s",
             token_desc(p, buf, sizeof buf));
        return -1;
    }
}

static int parse_unary(parser *p)
{
    size_t pos = p->pos;
    tok_kind t = p->tok;
    if (t == T_MINUS || t == T_PLUS || t == T_NOT) {
        if (++p->depth > MAX_DEPTH) {
            perr(p, KEVO_EPARSE, pos, "nested deeper than %d levels",
                 MAX_DEPTH);
            return -1;
        }
        if (!lex(p))
            return -1;
        int a = parse_unary(p);
        p->depth--;
        if (a < 0 || t == T_PLUS)
            return a;
        return add_node(p, t == T_MINUS ? N_NEG : N_NOT, pos, a, -1, -1, 0);
    }
    return parse_primary(p);
}

/* One level of left-associative binary operators: next (a tighter level)
 * separated by any of the n tokens toks, each making the node kinds[i]. */
static int parse_left(parser *p, int (*next)(parser *), const tok_kind *toks,
                      const node_kind *kinds, size_t n)
{
    int a = next(p);
    while (a >= 0) {
        size_t k = 0;
        while (k < n && p->tok != toks[k])
            k++;
        if (k == n)
            break;
        size_t pos = p->pos;
        if (!lex(p))
            return -1;
        int b = next(p);
        if (b < 0)
            return -1;
        a = add_node(p, kinds[k], pos, a, b, -1, 0);
    }
    return a;
}

static int parse_mul(parser *p)
{
    static const tok_kind toks[] = {T_STAR, T_SLASH, T_PERCENT};
    static const node_kind kinds[] = {N_MUL, N_DIV, N_MOD};
    return parse_left(p, parse_unary, toks, kinds, 3);
}

static int parse_add(parser *p)
{
    static const tok_kind toks[] = {T_PLUS, T_MINUS};
    static const node_kind kinds[] = {N_ADD, N_SUB};
    return parse_left(p, parse_mul, toks, kinds, 2);
}

static bool is_comparison(tok_kind t)
{
    return t == T_LT || t == T_LE || t == T_GT || t == T_GE || t == T_EQ ||
           t == T_NE;
}

static int parse_cmp(parser *p)
{
    int a = parse_add(p);
    if (a < 0 || !is_comparison(p->tok))
        return a;
    static const node_kind kinds[] = {
        [T_LT] = N_LT, [T_LE] = N_LE, [T_GT] = N_GT,
        [T_GE] = N_GE, [T_EQ] = N_EQ, [T_NE] = N_NE,
    };
    node_kind k = kinds[p->tok];
    size_t pos = p->pos;
    if (!lex(p))
        return -1;
    int b = parse_add(p);
    if (b < 0)
        return -1;
    if (is_comparison(p->tok)) {
        perr(p, KEVO_EPARSE, p->pos,
             "comparisons do not chain: write 'a < b && b < c'");
        return -1;
    }
    return add_node(p, k, pos, a, b, -1, 0);
}

static int parse_and(parser *p)
{
    static const tok_kind toks[] = {T_AND};
    static const node_kind kinds[] = {N_AND};
    return parse_left(p, parse_cmp, toks, kinds, 1);
}

static int parse_or(parser *p)
{
    static const tok_kind toks[] = {T_OR};
    static const node_kind kinds[] = {N_OR};
    return parse_left(p, parse_and, toks, kinds, 1);
}

/* cond := or ('?' cond ':' cond)? : the loosest binding, right to left. */
static int parse_cond(parser *p)
{
    if (++p->depth > MAX_DEPTH) {
        perr(p, KEVO_EPARSE, p->pos, "nested deeper than %d levels", MAX_DEPTH);
        return -1;
    }
    int c = parse_or(p);
    if (c >= 0 && p->tok == T_QUESTION) {
        size_t pos = p->pos;
        int a = -1, b = -1;
        if (lex(p) && (a = parse_cond(p)) >= 0 &&
            expect(p, T_COLON, "':' of '?:'") && (b = parse_cond(p)) >= 0)
            c = add_node(p, N_COND, pos, c, a, b, 0);
        else
            c = -1;
    }
    p->depth--;
    return c;
}

kevo_status kevo_expr_parse(const char *text, kevo_expr **out, kevo_error *err)
{
    if (out)
        *out = NULL;
    if (!text || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_expr_parse: NULL argument");
    size_t len = strlen(text);
    if (len > MAX_TEXT)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "expression of %zu bytes: the limit is %d", len,
                               MAX_TEXT);
    kevo_expr *e = calloc(1, sizeof *e);
    if (!e || !(e->text = kevo__strdup(text))) {
        free(e);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    parser p = {.e = e, .s = e->text, .err = err, .rc = KEVO_OK};
    int root = -1;
    if (lex(&p)) {
        if (p.tok == T_END)
            perr(&p, KEVO_EPARSE, p.pos, "the expression is empty");
        else if ((root = parse_cond(&p)) >= 0 && p.tok != T_END) {
            char buf[48];
            perr(&p, KEVO_EPARSE, p.pos,
                 "expected an operator or the end, found %s",
                 token_desc(&p, buf, sizeof buf));
        }
    }
    if (p.rc != KEVO_OK) {
        kevo_expr_free(e);
        return p.rc;
    }
    e->root = root;
    *out = e;
    return KEVO_OK;
}

void kevo_expr_free(kevo_expr *expr)
{
    if (!expr)
        return;
    for (size_t i = 0; i < expr->nvars; i++)
        free(expr->vars[i]);
    free(expr->vars);
    free(expr->nodes);
    free(expr->text);
    free(expr);
}

kevo_expr *kevo__expr_copy(const kevo_expr *expr)
{
    kevo_expr *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->root = expr->root;
    c->text = kevo__strdup(expr->text);
    c->nodes = malloc(expr->count * sizeof(node));
    c->vars = calloc(expr->nvars ? expr->nvars : 1, sizeof(char *));
    if (!c->text || !c->nodes || !c->vars)
        goto fail;
    memcpy(c->nodes, expr->nodes, expr->count * sizeof(node));
    c->count = c->cap = expr->count;
    for (; c->nvars < expr->nvars; c->nvars++) {
        if (!(c->vars[c->nvars] = kevo__strdup(expr->vars[c->nvars])))
            goto fail;
    }
    return c;
fail:
    kevo_expr_free(c);
    return NULL;
}

const char *kevo_expr_text(const kevo_expr *expr)
{
    return expr ? expr->text : NULL;
}

size_t kevo_expr_var_count(const kevo_expr *expr)
{
    return expr ? expr->nvars : 0;
}

const char *kevo_expr_var_name(const kevo_expr *expr, size_t i)
{
    return expr && i < expr->nvars ? expr->vars[i] : NULL;
}

/* ---- evaluation ---------------------------------------------------------- */

typedef struct evaluator {
    const kevo_expr *e;
    const kevo_vars *vars;
    kevo_error *err;
    kevo_status rc;
} evaluator;

static bool eval_node(evaluator *ev, int i, int64_t *out);

static bool eerr(evaluator *ev, kevo_status code, const node *n,
                 const char *fmt, ...) KEVO_PRINTF(4, 5);

static bool eerr(evaluator *ev, kevo_status code, const node *n,
                 const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ev->rc = fail_at(ev->err, code, ev->e->text, n->column, "%s", msg);
    return false;
}

/* C division and remainder, checked. */
static bool checked_div(evaluator *ev, const node *n, int64_t a, int64_t b,
                        bool rem, int64_t *out)
{
    if (b == 0)
        return eerr(ev, KEVO_EDIVZERO, n, "%s by zero",
                    rem ? "remainder" : "division");
    if (a == INT64_MIN && b == -1) {
        if (rem) {
            *out = 0;
            return true;
        }
        return eerr(ev, KEVO_EOVERFLOW, n, "%" PRId64 " / -1 overflows", a);
    }
    *out = rem ? a % b : a / b;
    return true;
}

static bool eval_node(evaluator *ev, int i, int64_t *out)
{
    const node *n = &ev->e->nodes[i];
    int64_t a = 0, b = 0;
    switch (n->kind) {
    case N_NUM: *out = n->num; return true;
    case N_VAR: {
        const char *name = ev->e->vars[n->num];
        if (kevo_vars_get(ev->vars, name, out) != KEVO_OK)
            return eerr(ev, KEVO_EUNDEFINED, n, "'%s' has no value", name);
        return true;
    }
    case N_AND:
        if (!eval_node(ev, n->a, &a))
            return false;
        if (!a) {
            *out = 0;
            return true;
        }
        if (!eval_node(ev, n->b, &b))
            return false;
        *out = b != 0;
        return true;
    case N_OR:
        if (!eval_node(ev, n->a, &a))
            return false;
        if (a) {
            *out = 1;
            return true;
        }
        if (!eval_node(ev, n->b, &b))
            return false;
        *out = b != 0;
        return true;
    case N_COND:
        if (!eval_node(ev, n->a, &a))
            return false;
        return eval_node(ev, a ? n->b : n->c, out);
    default: break;
    }
    if (!eval_node(ev, n->a, &a))
        return false;
    if (n->b >= 0 && !eval_node(ev, n->b, &b))
        return false;
    switch (n->kind) {
    case N_NEG:
        if (a == INT64_MIN)
            return eerr(ev, KEVO_EOVERFLOW, n, "-(%" PRId64 ") overflows", a);
        *out = -a;
        return true;
    case N_NOT: *out = !a; return true;
    case N_ABS:
        if (a == INT64_MIN)
            return eerr(ev, KEVO_EOVERFLOW, n, "abs(%" PRId64 ") overflows", a);
        *out = a < 0 ? -a : a;
        return true;
    case N_ADD:
        if (__builtin_add_overflow(a, b, out))
            return eerr(ev, KEVO_EOVERFLOW, n,
                        "%" PRId64 " + %" PRId64 " overflows", a, b);
        return true;
    case N_SUB:
        if (__builtin_sub_overflow(a, b, out))
            return eerr(ev, KEVO_EOVERFLOW, n,
                        "%" PRId64 " - %" PRId64 " overflows", a, b);
        return true;
    case N_MUL:
        if (__builtin_mul_overflow(a, b, out))
            return eerr(ev, KEVO_EOVERFLOW, n,
                        "%" PRId64 " * %" PRId64 " overflows", a, b);
        return true;
    case N_DIV: return checked_div(ev, n, a, b, false, out);
    case N_MOD: return checked_div(ev, n, a, b, true, out);
    case N_LT: *out = a < b; return true;
    case N_LE: *out = a <= b; return true;
    case N_GT: *out = a > b; return true;
    case N_GE: *out = a >= b; return true;
    case N_EQ: *out = a == b; return true;
    case N_NE: *out = a != b; return true;
    case N_MIN: *out = a < b ? a : b; return true;
    case N_MAX: *out = a > b ? a : b; return true;
    case N_CEIL_DIV: {
        int64_t q, r;
        if (!checked_div(ev, n, a, b, false, &q) ||
            !checked_div(ev, n, a, b, true, &r))
            return false;
        /* Truncation rounded toward zero; step up when the exact quotient
         * is positive and had a fraction. */
        if (r != 0 && ((a < 0) == (b < 0)))
            q++;
        *out = q;
        return true;
    }
    case N_ROUND_UP: {
        int64_t q, r;
        if (!checked_div(ev, n, a, b, false, &q) ||
            !checked_div(ev, n, a, b, true, &r))
            return false;
        if (r != 0 && ((a < 0) == (b < 0)))
            q++;
        if (__builtin_mul_overflow(q, b, out))
            return eerr(ev, KEVO_EOVERFLOW, n,
                        "round_up(%" PRId64 ", %" PRId64 ") overflows", a, b);
        return true;
    }
    default: return eerr(ev, KEVO_EINVAL, n, "internal error: bad node");
    }
}

kevo_status kevo_expr_eval(const kevo_expr *expr, const kevo_vars *vars,
                           int64_t *value, kevo_error *err)
{
    if (!expr || !value)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_expr_eval: NULL argument");
    evaluator ev = {expr, vars, err, KEVO_OK};
    int64_t v;
    if (!eval_node(&ev, expr->root, &v))
        return ev.rc;
    *value = v;
    return KEVO_OK;
}

kevo_status kevo_expr_eval_string(const char *text, const kevo_vars *vars,
                                  int64_t *value, kevo_error *err)
{
    kevo_expr *e;
    kevo_status rc = kevo_expr_parse(text, &e, err);
    if (rc != KEVO_OK)
        return rc;
    rc = kevo_expr_eval(e, vars, value, err);
    kevo_expr_free(e);
    return rc;
}

/* ---- C text -------------------------------------------------------------- */

/* The helpers a node becomes, by kind: NULL for a kind written inline. */
static const char *c_helper(node_kind k)
{
    switch (k) {
    case N_NEG: return "neg";
    case N_ABS: return "abs";
    case N_ADD: return "add";
    case N_SUB: return "sub";
    case N_MUL: return "mul";
    case N_DIV: return "div";
    case N_MOD: return "mod";
    case N_MIN: return "min";
    case N_MAX: return "max";
    case N_CEIL_DIV: return "ceil_div";
    case N_ROUND_UP: return "round_up";
    default: return NULL;
    }
}

static void c_node(const kevo_expr *e, int i, kevo_buf *out,
                   const char *var_prefix, const char *fn_prefix,
                   const char *flag)
{
    const node *n = &e->nodes[i];
    static const char *const cmp[] = {
        [N_LT] = "<",  [N_LE] = "<=", [N_GT] = ">",
        [N_GE] = ">=", [N_EQ] = "==", [N_NE] = "!=",
    };
    switch (n->kind) {
    case N_NUM: kevo__buf_printf(out, "INT64_C(%" PRId64 ")", n->num); return;
    case N_VAR:
        kevo__buf_printf(out, "%s%s", var_prefix, e->vars[n->num]);
        return;
    case N_NOT:
        kevo__buf_puts(out, "(int64_t)(");
        c_node(e, n->a, out, var_prefix, fn_prefix, flag);
        kevo__buf_puts(out, " == 0)");
        return;
    case N_LT:
    case N_LE:
    case N_GT:
    case N_GE:
    case N_EQ:
    case N_NE:
    case N_AND:
    case N_OR:
        kevo__buf_puts(out, "(int64_t)((");
        c_node(e, n->a, out, var_prefix, fn_prefix, flag);
        if (n->kind == N_AND || n->kind == N_OR)
            kevo__buf_printf(out, ") != 0 %s (",
                             n->kind == N_AND ? "&&" : "||");
        else
            kevo__buf_printf(out, ") %s (", cmp[n->kind]);
        c_node(e, n->b, out, var_prefix, fn_prefix, flag);
        kevo__buf_puts(out,
                       n->kind == N_AND || n->kind == N_OR ? ") != 0)" : "))");
        return;
    case N_COND:
        kevo__buf_puts(out, "((");
        c_node(e, n->a, out, var_prefix, fn_prefix, flag);
        kevo__buf_puts(out, ") != 0 ? (");
        c_node(e, n->b, out, var_prefix, fn_prefix, flag);
        kevo__buf_puts(out, ") : (");
        c_node(e, n->c, out, var_prefix, fn_prefix, flag);
        kevo__buf_puts(out, "))");
        return;
    default: break;
    }
    const char *h = c_helper(n->kind);
    kevo__buf_printf(out, "%s%s(", fn_prefix, h ? h : "bad");
    c_node(e, n->a, out, var_prefix, fn_prefix, flag);
    if (n->b >= 0) {
        kevo__buf_puts(out, ", ");
        c_node(e, n->b, out, var_prefix, fn_prefix, flag);
    }
    if (n->kind != N_MIN && n->kind != N_MAX)
        kevo__buf_printf(out, ", %s", flag);
    kevo__buf_puts(out, ")");
}

kevo_status kevo__expr_to_c(const kevo_expr *expr, const char *var_prefix,
                            const char *fn_prefix, const char *flag,
                            kevo_buf *out)
{
    if (!expr || !out)
        return KEVO_EINVAL;
    c_node(expr, expr->root, out, var_prefix ? var_prefix : "",
           fn_prefix ? fn_prefix : "", flag ? flag : "bad");
    return out->failed ? KEVO_ENOMEM : KEVO_OK;
}
