/*
 * search_request.c: the search's requests to operators. Picking the
 * island, the parent (by the mix of selection rules), the inspirations,
 * the operator (by weight) and the prompt (by Thompson sampling); sending
 * prompts for revision when the pool says one is due (and children were
 * judged since the last); and taking what the operators answer: children
 * go to evaluation (within the budget), failures are logged and credited,
 * revised prompts join the pool, and an operator whose requests keep
 * giving no child waits longer and longer, then stops the search.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive_notes.h"
#include "search_private.h"

/* ---- requests ------------------------------------------------------------ */

size_t kevo__search_children_in_flight(const kevo_search *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->pipe.njobs; i++)
        n += s->pipe.jobs[i].kind == KEVO__JOB_CHILD;
    return n;
}

size_t kevo__search_child_requests(const kevo_search *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->pipe.nreqs; i++)
        n += !s->pipe.reqs[i].revision;
    return n;
}

kevo_status kevo__search_add_req(kevo_search *s, const kevo__search_req *r,
                                 kevo_error *err)
{
    if (s->pipe.nreqs == s->pipe.creqs) {
        size_t c = s->pipe.creqs ? 2 * s->pipe.creqs : 16;
        kevo__search_req *n = realloc(s->pipe.reqs, c * sizeof *n);
        if (!n)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        s->pipe.reqs = n;
        s->pipe.creqs = c;
    }
    s->pipe.reqs[s->pipe.nreqs++] = *r;
    return KEVO_OK;
}

static kevo_selection pick_rule(kevo_search *s)
{
    double w[3] = {(double)s->cfg.opt[KEVO_SEARCH_PICK_UNIFORM],
                   (double)s->cfg.opt[KEVO_SEARCH_PICK_SOFTMAX],
                   (double)s->cfg.opt[KEVO_SEARCH_PICK_CURIOSITY]};
    double total = w[0] + w[1] + w[2];
    if (total <= 0)
        return KEVO_SELECT_UNIFORM;
    double u = kevo_rng_uniform(s->pop.rng) * total;
    if (u < w[0])
        return KEVO_SELECT_UNIFORM;
    if (u < w[0] + w[1])
        return KEVO_SELECT_SOFTMAX;
    return KEVO_SELECT_CURIOSITY;
}

/* Whether operator o waits, at time now, after requests that gave no
 * child. */
static bool backing_off(const kevo__search_op *o, double now)
{
    return o->streak.not_before > now;
}

/* An operator by weight among those that do not wait at time now (one
 * draw of the stream whatever they are, so that without failures the
 * choices are those of the weights alone); SIZE_MAX when all wait. */
static size_t pick_operator(kevo_search *s, double now)
{
    double total = 0;
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < s->ops.n; i++) {
        if (!backing_off(&s->ops.list[i], now)) {
            total += s->ops.list[i].weight;
            last = i;
        }
    }
    double u = kevo_rng_uniform(s->pop.rng) * total;
    for (size_t i = 0; i < s->ops.n; i++) {
        if (backing_off(&s->ops.list[i], now))
            continue;
        if (u < s->ops.list[i].weight)
            return i;
        u -= s->ops.list[i].weight;
    }
    return last;
}

double kevo__search_backoff_left(const kevo_search *s)
{
    double now = kevo__search_now(), soonest = INFINITY;
    for (size_t i = 0; i < s->ops.n; i++) {
        const kevo__search_op *o = &s->ops.list[i];
        if (!backing_off(o, now))
            return 0;
        if (o->streak.not_before - now < soonest)
            soonest = o->streak.not_before - now;
    }
    return s->ops.n ? soonest : 0;
}

/* The chance that a request carries a second parent, for crossover. Most
 * requests mutate one parent: a crossover pays off only now and then, and
 * its prompt is longer. */
#define CROSSOVER_RATE 0.25

