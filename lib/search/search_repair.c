/*
 * search_repair.c: what the search does with a failed child. Its failure
 * is put in words (kevo's diagnostic: the verdict's reason, which names
 * the shape, the argument and the element, and for a compile error the
 * compiler's error lines), credited to its prompt, remembered for its
 * parent (later requests for that parent carry the last few failures) and,
 * while the option repair_turns allows, handed back to the operator that
 * made it, when that operator repairs children (operator ABI 1.2). The
 * children the host refused (their blocks did not parse, an #include
 * kernels may not have, the parent unchanged) go the same way.
 *
 * The memory of failures per parent is bounded (PARENTS parents, the
 * least recently touched forgotten first, PER_PARENT failures each) and is
 * not checkpointed: after a resume, prompts start without it.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_private.h"

#define PARENTS 64
#define PER_PARENT 3
/* A scored child that failed without saying why. */
#define KIND_FAILED "failed"

typedef struct memo_failure {
    char *kind;
    char *line; /* the diagnostic in one line */
    uint64_t candidate;
} memo_failure;

typedef struct memo_parent {
    uint64_t parent;
    uint64_t touched;
    memo_failure f[PER_PARENT]; /* the newest first */
    size_t n;
} memo_parent;

typedef struct kevo__search_memo {
    memo_parent p[PARENTS];
    size_t n;
    uint64_t clock;
} kevo__search_memo;

/* ---- the memory of failures per parent ----------------------------------- */

static void failure_clear(memo_failure *f)
{
    free(f->kind);
    free(f->line);
    memset(f, 0, sizeof *f);
}

static void parent_clear(memo_parent *p)
{
    for (size_t i = 0; i < p->n; i++)
        failure_clear(&p->f[i]);
    memset(p, 0, sizeof *p);
}

void kevo__search_repair_free(kevo__search_repairs *r)
{
    for (size_t i = 0; r->memo && i < r->memo->n; i++)
        parent_clear(&r->memo->p[i]);
    free(r->memo);
    r->memo = NULL;
    free(r->score_kind);
    free(r->score_diagnostic);
    r->score_kind = r->score_diagnostic = NULL;
}

static memo_parent *memo_find(const kevo__search_memo *m, uint64_t parent)
{
    for (size_t i = 0; m && i < m->n; i++) {
        if (m->p[i].parent == parent)
            return (memo_parent *)&m->p[i];
    }
    return NULL;
}

/* Remembers a failure of a child of parent; out of memory, it is only not
 * remembered. */
static void memo_add(kevo_search *s, uint64_t parent, const char *kind,
                     uint64_t candidate, const char *line)
{
    if (!s->repair.memo &&
        !(s->repair.memo = calloc(1, sizeof *s->repair.memo)))
        return;
    kevo__search_memo *m = s->repair.memo;
    memo_parent *p = memo_find(m, parent);
    if (!p && m->n < PARENTS) {
        p = &m->p[m->n++];
    } else if (!p) {
        p = &m->p[0];
        for (size_t i = 1; i < m->n; i++) {
            if (m->p[i].touched < p->touched)
                p = &m->p[i];
        }
        parent_clear(p);
    }
    p->parent = parent;
    p->touched = ++m->clock;
    memo_failure f = {kevo__strdup(kind), kevo__strdup(line), candidate};
    if (!f.kind || !f.line) {
        failure_clear(&f);
        return;
    }
    if (p->n == PER_PARENT)
        failure_clear(&p->f[--p->n]);
    memmove(&p->f[1], &p->f[0], p->n * sizeof p->f[0]);
    p->f[0] = f;
    p->n++;
}

size_t kevo__search_failures_of(kevo_search *s, uint64_t parent,
                                kevo_operator_failure *out, size_t max)
{
    memo_parent *p = memo_find(s->repair.memo, parent);
    size_t n = 0;
    for (; p && n < p->n && n < max; n++) {
        out[n] = (kevo_operator_failure){.kind = p->f[n].kind,
                                         .diagnostic = p->f[n].line,
                                         .count = 1,
                                         .candidate = p->f[n].candidate};
    }
    if (p)
        p->touched = ++s->repair.memo->clock;
    return n;
}

void kevo__search_revision_failures(kevo_search *s, uint64_t prompt,
                                    kevo_operator_revision *rev,
                                    kevo_operator_failure *kinds,
                                    kevo_operator_failure *children)
{
    size_t n = 0;
    uint64_t count;
    const char *kind;
    while (
        n < KEVO_PROMPT_FAILURE_KINDS_MAX &&
        (kind = kevo_promptpool_failure_kind(s->ops.pool, prompt, n, &count))) {
        kinds[n] = (kevo_operator_failure){.kind = kind, .count = count};
        n++;
    }
    rev->failure_kinds = n ? kinds : NULL;
    rev->n_failure_kinds = n;
    n = 0;
    const char *diag;
    uint64_t cand;
    while (n < KEVO_PROMPT_FAILED_CHILDREN &&
           (diag = kevo_promptpool_failed_child(s->ops.pool, prompt, n, &cand,
                                                &kind))) {
        children[n] = (kevo_operator_failure){
            .kind = kind, .diagnostic = diag, .count = 1, .candidate = cand};
        n++;
    }
    rev->failed_children = n ? children : NULL;
    rev->n_failed_children = n;
}

