/*
 * ptxscan.c: features of a compiled candidate from its PTX and from
 * ptxas's verbose log (see ptxscan.h).
 *
 * The PTX is read statement by statement: comments and strings are
 * skipped, the directives that end at the end of their line (.version,
 * .target, .address_size, .file, .loc) are dropped, labels are taken off,
 * and every other statement ends at its ';'. A brace at the start of a
 * statement opens or closes a block; anywhere else it belongs to the
 * statement (vector operands, initialisers). Only the opcode of an
 * instruction is looked at, and the names it mentions: the .shared
 * variables a function uses and the functions it calls.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ptxscan.h"

/* A .shared variable declared at module scope. */
struct kevo_ptx_var {
    char *name;
    uint64_t bytes;
    bool dynamic; /* an extern array of unknown size */
};

static const char *const feature_names[KEVO_PTX_FEATURE_COUNT] = {
    "vector_loads",
    "vector_stores",
    "shared_loads",
    "shared_stores",
    "shared_atomics",
    "async_copies",
    "bulk_copies",
    "tma",
    "mma",
    "wgmma",
    "ldmatrix",
    "shuffles",
    "votes",
    "redux",
    "matches",
    "multicast",
    "dsmem",
    "mbarrier",
    "setmaxnreg",
};

const char *kevo__ptx_feature_name(kevo_ptx_feature f)
{
    return (unsigned)f < KEVO_PTX_FEATURE_COUNT ? feature_names[f] : NULL;
}

void kevo__ptxscan_init(kevo_ptxscan *scan)
{
    memset(scan, 0, sizeof(*scan));
}

void kevo__ptxscan_free(kevo_ptxscan *scan)
{
    if (!scan)
        return;
    for (size_t i = 0; i < scan->n; i++) {
        kevo_ptx_kernel *k = &scan->kernels[i];
        free(k->name);
        for (size_t c = 0; c < k->ncallees; c++)
            free(k->callees[c]);
        free(k->callees);
        free(k->params);
    }
    free(scan->kernels);
    for (size_t i = 0; i < scan->nvars; i++)
        free(scan->vars[i].name);
    free(scan->vars);
    memset(scan, 0, sizeof(*scan));
}

kevo_ptx_kernel *kevo__ptxscan_kernel(kevo_ptxscan *scan, const char *name,
                                      size_t len)
{
    for (size_t i = 0; i < scan->n; i++) {
        const char *k = scan->kernels[i].name;
        if (strlen(k) == len && memcmp(k, name, len) == 0)
            return &scan->kernels[i];
    }
    if (scan->n == scan->cap) {
        size_t cap = scan->cap ? 2 * scan->cap : 8;
        kevo_ptx_kernel *k = realloc(scan->kernels, cap * sizeof(*k));
        if (!k)
            return NULL;
        scan->kernels = k;
        scan->cap = cap;
    }
    kevo_ptx_kernel *k = &scan->kernels[scan->n];
    memset(k, 0, sizeof(*k));
    k->name = kevo__strndup(name, len);
    if (!k->name)
        return NULL;
    k->registers = k->barriers = k->smem_bytes = -1;
    k->stack_frame = k->spill_stores = k->spill_loads = -1;
    scan->n++;
    return k;
}

static bool add_callee(kevo_ptx_kernel *k, const char *name, size_t len)
{
    for (size_t i = 0; i < k->ncallees; i++) {
        if (strlen(k->callees[i]) == len &&
            memcmp(k->callees[i], name, len) == 0)
            return true;
    }
    if (k->ncallees == k->capcallees) {
        size_t cap = k->capcallees ? 2 * k->capcallees : 4;
        char **c = realloc(k->callees, cap * sizeof(*c));
        if (!c)
            return false;
        k->callees = c;
        k->capcallees = cap;
    }
    k->callees[k->ncallees] = kevo__strndup(name, len);
    if (!k->callees[k->ncallees])
        return false;
    k->ncallees++;
    return true;
}

/* ---- the statement reader ---------------------------------------------- */

typedef enum item {
    ITEM_EOF,
    ITEM_STMT,   /* a statement, in sc->stmt */
    ITEM_OPEN,   /* '{' at the start of a statement */
    ITEM_CLOSE,  /* '}' at the start of a statement */
    ITEM_HEADER, /* a function header, in sc->stmt; its '{' was read */
    ITEM_ERROR
} item;

