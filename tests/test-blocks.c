/*
 * test-blocks.c: the kevo:launch and kevo:param block parser.
 *
 * Data-driven over tests/data/blocks/: every NAME.cu is parsed with origin
 * "NAME.cu". When NAME.err exists, parsing must fail and the error text
 * must contain its line; otherwise parsing must succeed, and when NAME.out
 * exists, a dump of the parsed blocks must equal it. Adding a case needs no
 * change here.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/blocks.h"
#include "tap.h"

static char *read_text(const char *path)
{
    char *data;
    size_t len;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__read_file(path, true, &data, &len, &err) != KEVO_OK)
        return NULL;
    return data;
}

static void dump_expr(kevo_buf *b, const char *label, kevo_expr *const e[3])
{
    if (!e[1] && !e[2]) {
        kevo__buf_printf(b, "  %s: %s\n", label, kevo_expr_text(e[0]));
        return;
    }
    kevo__buf_printf(b, "  %s: dim3(", label);
    for (int k = 0; k < 3 && e[k]; k++)
        kevo__buf_printf(b, "%s%s", k ? " | " : "", kevo_expr_text(e[k]));
    kevo__buf_puts(b, ")\n");
}

static void dump_list(kevo_buf *b, const char *label, kevo_expr *const *e,
                      size_t n)
{
    if (!e[0])
        return;
    kevo__buf_printf(b, "  %s:", label);
    for (size_t k = 0; k < n; k++)
        kevo__buf_printf(b, "%s %s", k ? " |" : "", kevo_expr_text(e[k]));
    kevo__buf_puts(b, "\n");
}

static void dump_tensormap(kevo_buf *b, const kevo_tensormap *m)
{
    kevo__buf_printf(b, "tensormap %s over %s %s rank %zu (line %d)\n", m->name,
                     m->buffer, kevo_dtype_name(m->type), m->rank, m->line);
    dump_list(b, "dims", m->dims, m->rank);
    dump_list(b, "box", m->box, m->rank);
    dump_list(b, "strides", m->strides, m->rank - 1);
    dump_list(b, "elementstrides", m->elemstrides, m->rank);
    if (m->offset)
        kevo__buf_printf(b, "  offset: %s\n", kevo_expr_text(m->offset));
    kevo__buf_printf(b, "  swizzle %d interleave %d l2 %d oob %s\n", m->swizzle,
                     m->interleave, m->l2, m->oob_nan ? "nan" : "zero");
}

/* A stable text form of everything the parser produced. */
static char *dump(const kevo_blocks *bl)
{
    kevo_buf b = {0};
    kevo__buf_printf(&b, "launch block at line %d\n", bl->launch_line);
    kevo__buf_printf(&b, "param block at line %d\n", bl->param_line);
    for (size_t i = 0; i < bl->nscratch; i++) {
        const kevo_scratch *s = &bl->scratch[i];
        kevo__buf_printf(&b, "scratch %s %s[%s]%s (line %d)\n", s->name,
                         kevo_dtype_name(s->type), kevo_expr_text(s->count),
                         s->zero ? " zero" : "", s->line);
    }
    for (size_t i = 0; i < bl->ntensormaps; i++)
        dump_tensormap(&b, &bl->tensormaps[i]);
    for (size_t i = 0; i < bl->nlaunches; i++) {
        const kevo_launch *l = &bl->launches[i];
        kevo__buf_printf(&b, "launch %s (line %d)\n", l->kernel, l->line);
        dump_expr(&b, "grid", l->grid);
        dump_expr(&b, "block", l->block);
        if (l->smem)
            kevo__buf_printf(&b, "  smem: %s\n", kevo_expr_text(l->smem));
        for (size_t k = 0; k < l->nargs; k++) {
            const kevo_launch_arg *a = &l->args[k];
            kevo__buf_printf(&b, "  arg %zu: '%s'%s %s=%s expr='%s'\n", k + 1,
                             a->text, a->is_name ? " name" : "",
                             a->has_cast ? "cast" : "as",
                             kevo_dtype_name(a->cast), kevo_expr_text(a->expr));
        }
        if (l->cluster[0])
            dump_expr(&b, "cluster", l->cluster);
        if (l->pdl)
            kevo__buf_puts(&b, "  pdl\n");
        if (l->cond)
            kevo__buf_printf(&b, "  if: %s\n", kevo_expr_text(l->cond));
    }
    const kevo_paramspace *ps = bl->params;
    for (size_t i = 0; i < kevo_paramspace_count(ps); i++) {
        kevo__buf_printf(&b, "param %s {", kevo_paramspace_name(ps, i));
        for (size_t k = 0; k < kevo_paramspace_domain_size(ps, i); k++)
            kevo__buf_printf(&b, "%s%lld", k ? ", " : "",
                             (long long)kevo_paramspace_domain_value(ps, i, k));
        kevo__buf_printf(&b, "} = %lld\n",
                         (long long)kevo_paramspace_default(ps, i));
    }
    for (size_t i = 0; i < kevo_paramspace_constraint_count(ps); i++)
        kevo__buf_printf(&b, "require %s\n", kevo_paramspace_constraint(ps, i));
    return kevo__buf_take(&b);
}