/* Whether the elite in cell c of a suits as a second parent beside parent
 * (in cell pc): another cell, and another kernel for an operator that
 * writes code, or the same kernel with another assignment for one that
 * only tunes parameters (the only crossover it can make). */
static bool crossover_mate(const kevo_archive *a, size_t c, size_t pc,
                           const kevo_candidate *parent, bool writes_code)
{
    if (c == pc)
        return false;
    const kevo_candidate *m = kevo_archive_candidate(a, c);
    bool same_source =
        strcmp(kevo_candidate_source(m), kevo_candidate_source(parent)) == 0;
    return writes_code ? !same_source
                       : same_source && kevo_candidate_hash(m) !=
                                            kevo_candidate_hash(parent);
}

/* The cell of the n-th (from 0) mate of crossover_mate's kind. */
static size_t nth_mate(const kevo_archive *a, size_t pc,
                       const kevo_candidate *parent, bool writes_code,
                       uint64_t n)
{
    for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
         c = kevo_archive_next(a, c)) {
        if (crossover_mate(a, c, pc, parent, writes_code) && n-- == 0)
            return c;
    }
    return KEVO_NO_CELL;
}

/* A second parent for a request whose parent sits in cell pc of a: with
 * probability CROSSOVER_RATE, the fitter of two mates drawn at random
 * (crossover_mate); KEVO_NO_CELL for none. writes_code: the operator takes
 * prompts (it writes code). */
static size_t pick_second_parent(kevo_search *s, const kevo_archive *a,
                                 size_t pc, bool writes_code)
{
    if (kevo_rng_uniform(s->pop.rng) >= CROSSOVER_RATE)
        return KEVO_NO_CELL;
    const kevo_candidate *parent = kevo_archive_candidate(a, pc);
    uint64_t n = 0;
    for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
         c = kevo_archive_next(a, c))
        n += crossover_mate(a, c, pc, parent, writes_code);
    if (n == 0)
        return KEVO_NO_CELL;
    size_t best = KEVO_NO_CELL;
    for (int draw = 0; draw < 2; draw++) {
        size_t c = nth_mate(a, pc, parent, writes_code,
                            kevo_rng_uniform_int(s->pop.rng, n));
        if (best == KEVO_NO_CELL ||
            kevo_archive_fitness(a, c) > kevo_archive_fitness(a, best))
            best = c;
    }
    return best;
}

/* Prompt pid's sections as named texts into sections (room for
 * KEVO_PROMPT_SECTIONS_MAX), borrowed from the pool; returns how many. */
static size_t prompt_sections(const kevo_promptpool *pool, uint64_t pid,
                              kevo_operator_text *sections)
{
    size_t n = kevo_promptpool_section_count(pool, pid);
    for (size_t i = 0; i < n && i < KEVO_PROMPT_SECTIONS_MAX; i++) {
        sections[i].name = kevo_promptpool_section_name(pool, pid, i);
        sections[i].text = kevo_promptpool_section(pool, pid, sections[i].name);
    }
    return n < KEVO_PROMPT_SECTIONS_MAX ? n : KEVO_PROMPT_SECTIONS_MAX;
}

/* The notes of the elite of cell in a (none for KEVO_NO_CELL), borrowed. */
static kevo_operator_notes elite_notes(const kevo_archive *a, size_t cell)
{
    kevo_operator_notes n = {0};
    if (cell == KEVO_NO_CELL)
        return n;
    n.candidate = kevo_candidate_id(kevo_archive_candidate(a, cell));
    n.items = kevo__archive_notes(a, cell, &n.n_items);
    return n;
}

/* The source and the notes of the elite whose candidate id is id,
 * wherever it is; NULL and none when no island holds it. */
static const char *elite_of_id(const kevo_search *s, uint64_t id,
                               kevo_operator_notes *notes)
{
    size_t island, cell;
    *notes = (kevo_operator_notes){.candidate = id};
    if (!id || !kevo__search_find_elite(s, id, &island, &cell))
        return NULL;
    *notes = elite_notes(s->pop.islands[island], cell);
    return kevo_candidate_source(
        kevo_archive_candidate(s->pop.islands[island], cell));
}