/* ---- failures ------------------------------------------------------------ */

/* Failures a repair can address: the kernel's own, not the machine's. */
static bool repairable(kevo_verdict v)
{
    switch (v) {
    case KEVO_VERDICT_COMPILE_ERROR:
    case KEVO_VERDICT_REJECTED:
    case KEVO_VERDICT_LAUNCH_ERROR:
    case KEVO_VERDICT_FAULT:
    case KEVO_VERDICT_TIMEOUT:
    case KEVO_VERDICT_WRONG:
    case KEVO_VERDICT_INPUT_MODIFIED: return true;
    default: return false;
    }
}

/* ---- repair requests ------------------------------------------------------
 */

/* A failed child, with what a repair of it needs. */
typedef struct failed {
    const kevo__search_req *from; /* what its children are credited to */
    const kevo_candidate *child;  /* NULL: refused by the host */
    const kevo_candidate *parent; /* for a refused child */
    const char *source;
    const char *kind;
    const char *diagnostic;
    uint64_t request;
    uint32_t attempt, turn; /* the failed child's turn */
} failed;

static kevo_status log_repair(kevo_search *s, const failed *f, uint64_t id,
                              const char *line, kevo_error *err)
{
    const kevo__search_req *r = f->from;
    json_t *o =
        json_pack("{s:s, s:I, s:I, s:i, s:i, s:s, s:s}", "operator",
                  kevo_operator_name(s->ops.list[r->op].op), "request",
                  (json_int_t)id, "of_request", (json_int_t)f->request,
                  "attempt", (int)f->attempt, "turn", (int)(f->turn + 1),
                  "kind", f->kind, "diagnostic", line ? line : "");
    if (o) {
        json_object_set_new(
            o, "child",
            f->child ? json_integer((json_int_t)kevo_candidate_id(f->child))
                     : json_null());
        json_object_set_new(o, "prompt",
                            r->prompt >= 0 ? json_integer(r->prompt)
                                           : json_null());
    }
    return kevo__search_log(s, "repair", o, err);
}

/* Sends f back to its operator when the option and the budget allow. */
static kevo_status maybe_repair(kevo_search *s, const failed *f,
                                const char *line, kevo_error *err)
{
    const kevo__search_req *from = f->from;
    kevo__search_op *o = &s->ops.list[from->op];
    uint32_t turns = (uint32_t)s->cfg.opt[KEVO_SEARCH_REPAIR_TURNS];
    int64_t max = s->cfg.opt[KEVO_SEARCH_MAX_EVALS];
    if (f->turn >= turns || s->state.phase != KEVO__PHASE_SEARCHING ||
        s->state.interrupted || !kevo_operator_can_repair(o->op) ||
        !f->source || (!f->child && !f->parent) ||
        (max > 0 && s->progress.submitted >= (uint64_t)max))
        return KEVO_OK;
    kevo_operator_repair_request rep = {.size = sizeof rep,
                                        .request_id = f->request,
                                        .attempt = f->attempt,
                                        .turn = f->turn + 1,
                                        .turns_left = turns - (f->turn + 1),
                                        .child = f->child,
                                        .source = f->source,
                                        .kind = f->kind,
                                        .diagnostic = f->diagnostic,
                                        .prompt_id = from->prompt,
                                        .parent = f->parent};
    kevo__search_req r = *from;
    r.revision = false;
    r.turn = f->turn + 1;
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = kevo_operator_repair(o->op, &rep, &r.id, &e);
    if (rc == KEVO_ENOMEM)
        return kevo__error_set(err, rc, "%s", e.text);
    if (rc != KEVO_OK)
        return kevo__search_log(s, "repair",
                                json_pack("{s:s, s:s}", "operator",
                                          kevo_operator_name(o->op), "error",
                                          e.text),
                                err);
    if ((rc = kevo__search_add_req(s, &r, err)) != KEVO_OK)
        return rc;
    if (kevo__search_count_repair(&s->ops, from->op, from->prompt) != KEVO_OK)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return log_repair(s, f, r.id, line, err);
}