static bool all_zero(const kevo_blocks *b)
{
    static const kevo_blocks zero;
    return memcmp(b, &zero, sizeof zero) == 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_case(const char *dir, const char *file)
{
    char *path = kevo__path_join(dir, file);
    size_t stem = strlen(file) - 3;
    char *err_path = kevo__asprintf("%s/%.*s.err", dir, (int)stem, file);
    char *out_path = kevo__asprintf("%s/%.*s.out", dir, (int)stem, file);
    char *source = read_text(path);
    char *want_err = read_text(err_path);
    char *want_out = read_text(out_path);
    kevo_blocks b;
    kevo_error err;
    kevo_error_init(&err);
    if (!source) {
        ok(0, "%s: readable", file);
        goto done;
    }
    kevo_status rc = kevo__blocks_parse(source, file, &b, &err);
    if (want_err) {
        want_err[strcspn(want_err, "\n")] = '\0';
        ok(rc == KEVO_EPARSE || rc == KEVO_EINVALID,
           "%s: fails with a parse or validation error (got %d)", file, rc);
        like_str(err.text, want_err, "%s: error text", file);
        is_str(err.source, file, "%s: error source", file);
        ok(all_zero(&b), "%s: output left empty", file);
        /* The line in the text is the line in the record. */
        char prefix[300];
        if (err.line > 0)
            snprintf(prefix, sizeof prefix, "%s:%d: ", file, err.line);
        else
            snprintf(prefix, sizeof prefix, "%s: ", file);
        ok(strncmp(err.text, prefix, strlen(prefix)) == 0,
           "%s: text starts with '%s'", file, prefix);
        goto done;
    }
    ok(rc == KEVO_OK, "%s: parses", file);
    if (rc != KEVO_OK) {
        diag("%s", err.text);
        goto done;
    }
    char *text = dump(&b);
    if (want_out)
        is_str(text, want_out, "%s: parsed as %.*s.out says", file, (int)stem,
               file);
    else
        ok(0, "%s: has a .err or a .out file", file);
    kevo_blocks copy;
    ok(kevo__blocks_copy(&b, &copy) == KEVO_OK, "%s: copies", file);
    char *copied = dump(&copy);
    is_str(copied, text, "%s: the copy is the same", file);
    free(copied);
    free(text);
    kevo__blocks_free(&copy);
    kevo__blocks_free(&b);
    ok(all_zero(&b), "%s: free empties", file);
done:
    free(path);
    free(err_path);
    free(out_path);
    free(source);
    free(want_err);
    free(want_out);
}

static void test_data(void)
{
    char *dir = kevo__path_join(tap_srcdir(), "tests/data/blocks");
    DIR *d = opendir(dir);
    if (!d)
        bail_out("cannot open %s", dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".cu") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof *names);
            if (!names)
                bail_out("out of memory");
        }
        names[n++] = kevo__strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    ok(n >= 30, "%zu cases in tests/data/blocks", n);
    for (size_t i = 0; i < n; i++) {
        run_case(dir, names[i]);
        free(names[i]);
    }
    free(names);
    free(dir);
}

static kevo_status parse(const char *src, const char *origin, kevo_blocks *b,
                         kevo_error *err)
{
    kevo_error_init(err);
    return kevo__blocks_parse(src, origin, b, err);
}

static void test_without_origin(void)
{
    kevo_blocks b;
    kevo_error err;
    is_int(parse("\n\n/* kevo:launch\n * k(x)\n */\n", NULL, &b, &err),
           KEVO_EPARSE, "no origin: parse error");
    is_str(err.text,
           "line 4: kevo:launch: expected '<<<' after kernel name 'k' (a "
           "launch reads 'KERNEL<<<GRID, BLOCK[, SMEM]>>>(ARGS)')",
           "no origin: the message says 'line N'");
    is_int(err.line, 4, "no origin: err.line");
    is_str(err.source, "", "no origin: err.source is empty");

    is_int(parse("int x;\n", NULL, &b, &err), KEVO_EINVALID,
           "no block, no origin");
    is_str(err.text,
           "no kevo:launch block: every kernel source must declare its "
           "launches (see kevo-blocks(5))",
           "no block, no origin: message");
    is_int(err.line, 0, "no block: no line");
}