typedef struct scanner {
    const char *p, *end;
    int line;
    kevo_buf stmt;
    int stmt_line;
} scanner;

static bool is_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Whether the text at p (up to end) is the word w followed by a non-word
 * character. */
static bool word_at(const char *p, const char *end, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(end - p) < n || memcmp(p, w, n) != 0)
        return false;
    return p + n == end || !(is_ident_char(p[n]) || p[n] == '.');
}

/* Whether s holds the word w (a directive such as ".entry"). */
static bool has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    const char *end = s + strlen(s);
    for (const char *q = strstr(s, w); q; q = strstr(q + 1, w)) {
        bool start = q == s || !(is_ident_char(q[-1]) || q[-1] == '.');
        if (start && word_at(q, end, w))
            return true;
        if ((size_t)(end - q) <= n)
            break;
    }
    return false;
}

/* Skips a comment at sc->p (which is at '/'); false for one that does not
 * end. */
static bool skip_comment(scanner *sc, kevo_error *err)
{
    if (sc->p[1] == '/') {
        while (sc->p < sc->end && *sc->p != '\n')
            sc->p++;
        return true;
    }
    int line = sc->line;
    sc->p += 2;
    while (sc->p + 1 < sc->end && !(sc->p[0] == '*' && sc->p[1] == '/')) {
        if (*sc->p == '\n')
            sc->line++;
        sc->p++;
    }
    if (sc->p + 1 >= sc->end) {
        kevo__error_set_at(err, KEVO_EPARSE, "PTX", line, 0,
                           "PTX line %d: a /* comment does not end", line);
        return false;
    }
    sc->p += 2;
    return true;
}

static bool at_comment(const scanner *sc)
{
    return sc->p + 1 < sc->end && sc->p[0] == '/' &&
           (sc->p[1] == '/' || sc->p[1] == '*');
}

static bool skip_space(scanner *sc, kevo_error *err)
{
    while (sc->p < sc->end) {
        if (*sc->p == '\n') {
            sc->line++;
            sc->p++;
        } else if (isspace((unsigned char)*sc->p)) {
            sc->p++;
        } else if (at_comment(sc)) {
            if (!skip_comment(sc, err))
                return false;
        } else {
            break;
        }
    }
    return true;
}

/* Directives that end at the end of their line, without a ';'. */
static bool line_directive(const scanner *sc)
{
    static const char *const names[] = {".version", ".target", ".address_size",
                                        ".file", ".loc"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(names); i++) {
        if (word_at(sc->p, sc->end, names[i]))
            return true;
    }
    return false;
}

/* Whether the statement read so far is a lone label name. */
static bool stmt_is_label(const kevo_buf *b)
{
    if (!b->len || isdigit((unsigned char)b->data[0]))
        return false;
    for (size_t i = 0; i < b->len; i++) {
        if (!is_ident_char(b->data[i]))
            return false;
    }
    return true;
}

static void stmt_space(kevo_buf *b)
{
    if (b->len && b->data[b->len - 1] != ' ')
        kevo__buf_append(b, " ", 1);
}