/* What every failure of a proposal does: credit, memory, repair. */
static kevo_status failure(kevo_search *s, const failed *f, uint64_t cand_id,
                           kevo_error *err)
{
    const kevo__search_req *r = f->from;
    /* Briefly: the diagnostic's first line (the reason, or the first
     * compiler error). */
    char *first = f->diagnostic ? kevo__strndup(f->diagnostic,
                                                strcspn(f->diagnostic, "\n"))
                                : NULL;
    char *line =
        first ? kevo__one_line(first, KEVO_PROMPT_DIAGNOSTIC_MAX) : NULL;
    free(first);
    if (f->diagnostic && !line)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = KEVO_OK;
    if (r->prompt >= 0) {
        kevo_error e = KEVO__ERROR_INIT;
        rc = kevo_promptpool_credit_failure(s->ops.pool, (uint64_t)r->prompt,
                                            f->kind, cand_id, line, &e);
        /* An evicted prompt, or a kind the pool refuses, is not kept. */
        rc = rc == KEVO_ENOMEM ? kevo__error_set(err, rc, "out of memory")
                               : KEVO_OK;
    }
    if (rc == KEVO_OK && line)
        memo_add(s, r->parent_id, f->kind, cand_id, line);
    if (rc == KEVO_OK && f->diagnostic)
        rc = maybe_repair(s, f, line, err);
    free(line);
    return rc;
}

kevo_status kevo__search_judged(kevo_search *s, const kevo__search_job *job,
                                const kevo_eval_result *res, bool valid,
                                kevo_error *err)
{
    if (job->op >= s->ops.n)
        return KEVO_OK; /* the seed */
    int64_t prompt = kevo_candidate_prompt(job->cand);
    if (kevo__search_count_proposal(&s->ops, job->op, prompt, job->turn,
                                    valid) != KEVO_OK)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (valid)
        return KEVO_OK;
    kevo__search_req from = {.op = job->op,
                             .island = job->island,
                             .parent_cell = job->parent_cell,
                             .parent_id = job->parent_id,
                             .parent_fitness = job->parent_fitness,
                             .prompt = prompt};
    failed f = {.from = &from,
                .child = job->cand,
                .source = kevo_candidate_source(job->cand),
                .request = job->request,
                .attempt = job->attempt,
                .turn = job->turn};
    char *diag = NULL;
    if (res) {
        kevo_verdict v = kevo_eval_result_verdict(res);
        if (v == KEVO_VERDICT_OK)
            return KEVO_OK; /* correct: only its fitness was 0 */
        f.kind = kevo_verdict_name(v);
        if (repairable(v) && !(diag = kevo_eval_result_diagnostic(res)))
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    } else {
        f.kind = job->fail_kind ? job->fail_kind : KIND_FAILED;
        diag = job->fail_diagnostic ? kevo__strdup(job->fail_diagnostic) : NULL;
    }
    f.diagnostic = diag;
    kevo_status rc = failure(s, &f, kevo_candidate_id(job->cand), err);
    free(diag);
    return rc;
}

/* The parent of request r, or NULL when it left the archive. */
static const kevo_candidate *parent_of(const kevo_search *s,
                                       const kevo__search_req *r)
{
    if (r->island < s->pop.nislands && r->parent_cell != KEVO_NO_CELL) {
        const kevo_candidate *c =
            kevo_archive_candidate(s->pop.islands[r->island], r->parent_cell);
        if (c && kevo_candidate_id(c) == r->parent_id)
            return c;
    }
    size_t island, cell;
    if (kevo__search_find_elite(s, r->parent_id, &island, &cell))
        return kevo_archive_candidate(s->pop.islands[island], cell);
    return NULL;
}

kevo_status kevo__search_take_refused(kevo_search *s, const kevo__search_req *r,
                                      const kevo_operator_result *res,
                                      kevo_error *err)
{
    for (size_t i = 0; i < kevo_operator_result_refused_count(res); i++) {
        failed f = {.from = r, .request = r->id, .turn = r->turn};
        f.source = kevo_operator_result_refused(res, i, &f.attempt, &f.kind,
                                                &f.diagnostic);
        f.parent = parent_of(s, r);
        if (kevo__search_count_proposal(&s->ops, r->op, r->prompt, r->turn,
                                        false) != KEVO_OK)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        kevo_status rc = failure(s, &f, 0, err);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

/* ---- the scoring function's reports -------------------------------------- */

kevo_status kevo_search_fail_candidate(kevo_search *s, const char *kind,
                                       const char *diagnostic, kevo_error *err)
{
    if (!s || !kind || !diagnostic)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_fail_candidate: %s is NULL",
                               !s      ? "search"
                               : !kind ? "kind"
                                       : "diagnostic");
    size_t n = 0;
    for (; kind[n]; n++) {
        char c = kind[n];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            break;
    }
    if (n == 0 || kind[n] || n > 32)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_fail_candidate: the kind '%s' is "
                               "not 1 to 32 bytes of [a-z0-9_]",
                               kind);
    if (!s->repair.scoring)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_fail_candidate: no candidate is "
                               "being scored (call it from the scoring "
                               "function)");
    char *k = kevo__strdup(kind), *d = kevo__strdup(diagnostic);
    if (!k || !d) {
        free(k);
        free(d);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    free(s->repair.score_kind);
    free(s->repair.score_diagnostic);
    s->repair.score_kind = k;
    s->repair.score_diagnostic = d;
    return KEVO_OK;
}