static void test_columns(void)
{
    kevo_blocks b;
    kevo_error err;
    is_int(parse("// kevo:launch k<<<n / 0 +, 32>>>(x)\n", "a.cu", &b, &err),
           KEVO_EPARSE, "bad grid: parse error");
    is_int(err.column, 8, "bad grid: the expression's column");
    is_int(err.line, 1, "bad grid: line");
    is_str(err.text,
           "a.cu:1: kevo:launch: grid of 'k': expression 'n / 0 +', column "
           "8: expected a number, a name or '(', found the end",
           "bad grid: message");

    is_int(parse("// kevo:launch k<<<1, 32>>>(x)\n"
                 "// kevo:param A in {1}\n"
                 "//   require A >\n",
                 "a.cu", &b, &err),
           KEVO_EPARSE, "bad require");
    is_int(err.line, 3, "bad require: line");
    is_int(err.column, 4, "bad require: column");
}

static void test_api(void)
{
    kevo_blocks b;
    kevo_error err;
    kevo_error_init(&err);
    is_int(kevo__blocks_parse(NULL, NULL, &b, &err), KEVO_EINVAL,
           "NULL source");
    kevo_error_init(&err);
    is_int(kevo__blocks_parse("x", NULL, NULL, &err), KEVO_EINVAL, "NULL out");
    kevo__blocks_free(NULL);
    memset(&b, 0, sizeof b);
    kevo__blocks_free(&b);
    ok(all_zero(&b), "freeing an empty result");

    is_int(parse("// kevo:launch k<<<1, 1>>>(N)\n"
                 "// kevo:param N in {1, 2}\n"
                 "/* kevo:launch\n",
                 "a.cu", &b, &err),
           KEVO_EINVALID, "a second, unterminated block");
    like_str(err.text,
             "a.cu:3: a second kevo:launch block (the first starts "
             "at line 1)",
             "the second block is reported before its end is looked for");
    /* A scratch buffer cannot share a parameter's name: -DN=... would
     * rename it in the kernel. */
    is_int(parse("/* kevo:launch k<<<1, 1>>>(N)\n"
                 " * scratch N f32[4] */\n"
                 "// kevo:param N in {1, 2}\n",
                 "a.cu", &b, &err),
           KEVO_EINVALID, "scratch named like a parameter");
    is_str(err.text,
           "a.cu:2: kevo:launch: scratch buffer 'N' has the name of a "
           "parameter (kevo:param, line 3)",
           "scratch named like a parameter: message");

    /* Default values of each domain form. */
    is_int(parse("// kevo:launch k<<<1, 1>>>()\n"
                 "// kevo:param A in 3..9 step 3\n"
                 "// B in pow2(8..64)\n"
                 "// C in {5, 1}\n",
                 NULL, &b, &err),
           KEVO_OK, "defaults");
    is_int(kevo_paramspace_default(b.params, 0), 3, "range: LO");
    is_int(kevo_paramspace_domain_size(b.params, 0), 3, "range: 3 values");
    is_int(kevo_paramspace_default(b.params, 1), 8, "pow2: LO");
    is_int(kevo_paramspace_domain_size(b.params, 1), 4, "pow2: 4 values");
    is_int(kevo_paramspace_default(b.params, 2), 5, "list: the first value");
    kevo__blocks_free(&b);

    is_int(parse("// kevo:launch k<<<1, 1>>>()\n"
                 "// kevo:param A in {-9223372036854775808, "
                 "9223372036854775807}\n",
                 NULL, &b, &err),
           KEVO_OK, "64-bit extremes");
    is_int(kevo_paramspace_domain_value(b.params, 0, 0), INT64_MIN,
           "INT64_MIN");
    kevo__blocks_free(&b);
    is_int(parse("// kevo:launch k<<<1, 1>>>()\n"
                 "// kevo:param A in {9223372036854775808}\n",
                 NULL, &b, &err),
           KEVO_EPARSE, "2^63 does not fit");
    like_str(err.text, "does not fit in 64 bits", "2^63: message");
}

/* Hostile inputs: each must be answered, never crash. Under valgrind this
 * also checks that nothing reads past the end. */