static item next_item(scanner *sc, bool top, kevo_error *err)
{
again:
    if (!skip_space(sc, err))
        return ITEM_ERROR;
    if (sc->p >= sc->end)
        return ITEM_EOF;
    if (*sc->p == '{' || *sc->p == '}')
        return *sc->p++ == '{' ? ITEM_OPEN : ITEM_CLOSE;
    if (line_directive(sc)) {
        while (sc->p < sc->end && *sc->p != '\n')
            sc->p++;
        goto again;
    }
    sc->stmt.len = 0;
    if (sc->stmt.data)
        sc->stmt.data[0] = '\0';
    sc->stmt_line = sc->line;
    bool section = word_at(sc->p, sc->end, ".section");
    int depth = 0;
    while (sc->p < sc->end) {
        char c = *sc->p;
        if (at_comment(sc)) {
            if (!skip_comment(sc, err))
                return ITEM_ERROR;
            stmt_space(&sc->stmt);
            continue;
        }
        if (c == '"') {
            const char *s = sc->p++;
            while (sc->p < sc->end && *sc->p != '"' && *sc->p != '\n')
                sc->p += *sc->p == '\\' && sc->p + 1 < sc->end ? 2 : 1;
            if (sc->p >= sc->end || *sc->p != '"') {
                kevo__error_set_at(err, KEVO_EPARSE, "PTX", sc->line, 0,
                                   "PTX line %d: a string does not end",
                                   sc->line);
                return ITEM_ERROR;
            }
            sc->p++;
            kevo__buf_append(&sc->stmt, s, (size_t)(sc->p - s));
            continue;
        }
        if (c == ';' && depth == 0) {
            sc->p++;
            return ITEM_STMT;
        }
        if (c == '{') {
            if (depth == 0 && top &&
                (has_word(sc->stmt.data ? sc->stmt.data : "", ".entry") ||
                 has_word(sc->stmt.data ? sc->stmt.data : "", ".func"))) {
                sc->p++;
                return ITEM_HEADER;
            }
            depth++;
        } else if (c == '}') {
            if (depth == 0)
                return ITEM_STMT; /* a block ends after an unended
                                     statement: the '}' is read next */
            depth--;
            if (depth == 0 && section) {
                sc->p++;
                return ITEM_STMT;
            }
        } else if (c == ':' && depth == 0 && sc->p + 1 < sc->end &&
                   sc->p[1] != ':' && stmt_is_label(&sc->stmt)) {
            sc->p++;
            sc->stmt.len = 0;
            sc->stmt.data[0] = '\0';
            if (!skip_space(sc, err))
                return ITEM_ERROR;
            sc->stmt_line = sc->line;
            if (sc->p < sc->end && (*sc->p == '{' || *sc->p == '}'))
                return *sc->p++ == '{' ? ITEM_OPEN : ITEM_CLOSE;
            continue;
        }
        if (isspace((unsigned char)c)) {
            if (c == '\n')
                sc->line++;
            stmt_space(&sc->stmt);
        } else {
            kevo__buf_append(&sc->stmt, &c, 1);
        }
        sc->p++;
    }
    kevo__error_set_at(err, KEVO_EPARSE, "PTX", sc->stmt_line, 0,
                       "PTX line %d: a statement does not end with ';'",
                       sc->stmt_line);
    return ITEM_ERROR;
}

/* ---- declarations ------------------------------------------------------- */

static uint64_t type_size(const char *t, size_t len)
{
    static const struct {
        const char *name;
        uint64_t size;
    } types[] = {
        {".b8", 1},     {".u8", 1},    {".s8", 1},     {".b16", 2},
        {".u16", 2},    {".s16", 2},   {".f16", 2},    {".bf16", 2},
        {".f16x2", 4},  {".b32", 4},   {".u32", 4},    {".s32", 4},
        {".f32", 4},    {".b64", 8},   {".u64", 8},    {".s64", 8},
        {".f64", 8},    {".b128", 16}, {".bf16x2", 4}, {".e4m3x2", 2},
        {".e5m2x2", 2}, {".tf32", 4},  {".pred", 1},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(types); i++) {
        if (strlen(types[i].name) == len && memcmp(types[i].name, t, len) == 0)
            return types[i].size;
    }
    return 0;
}

/* One variable of a .shared declaration. */
typedef struct decl_var {
    const char *name;
    size_t len;
    uint64_t bytes;
    bool dynamic;
} decl_var;

/* Reads the variables of a .shared declaration (".shared .align 4 .b8
 * name[1024], other[8]"), calling add for each. */