/* Sends one request for children. *sent is false when no island has a
 * parent yet. */
kevo_status kevo__search_request(kevo_search *s, bool *sent, kevo_error *err)
{
    *sent = false;
    /* Every operator waits after failures: nothing is drawn. */
    double now = kevo__search_now();
    bool ready = false;
    for (size_t i = 0; i < s->ops.n && !ready; i++)
        ready = !backing_off(&s->ops.list[i], now);
    if (!ready)
        return KEVO_OK;
    size_t island = (size_t)(s->progress.requests % s->pop.nislands);
    kevo_archive *a = s->pop.islands[island];
    if (kevo_archive_size(a) == 0) {
        for (size_t i = 0; i < s->pop.nislands && kevo_archive_size(a) == 0;
             i++) {
            island = (island + 1) % s->pop.nislands;
            a = s->pop.islands[island];
        }
        if (kevo_archive_size(a) == 0)
            return KEVO_OK;
    }
    size_t cell;
    kevo_status rc = kevo_archive_select(
        a, s->pop.rng, pick_rule(s),
        (double)s->cfg.opt[KEVO_SEARCH_TEMPERATURE_PPM] / 1e6, &cell, err);
    if (rc != KEVO_OK)
        return rc;
    const kevo_candidate *parent = kevo_archive_candidate(a, cell);
    size_t opi = pick_operator(s, now);
    kevo__search_op *o = &s->ops.list[opi];

    kevo__search_req r = {.op = opi,
                          .island = island,
                          .parent_cell = cell,
                          .parent_id = kevo_candidate_id(parent),
                          .parent_fitness = kevo_archive_fitness(a, cell),
                          .prompt = -1};
    kevo_operator_text sections[KEVO_PROMPT_SECTIONS_MAX];
    size_t nsections = 0;
    if (o->prompts && kevo_promptpool_size(s->ops.pool) > 0) {
        uint64_t pid;
        rc = kevo_promptpool_choose(s->ops.pool, s->pop.rng, &pid, err);
        if (rc != KEVO_OK)
            return rc;
        nsections = prompt_sections(s->ops.pool, pid, sections);
        r.prompt = (int64_t)pid;
    }
    size_t k = (size_t)s->cfg.opt[KEVO_SEARCH_INSPIRATIONS];
    size_t cells[16], n = 0;
    kevo_operator_inspiration insp[16];
    if (k > 0) {
        rc = kevo_archive_inspirations(a, s->pop.rng, cell, k, cells, &n, err);
        if (rc != KEVO_OK)
            return rc;
    }
    /* The second parent is shown once: not again among the
     * inspirations. */
    size_t second = pick_second_parent(s, a, cell, o->prompts);
    const kevo_candidate *mate =
        second != KEVO_NO_CELL ? kevo_archive_candidate(a, second) : NULL;
    /* The notes of the parent, the second parent and each inspiration,
     * in that order. */
    kevo_operator_notes notes[2 + KEVO_ARRAY_SIZE(insp)];
    notes[0] = elite_notes(a, cell);
    notes[1] = elite_notes(a, second);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (cells[i] == second)
            continue;
        insp[m].candidate = kevo_archive_candidate(a, cells[i]);
        insp[m].summary_json = NULL;
        notes[2 + m] = elite_notes(a, cells[i]);
        m++;
    }
    kevo_operator_failure failures[8];
    size_t nfailures = kevo__search_failures_of(s, r.parent_id, failures,
                                                KEVO_ARRAY_SIZE(failures));
    kevo_operator_request req = {
        .failures = nfailures ? failures : NULL,
        .n_failures = nfailures,
        .size = sizeof req,
        .parent = parent,
        .inspirations = m ? insp : NULL,
        .n_inspirations = m,
        .second_parent = mate,
        .prompt_sections = nsections ? sections : NULL,
        .n_prompt_sections = nsections,
        .notes = notes,
        .n_notes = 2 + m,
        .prompt_id = r.prompt,
        .n_children = (uint32_t)s->cfg.opt[KEVO_SEARCH_CHILDREN]};
    rc = kevo_operator_submit(o->op, &req, &r.id, err);
    if (rc != KEVO_OK)
        return rc;
    s->progress.requests++;
    o->requests++;
    *sent = true;
    return kevo__search_add_req(s, &r, err);
}