static void test_hostile(void)
{
    static const char *const inputs[] = {
        "",
        "/*",
        "//",
        "/",
        "\"",
        "'",
        "R\"",
        "R\"(",
        "R\"abc",
        "u8R\"xyz(",
        "/* kevo:launch",
        "/* kevo:launch */",
        "// kevo:launch",
        "// kevo:launch k",
        "// kevo:launch k<",
        "// kevo:launch k<<",
        "// kevo:launch k<<<",
        "// kevo:launch k<<<1",
        "// kevo:launch k<<<1,",
        "// kevo:launch k<<<1, 1>",
        "// kevo:launch k<<<1, 1>>>",
        "// kevo:launch k<<<1, 1>>>(",
        "// kevo:launch k<<<1, 1>>>((",
        "// kevo:launch k<<<1, 1>>>())",
        "// kevo:launch k<<<, >>>()",
        "// kevo:launch k<<<1, 1, , >>>()",
        "// kevo:launch k<<<dim3(), 1>>>()",
        "// kevo:launch k<<<dim3(1, 2, ), 1>>>()",
        "// kevo:launch k<<<dim3(1, 1>>>()",
        "// kevo:launch k<<<1, 1>>>(,)",
        "// kevo:launch k<<<1, 1>>>((i32))",
        "// kevo:launch k<<<1, 1>>>((i32)",
        "// kevo:launch k<<<1, 1>>>(()",
        "// kevo:launch scratch",
        "// kevo:launch scratch x",
        "// kevo:launch scratch x f32",
        "// kevo:launch scratch x f32[",
        "// kevo:launch scratch x f32[]",
        "// kevo:launch scratch x f32[(]",
        "// kevo:launch scratch x f32[1] zero zero",
        "// kevo:launch scratch x verylongtypename[1]",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in {",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in {1",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in {1,",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in {-}",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in {0x}",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in 1.",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in 1..",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in 1..2 step",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in pow2",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in pow2(",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in pow2(1..2",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in {1} =",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in {1} = 1 x",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param require",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in "
        "-9223372036854775808..9223372036854775807",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in "
        "-9223372036854775808..9223372036854775807 step "
        "9223372036854775807",
        "// kevo:launch k<<<1,1>>>()\n// kevo:param A in "
        "pow2(1..4611686018427387904)",
        "// kevo:launch k<<<1, 1>>>(x) \\\n continued by a backslash",
        "\xff\xfe/* kevo:launch \x80<<<1, 1>>>(\xc3\xa9) */",
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(inputs); i++) {
        kevo_blocks b;
        kevo_error err;
        kevo_status rc = parse(inputs[i], "h.cu", &b, &err);
        ok(rc == KEVO_OK || ((rc == KEVO_EPARSE || rc == KEVO_EINVALID) &&
                             strncmp(err.text, "h.cu", 4) == 0),
           "hostile input %zu: answered (%d: %s)", i, rc, err.text);
        kevo__blocks_free(&b);
    }

    /* Deep nesting is refused by the expression parser, not the stack. */
    size_t depth = 100000;
    kevo_buf src = {0};
    kevo__buf_puts(&src, "// kevo:launch k<<<1, 1>>>(");
    for (size_t i = 0; i < depth; i++)
        kevo__buf_puts(&src, "(");
    kevo__buf_puts(&src, "1");
    for (size_t i = 0; i < depth; i++)
        kevo__buf_puts(&src, ")");
    kevo__buf_puts(&src, ")\n");
    kevo_blocks b;
    kevo_error err;
    ok(!src.failed, "deep source built");
    is_int(parse(src.data, "deep.cu", &b, &err), KEVO_EPARSE,
           "100000 nested parentheses: refused");
    kevo__buf_free(&src);

    /* Every prefix of a good source: each is answered. */
    char *good = NULL;
    char *path =
        kevo__path_join(tap_srcdir(), "tests/data/blocks/block-comment.cu");
    good = read_text(path);
    free(path);
    ok(good != NULL, "block-comment.cu read");
    size_t len = good ? strlen(good) : 0, answered = 0;
    for (size_t n = 0; n <= len; n++) {
        char *prefix = kevo__strndup(good, n);
        kevo_status rc = parse(prefix, "p.cu", &b, &err);
        answered += rc == KEVO_OK || rc == KEVO_EPARSE || rc == KEVO_EINVALID;
        kevo__blocks_free(&b);
        free(prefix);
    }
    is_uint(answered, len + 1, "all %zu prefixes of block-comment.cu answered",
            len + 1);
    free(good);
}

int main(void)
{
    test_data();
    test_without_origin();
    test_columns();
    test_api();
    test_hostile();
    return done_testing();
}