static bool shared_decl(const char *s,
                        bool (*add)(void *ctx, const decl_var *v), void *ctx)
{
    uint64_t elem = 0, vec = 1;
    const char *p = s;
    while (*p) {
        while (*p == ' ')
            p++;
        if (*p != '.')
            break;
        const char *t = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - t);
        if (len == 6 && memcmp(t, ".align", 6) == 0) {
            while (*p == ' ')
                p++;
            while (isdigit((unsigned char)*p))
                p++;
        } else if (len == 3 && t[1] == 'v' && isdigit((unsigned char)t[2])) {
            vec = (uint64_t)(t[2] - '0');
        } else if (type_size(t, len)) {
            elem = type_size(t, len);
        }
    }
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!is_ident_char(*p))
            break;
        decl_var v = {p, 0, elem * vec, false};
        while (is_ident_char(*p))
            p++;
        v.len = (size_t)(p - v.name);
        while (*p == ' ')
            p++;
        while (*p == '[') {
            char *q;
            p++;
            while (*p == ' ')
                p++;
            if (*p == ']') {
                v.dynamic = true;
                v.bytes = 0;
            } else {
                unsigned long long n = strtoull(p, &q, 10);
                v.bytes *= (uint64_t)n;
                p = q;
            }
            while (*p && *p != ']')
                p++;
            if (*p == ']')
                p++;
            while (*p == ' ')
                p++;
        }
        if (!add(ctx, &v))
            return false;
        if (*p == '=') /* an initialiser: nothing more to read */
            break;
    }
    return true;
}

static bool add_module_var(void *ctx, const decl_var *v)
{
    kevo_ptxscan *scan = ctx;
    if (scan->nvars == scan->capvars) {
        size_t cap = scan->capvars ? 2 * scan->capvars : 4;
        struct kevo_ptx_var *n = realloc(scan->vars, cap * sizeof(*n));
        if (!n)
            return false;
        scan->vars = n;
        scan->capvars = cap;
    }
    struct kevo_ptx_var *var = &scan->vars[scan->nvars];
    var->name = kevo__strndup(v->name, v->len);
    if (!var->name)
        return false;
    var->bytes = v->bytes;
    var->dynamic = v->dynamic;
    scan->nvars++;
    return true;
}

static bool add_local_var(void *ctx, const decl_var *v)
{
    kevo_ptx_kernel *k = ctx;
    if (v->dynamic)
        k->own_dynamic = true;
    k->own_shared += v->bytes;
    return true;
}

/* ---- instructions ------------------------------------------------------- */

static bool part_is(const char *p, size_t len, const char *w)
{
    return strlen(w) == len && memcmp(p, w, len) == 0;
}

/* Splits opcode (len bytes) at its dots into at most max parts. */
static size_t split_opcode(const char *op, size_t len, const char **parts,
                           size_t *lens, size_t max)
{
    size_t n = 0;
    const char *p = op, *end = op + len;
    while (p < end && n < max) {
        const char *q = memchr(p, '.', (size_t)(end - p));
        if (!q)
            q = end;
        parts[n] = p;
        lens[n++] = (size_t)(q - p);
        p = q + 1;
    }
    return n;
}

#define OPCODE_PARTS_MAX 16

static bool has_part(const char **parts, const size_t *lens, size_t n,
                     const char *w)
{
    for (size_t i = 1; i < n; i++) {
        if (part_is(parts[i], lens[i], w))
            return true;
    }
    return false;
}

static bool has_shared_part(const char **parts, const size_t *lens, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (lens[i] >= 6 && memcmp(parts[i], "shared", 6) == 0)
            return true;
    }
    return false;
}

static bool has_vector_part(const char **parts, const size_t *lens, size_t n)
{
    return has_part(parts, lens, n, "v2") || has_part(parts, lens, n, "v4") ||
           has_part(parts, lens, n, "v8");
}

/* For ld and st: no state space (generic) or .global. */
static bool global_or_generic(const char **parts, const size_t *lens, size_t n)
{
    static const char *const others[] = {"local", "param", "const", "tex"};
    if (has_shared_part(parts, lens, n))
        return false;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(others); i++) {
        if (has_part(parts, lens, n, others[i]))
            return false;
    }
    return true;
}