uint64_t kevo__search_prompt_children_judged(const kevo_search *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->ops.n; i++)
        n += s->ops.list[i].prompts ? s->ops.list[i].evaluated : 0;
    return n;
}

/* Sends a prompt for revision when the pool says one is due. */
kevo_status kevo__search_revise(kevo_search *s, kevo_error *err)
{
    size_t opi = SIZE_MAX;
    for (size_t i = 0; i < s->ops.n && opi == SIZE_MAX; i++) {
        if (s->ops.list[i].prompts)
            opi = i;
    }
    if (opi == SIZE_MAX || kevo_promptpool_size(s->ops.pool) == 0)
        return KEVO_OK;
    /* A revision learns from children: none is asked for before children
     * were judged since the last one, so that requests that give no child
     * never feed a loop of revisions. */
    uint64_t judged = kevo__search_prompt_children_judged(s);
    if (judged <= s->ops.judged_at_revision)
        return KEVO_OK;
    uint64_t pid;
    kevo_prompt_record rec = {.size = sizeof rec};
    kevo_status rc = kevo_promptpool_revision_due(s->ops.pool, &pid, &rec, err);
    if (rc != KEVO_OK || pid == KEVO_PROMPT_NONE)
        return rc;
    kevo_operator_text sections[KEVO_PROMPT_SECTIONS_MAX];
    size_t nsections = prompt_sections(s->ops.pool, pid, sections);
    /* The best and the worst child, while they are elites. */
    kevo_operator_notes notes[2];
    const char *best = elite_of_id(s, rec.best_child, &notes[0]);
    const char *worst = elite_of_id(s, rec.worst_child, &notes[1]);
    kevo_operator_revision rev = {.size = sizeof rev,
                                  .prompt_id = (int64_t)pid,
                                  .prompt_name =
                                      kevo_promptpool_name(s->ops.pool, pid),
                                  .sections = sections,
                                  .n_sections = nsections,
                                  .record = &rec,
                                  .best_source = best,
                                  .worst_source = worst,
                                  .notes = notes,
                                  .n_notes = 2};
    kevo_operator_failure kinds[KEVO_PROMPT_FAILURE_KINDS_MAX],
        failed[KEVO_PROMPT_FAILED_CHILDREN];
    kevo__search_revision_failures(s, pid, &rev, kinds, failed);
    kevo__search_req r = {.op = opi,
                          .prompt = (int64_t)pid,
                          .revision = true,
                          .revised_prompt = pid,
                          .parent_cell = KEVO_NO_CELL};
    rc = kevo_operator_revise(s->ops.list[opi].op, &rev, &r.id, err);
    if (rc != KEVO_OK)
        return rc;
    s->ops.list[opi].revisions++;
    s->ops.judged_at_revision = judged;
    return kevo__search_add_req(s, &r, err);
}

/* ---- requests without a child --------------------------------------------
 * An operator whose requests (repairs included) give no child to evaluate
 * (a reply without a kernel, one the host refused, a transfer that
 * failed, ...) is asked again only after a wait that doubles with each
 * failure in a row, and the search stops once one operator failed
 * operator_failures times in a row: a model that answers with prose must
 * not turn into thousands of requests a minute. A child that reaches
 * evaluation (whatever its verdict) ends the run of failures;
 * "exhausted" (nothing new to propose) and "budget" (the operator's own
 * budget is spent), which count towards KEVO_STOP_EXHAUSTED instead, and
 * children past the evaluation budget neither count nor end it. */