/* Counts one instruction of opcode in k. */
static void count_opcode(kevo_ptx_kernel *k, const char *op, size_t len)
{
    const char *parts[OPCODE_PARTS_MAX];
    size_t lens[OPCODE_PARTS_MAX];
    size_t n = split_opcode(op, len, parts, lens, OPCODE_PARTS_MAX);
    if (n == 0)
        return;
    const char *b = parts[0];
    size_t bl = lens[0];
    uint32_t *c = k->own;
    if (has_part(parts, lens, n, "multicast::cluster"))
        c[KEVO_PTX_MULTICAST]++;
    if (part_is(b, bl, "mapa") ||
        ((part_is(b, bl, "ld") || part_is(b, bl, "st") ||
          part_is(b, bl, "atom") || part_is(b, bl, "red")) &&
         has_part(parts, lens, n, "shared::cluster")))
        c[KEVO_PTX_DSMEM]++;
    if (part_is(b, bl, "mbarrier")) {
        c[KEVO_PTX_MBARRIER]++;
    } else if (part_is(b, bl, "setmaxnreg")) {
        c[KEVO_PTX_SETMAXNREG]++;
    } else if (part_is(b, bl, "ld") || part_is(b, bl, "ldu")) {
        if (has_shared_part(parts, lens, n))
            c[KEVO_PTX_SHARED_LOADS]++;
        else if (has_vector_part(parts, lens, n) &&
                 global_or_generic(parts, lens, n))
            c[KEVO_PTX_VECTOR_LOADS]++;
    } else if (part_is(b, bl, "st")) {
        if (has_shared_part(parts, lens, n) ||
            has_part(parts, lens, n, "async"))
            c[KEVO_PTX_SHARED_STORES]++;
        else if (has_vector_part(parts, lens, n) &&
                 global_or_generic(parts, lens, n))
            c[KEVO_PTX_VECTOR_STORES]++;
    } else if (part_is(b, bl, "atom") || part_is(b, bl, "red")) {
        if (has_shared_part(parts, lens, n))
            c[KEVO_PTX_SHARED_ATOMICS]++;
    } else if (part_is(b, bl, "cp") && n >= 3) {
        bool async = part_is(parts[1], lens[1], "async");
        bool reduce = n >= 4 && part_is(parts[1], lens[1], "reduce") &&
                      part_is(parts[2], lens[2], "async") &&
                      part_is(parts[3], lens[3], "bulk");
        if (async && part_is(parts[2], lens[2], "bulk")) {
            bool bookkeeping =
                n >= 4 && (part_is(parts[3], lens[3], "commit_group") ||
                           part_is(parts[3], lens[3], "wait_group"));
            if (!bookkeeping)
                c[has_part(parts, lens, n, "tensor") ? KEVO_PTX_TMA
                                                     : KEVO_PTX_BULK_COPIES]++;
        } else if (reduce) {
            c[has_part(parts, lens, n, "tensor") ? KEVO_PTX_TMA
                                                 : KEVO_PTX_BULK_COPIES]++;
        } else if (async && (part_is(parts[2], lens[2], "ca") ||
                             part_is(parts[2], lens[2], "cg"))) {
            c[KEVO_PTX_ASYNC_COPIES]++;
        }
    } else if (part_is(b, bl, "mma")) {
        c[KEVO_PTX_MMA]++;
    } else if (part_is(b, bl, "wmma") && n >= 2) {
        if (part_is(parts[1], lens[1], "mma"))
            c[KEVO_PTX_MMA]++;
        else if (part_is(parts[1], lens[1], "load") ||
                 part_is(parts[1], lens[1], "store"))
            c[KEVO_PTX_LDMATRIX]++;
    } else if (part_is(b, bl, "tcgen05") && n >= 2) {
        if (part_is(parts[1], lens[1], "mma"))
            c[KEVO_PTX_MMA]++;
    } else if (part_is(b, bl, "wgmma") && n >= 2) {
        if (lens[1] >= 9 && memcmp(parts[1], "mma_async", 9) == 0)
            c[KEVO_PTX_WGMMA]++;
    } else if (part_is(b, bl, "ldmatrix") || part_is(b, bl, "stmatrix")) {
        c[KEVO_PTX_LDMATRIX]++;
    } else if (part_is(b, bl, "shfl")) {
        c[KEVO_PTX_SHUFFLES]++;
    } else if (part_is(b, bl, "vote")) {
        c[KEVO_PTX_VOTES]++;
    } else if (part_is(b, bl, "redux")) {
        c[KEVO_PTX_REDUX]++;
    } else if (part_is(b, bl, "match")) {
        c[KEVO_PTX_MATCHES]++;
    }
}

/* The name a call instruction calls (operands after the opcode), or NULL
 * for an indirect call. */
static const char *callee(const char *p, size_t *len)
{
    while (*p == ' ')
        p++;
    if (*p == '(') {
        int depth = 0;
        for (; *p; p++) {
            if (*p == '(')
                depth++;
            else if (*p == ')' && --depth == 0)
                break;
        }
        if (*p)
            p++;
        while (*p == ' ' || *p == ',')
            p++;
    }
    const char *s = p;
    if (!is_ident_char(*p) || isdigit((unsigned char)*p))
        return NULL;
    while (is_ident_char(*p))
        p++;
    *len = (size_t)(p - s);
    return s;
}

/* Marks in used[] the module variables that the operands at p name. */
static void mark_vars(const kevo_ptxscan *scan, const char *p, bool *used)
{
    while (*p) {
        if (*p == '%') {
            while (*p == '%' || is_ident_char(*p))
                p++;
            continue;
        }
        if (!is_ident_char(*p) || isdigit((unsigned char)*p)) {
            p++;
            continue;
        }
        const char *s = p;
        while (is_ident_char(*p))
            p++;
        size_t len = (size_t)(p - s);
        for (size_t i = 0; i < scan->nvars; i++) {
            if (strlen(scan->vars[i].name) == len &&
                memcmp(scan->vars[i].name, s, len) == 0)
                used[i] = true;
        }
    }
}

/* One statement of k's body. */
static bool body_stmt(kevo_ptxscan *scan, kevo_ptx_kernel *k, const char *s,
                      bool *used)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    if (*p == '@') {
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    if (*p == '.') {
        if (has_word(p, ".shared"))
            return shared_decl(p, add_local_var, k);
        return true;
    }
    const char *op = p;
    while (is_ident_char(*p) || *p == '.' || *p == ':')
        p++;
    size_t oplen = (size_t)(p - op);
    count_opcode(k, op, oplen);
    if ((oplen == 4 && memcmp(op, "call", 4) == 0) ||
        (oplen > 5 && memcmp(op, "call.", 5) == 0)) {
        size_t len = 0;
        const char *name = callee(p, &len);
        if (name && !add_callee(k, name, len))
            return false;
    }
    if (used)
        mark_vars(scan, p, used);
    return true;
}

/* The name in a function header: the word after .entry, or for .func the
 * word after the return parameters. */
static const char *header_name(const char *s, bool *entry, size_t *len)
{
    const char *end = s + strlen(s);
    for (const char *p = s; *p; p++) {
        if (p != s && (is_ident_char(p[-1]) || p[-1] == '.'))
            continue;
        bool e = word_at(p, end, ".entry"), f = word_at(p, end, ".func");
        if (!e && !f)
            continue;
        *entry = e;
        p += e ? 6 : 5;
        while (*p == ' ')
            p++;
        if (f && *p == '(') {
            int depth = 0;
            for (; *p; p++) {
                if (*p == '(')
                    depth++;
                else if (*p == ')' && --depth == 0)
                    break;
            }
            if (*p)
                p++;
            while (*p == ' ')
                p++;
        }
        const char *name = p;
        while (is_ident_char(*p))
            p++;
        *len = (size_t)(p - name);
        return *len ? name : NULL;
    }
    return NULL;
}

/* Reads a function body up to its closing brace. */
static kevo_status scan_body(kevo_ptxscan *scan, scanner *sc,
                             kevo_ptx_kernel *k, int header_line,
                             kevo_error *err)
{
    kevo_status rc = KEVO_ENOMEM;
    bool *used = NULL;
    if (scan->nvars && !(used = calloc(scan->nvars, sizeof(*used))))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    int depth = 1;
    while (depth > 0) {
        item it = next_item(sc, false, err);
        if (it == ITEM_ERROR) {
            rc = err ? err->code : KEVO_EPARSE;
            goto done;
        }
        if (it == ITEM_EOF) {
            rc = kevo__error_set_at(err, KEVO_EPARSE, "PTX", header_line, 0,
                                    "PTX line %d: the body of %s does not "
                                    "end",
                                    header_line, k->name);
            goto done;
        }
        if (sc->stmt.failed)
            goto nomem;
        if (it == ITEM_OPEN)
            depth++;
        else if (it == ITEM_CLOSE)
            depth--;
        else if (it == ITEM_STMT && sc->stmt.len &&
                 !body_stmt(scan, k, sc->stmt.data, used))
            goto nomem;
    }
    for (size_t i = 0; used && i < scan->nvars; i++) {
        if (!used[i])
            continue;
        k->own_shared += scan->vars[i].bytes;
        k->own_dynamic = k->own_dynamic || scan->vars[i].dynamic;
    }
    rc = KEVO_OK;
    goto done;
nomem:
    rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
done:
    free(used);
    return rc;
}