void kevo__search_streak_clear(kevo__search_streak *k)
{
    free(k->last);
    memset(k, 0, sizeof *k);
}

static void streak_kind(kevo__search_streak *k, const char *kind)
{
    for (size_t i = 0; i < k->nkinds; i++) {
        if (strcmp(k->kinds[i].kind, kind) == 0) {
            k->kinds[i].n++;
            return;
        }
    }
    if (k->nkinds == KEVO__STREAK_KINDS) {
        k->other++;
        return;
    }
    snprintf(k->kinds[k->nkinds].kind, sizeof k->kinds[0].kind, "%s", kind);
    k->kinds[k->nkinds++].n = 1;
}

/* The wait before an operator's next request after n requests in a row
 * without a child, in seconds: none after one (a working model fails now
 * and then); then failure_backoff_ms, twice as long after each further
 * failure, at most failure_backoff_max_ms. */
static double backoff_seconds(const kevo_search *s, uint64_t n)
{
    double base = (double)s->cfg.opt[KEVO_SEARCH_FAILURE_BACKOFF_MS] / 1e3;
    double cap = (double)s->cfg.opt[KEVO_SEARCH_FAILURE_BACKOFF_MAX_MS] / 1e3;
    if (n < 2 || base <= 0)
        return 0;
    double d = ldexp(base, n - 2 < 60 ? (int)(n - 2) : 60);
    return d < cap ? d : cap;
}

/* Request r of operator o ended with no child to evaluate: res says how
 * it failed. */
static kevo_status streak_failed(kevo_search *s, kevo__search_op *o,
                                 const kevo_operator_result *res,
                                 kevo_error *err)
{
    kevo__search_streak *k = &o->streak;
    const char *last = NULL;
    size_t nf = kevo_operator_result_failure_count(res);
    for (size_t i = 0; i < nf; i++) {
        streak_kind(k, kevo_operator_result_failure_kind(res, i));
        last = kevo_operator_result_failure_reason(res, i);
    }
    /* An operator that reports its refused children as failures too (the
     * llm operator does) is counted once. */
    size_t nr = nf ? 0 : kevo_operator_result_refused_count(res);
    for (size_t i = 0; i < nr; i++) {
        const char *kind = NULL, *why = NULL;
        kevo_operator_result_refused(res, i, NULL, &kind, &why);
        streak_kind(k, kind ? kind : "invalid");
        last = why;
    }
    if (nf == 0 && nr == 0) {
        streak_kind(k, "empty");
        last = "the request ended without a child or a failure";
    }
    k->n++;
    if (last) {
        char *copy = kevo__strdup(last);
        if (!copy)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        free(k->last);
        k->last = copy;
    }
    double wait = backoff_seconds(s, k->n);
    k->not_before = wait > 0 ? kevo__search_now() + wait : 0;
    if (wait <= 0)
        return KEVO_OK;
    return kevo__search_log(s, "backoff",
                            json_pack("{s:s, s:I, s:f}", "operator",
                                      kevo_operator_name(o->op), "failures",
                                      (json_int_t)k->n, "wait_s", wait),
                            err);
}

size_t kevo__search_failing_operator(const kevo_search *s)
{
    int64_t limit = s->cfg.opt[KEVO_SEARCH_OPERATOR_FAILURES];
    for (size_t i = 0; limit > 0 && i < s->ops.n; i++) {
        if (s->ops.list[i].streak.n >= (uint64_t)limit)
            return i;
    }
    return SIZE_MAX;
}