/* Marks in seen[] the function root and every function it reaches. */
static void reach(const kevo_ptxscan *scan, size_t root, bool *seen)
{
    const kevo_ptx_kernel *k = &scan->kernels[root];
    seen[root] = true;
    for (size_t c = 0; c < k->ncallees; c++) {
        for (size_t j = 0; j < scan->n; j++) {
            if (!seen[j] && strcmp(scan->kernels[j].name, k->callees[c]) == 0)
                reach(scan, j, seen);
        }
    }
}

kevo_status kevo__ptxscan_ptx(kevo_ptxscan *scan, const char *ptx, size_t len,
                              kevo_error *err)
{
    scanner sc = {ptx, ptx + len, 1, {0}, 1};
    kevo_status rc = KEVO_OK;
    bool *seen = NULL;
    for (;;) {
        item it = next_item(&sc, true, err);
        if (it == ITEM_EOF)
            break;
        if (it == ITEM_ERROR) {
            rc = err ? err->code : KEVO_EPARSE;
            goto done;
        }
        if (sc.stmt.failed)
            goto nomem;
        if (it == ITEM_STMT && sc.stmt.len && sc.stmt.data[0] == '.' &&
            has_word(sc.stmt.data, ".shared")) {
            if (!shared_decl(sc.stmt.data, add_module_var, scan))
                goto nomem;
        } else if (it == ITEM_HEADER) {
            bool entry = false;
            size_t nlen = 0;
            const char *name = header_name(sc.stmt.data, &entry, &nlen);
            int line = sc.stmt_line;
            kevo_ptx_kernel *k =
                kevo__ptxscan_kernel(scan, name ? name : "?", name ? nlen : 1);
            if (!k)
                goto nomem;
            k->in_ptx = true;
            k->entry = k->entry || entry;
            if (name && entry &&
                kevo__ptx_header_params(k, name + nlen) != KEVO_OK)
                goto nomem;
            rc = scan_body(scan, &sc, k, line, err);
            if (rc != KEVO_OK)
                goto done;
        }
    }
    /* Totals: each function with what the functions it reaches do. */
    seen = malloc(scan->n ? scan->n * sizeof(*seen) : 1);
    if (!seen)
        goto nomem;
    for (size_t i = 0; i < scan->n; i++) {
        memset(seen, 0, scan->n * sizeof(*seen));
        reach(scan, i, seen);
        kevo_ptx_kernel *k = &scan->kernels[i];
        memset(k->count, 0, sizeof(k->count));
        k->shared_static = 0;
        k->shared_dynamic = false;
        for (size_t j = 0; j < scan->n; j++) {
            if (!seen[j])
                continue;
            for (int f = 0; f < KEVO_PTX_FEATURE_COUNT; f++)
                k->count[f] += scan->kernels[j].own[f];
            k->shared_static += scan->kernels[j].own_shared;
            k->shared_dynamic =
                k->shared_dynamic || scan->kernels[j].own_dynamic;
        }
    }
    goto done;
nomem:
    rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
done:
    free(seen);
    kevo__buf_free(&sc.stmt);
    return rc;
}

int64_t kevo__ptxscan_spill_stores(const kevo_ptxscan *scan,
                                   const kevo_ptx_kernel *k)
{
    if (k->spill_stores < 0)
        return -1;
    size_t root = (size_t)(k - scan->kernels);
    bool *seen = calloc(scan->n, sizeof(*seen));
    if (!seen)
        return k->spill_stores;
    reach(scan, root, seen);
    int64_t sum = 0;
    for (size_t j = 0; j < scan->n; j++) {
        if (seen[j] && scan->kernels[j].spill_stores > 0)
            sum += scan->kernels[j].spill_stores;
    }
    free(seen);
    return sum;
}