char *kevo__search_failures_text(const kevo_search *s, size_t i)
{
    const kevo__search_op *o = &s->ops.list[i];
    const kevo__search_streak *k = &o->streak;
    kevo_buf b = {0};
    kevo__buf_printf(&b,
                     "operator %s: %llu requests in a row (repairs included) "
                     "gave no child to evaluate (",
                     kevo_operator_name(o->op), (unsigned long long)k->n);
    for (size_t j = 0; j < k->nkinds; j++)
        kevo__buf_printf(&b, "%s%s %llu", j ? ", " : "", k->kinds[j].kind,
                         (unsigned long long)k->kinds[j].n);
    if (k->other)
        kevo__buf_printf(&b, ", other kinds %llu",
                         (unsigned long long)k->other);
    kevo__buf_printf(&b, ")%s%s", k->last ? "; the last: " : "",
                     k->last ? k->last : "");
    return kevo__buf_take(&b);
}

/* ---- operator results ---------------------------------------------------- */

static kevo_status take_revision(kevo_search *s, const kevo__search_req *r,
                                 kevo_operator_result *res, kevo_error *err)
{
    const char *opname = kevo_operator_name(s->ops.list[r->op].op);
    for (size_t i = 0; i < kevo_operator_result_prompt_count(res); i++) {
        uint64_t id = 0, evicted = 0;
        int added = 0;
        kevo_error e = KEVO__ERROR_INIT;
        size_t n = 0;
        const kevo_operator_text *t =
            kevo_operator_result_prompt_sections(res, i, &n);
        const char *keys[KEVO_PROMPT_SECTIONS_MAX];
        const char *texts[KEVO_PROMPT_SECTIONS_MAX];
        for (size_t k = 0; k < n && k < KEVO_PROMPT_SECTIONS_MAX; k++) {
            keys[k] = t[k].name;
            texts[k] = t[k].text;
        }
        kevo_status rc =
            kevo_promptpool_add(s->ops.pool, r->revised_prompt, NULL, keys,
                                texts, n, &id, &added, &evicted, &e);
        json_t *f =
            json_pack("{s:I, s:s}", "parent", (json_int_t)r->revised_prompt,
                      "operator", opname);
        if (rc == KEVO_OK)
            json_object_set_new(f, "id", json_integer((json_int_t)id));
        else
            json_object_set_new(f, "reason", json_string(e.text));
        rc = kevo__search_log(s, "prompt_revised", f, err);
        if (rc != KEVO_OK)
            return rc;
    }
    for (size_t i = 0; i < kevo_operator_result_failure_count(res); i++) {
        kevo_status rc = kevo__search_log(
            s, "failure",
            json_pack("{s:s, s:I, s:s, s:s, s:b}", "operator", opname, "prompt",
                      (json_int_t)r->revised_prompt, "kind",
                      kevo_operator_result_failure_kind(res, i), "reason",
                      kevo_operator_result_failure_reason(res, i), "revision",
                      1),
            err);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

static kevo_status take_children(kevo_search *s, const kevo__search_req *r,
                                 kevo_operator_result *res, kevo_error *err)
{
    kevo__search_op *o = &s->ops.list[r->op];
    const char *opname = kevo_operator_name(o->op);
    size_t taken = 0, dropped = 0;
    int64_t max = s->cfg.opt[KEVO_SEARCH_MAX_EVALS];
    for (size_t i = 0; i < kevo_operator_result_child_count(res); i++) {
        kevo_candidate *c = kevo_operator_result_take_child(res, i);
        if (!c)
            continue;
        if (max > 0 && s->progress.submitted >= (uint64_t)max) {
            kevo_candidate_free(c); /* past the budget */
            dropped++;
            continue;
        }
        uint64_t id = s->progress.next_id++;
        kevo_candidate_set_id(c, id);
        if (s->run.dir) {
            char path[64];
            snprintf(path, sizeof path, "candidates/%llu.cu",
                     (unsigned long long)id);
            const char *src = kevo_candidate_source(c);
            kevo_status rc =
                kevo_rundir_write_file(s->run.dir, path, src, strlen(src), err);
            if (rc != KEVO_OK) {
                kevo_candidate_free(c);
                return rc;
            }
        }
        kevo__search_job proto = {
            .op = r->op,
            .island = r->island,
            .parent_cell = r->parent_cell,
            .parent_id = r->parent_id,
            .parent_fitness = r->parent_fitness,
            .request = r->id,
            .attempt = kevo_operator_result_child_attempt(res, i),
            .turn = r->turn};
        s->progress.submitted++;
        o->children++;
        taken++;
        kevo_status rc =
            kevo__search_submit(s, KEVO__JOB_CHILD, c, &proto, 0, err);
        if (rc != KEVO_OK)
            return rc;
    }
    kevo_status rc = kevo__search_take_refused(s, r, res, err);
    if (rc != KEVO_OK)
        return rc;
    size_t nfail = kevo_operator_result_failure_count(res);
    bool exhausted = false;
    for (size_t i = 0; i < nfail; i++) {
        const char *kind = kevo_operator_result_failure_kind(res, i);
        const char *why = kevo_operator_result_failure_reason(res, i);
        /* An operator whose budget is spent has nothing more either. */
        exhausted = exhausted || strcmp(kind, KEVO_FAIL_EXHAUSTED) == 0 ||
                    strcmp(kind, KEVO_FAIL_BUDGET) == 0;
        /* Replies without a kernel tell of the prompt, too. */
        if (r->prompt >= 0 && (strcmp(kind, KEVO_FAIL_NO_CODE) == 0 ||
                               strcmp(kind, KEVO_FAIL_EDIT) == 0))
            kevo_promptpool_credit_failure(s->ops.pool, (uint64_t)r->prompt,
                                           kind, 0, why, NULL);
        json_t *f = json_pack("{s:s, s:s, s:s}", "operator", opname, "kind",
                              kind, "reason", why ? why : "");
        json_object_set_new(f, "prompt",
                            r->prompt >= 0 ? json_integer(r->prompt)
                                           : json_null());
        if (r->turn > 0)
            json_object_set_new(f, "repair", json_integer(r->turn));
        rc = kevo__search_log(s, "failure", f, err);
        if (rc != KEVO_OK)
            return rc;
        kevo_search_event ev = {.size = sizeof ev,
                                .type = KEVO_SEARCH_FAILURE,
                                .fitness = NAN,
                                .text = why};
        kevo__search_emit(s, &ev);
    }
    /* A repair that gave nothing: its failed child was credited already. */
    if (taken == 0 && r->turn == 0) {
        o->failures++;
        if (r->prompt >= 0)
            kevo_promptpool_credit(s->ops.pool, (uint64_t)r->prompt, 0, NAN, 0,
                                   NULL);
        s->progress.exhausted_run =
            exhausted ? s->progress.exhausted_run + 1 : 0;
    } else if (taken > 0) {
        s->progress.exhausted_run = 0;
    }
    if (taken > 0)
        kevo__search_streak_clear(&o->streak);
    else if (!exhausted && dropped == 0)
        return streak_failed(s, o, res, err);
    return KEVO_OK;
}

/* Takes every ended operator request: children go to evaluation. */
kevo_status kevo__search_take_results(kevo_search *s, kevo_error *err)
{
    kevo_operator_result *res;
    while (kevo_operator_host_next_result(s->ops.host, &res) == KEVO_OK) {
        uint64_t id = kevo_operator_result_id(res);
        size_t i = 0;
        while (i < s->pipe.nreqs && s->pipe.reqs[i].id != id)
            i++;
        kevo_status rc = KEVO_OK;
        if (i < s->pipe.nreqs) {
            kevo__search_req r = s->pipe.reqs[i];
            memmove(&s->pipe.reqs[i], &s->pipe.reqs[i + 1],
                    (s->pipe.nreqs - i - 1) * sizeof *s->pipe.reqs);
            s->pipe.nreqs--;
            rc = r.revision ? take_revision(s, &r, res, err)
                            : take_children(s, &r, res, err);
        }
        kevo_operator_result_free(res);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}
