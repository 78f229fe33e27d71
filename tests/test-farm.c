/*
 * test-farm.c: a search spread over processes forked from the test
 * (kevo_farm_spawn()), scored by a function of the candidate's parameters
 * on every rank. The decisions must be those of one rank with the same
 * seed and depth; every child is judged exactly once, its score coming
 * back to its own request; a member that dies in the middle gives its
 * children to the others and the decisions stay the same; a run stopped
 * and resumed with a farm goes on as one stopped and resumed alone.
 */
#include "config.h"

#include <jansson.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "farm/farm_private.h"
#include "farm_search.h"
#include "tap.h"

static kevo_task *load_saxpy(void)
{
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    kevo_task *t = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_load(path, &t, &e) != KEVO_OK)
        bail_out("cannot load %s: %s", path, e.text);
    free(path);
    return t;
}

typedef struct outcome {
    farm_trace trace;
    kevo_search_stats stats;
    json_t *summary; /* with a run directory */
    kevo_status rc;
    char error[KEVO_ERROR_TEXT_SIZE];
} outcome;

/*
 * Runs the search with members forked processes (0: alone), the member of
 * rank die_rank ending itself at its die_at-th score. Only rank 0 comes
 * back from here.
 */
static int nan_instead; /* the member gives NaN instead of ending */
static int garble_rank; /* this member first sends a message of no kind */

static void run(unsigned members, int die_rank, unsigned die_at, long evals,
                const char *dir, int resume, outcome *out)
{
    memset(out, 0, sizeof *out);
    kevo_error e = KEVO__ERROR_INIT;
    kevo_farm *farm = NULL;
    if (members && kevo_farm_spawn(members, &farm, &e) != KEVO_OK)
        bail_out("kevo_farm_spawn: %s", e.text);
    farm_scoring sc = {.rank = kevo_farm_rank(farm),
                       .die_rank = die_rank,
                       .die_at = die_at,
                       .nan = nan_instead};
    if (garble_rank && kevo_farm_rank(farm) == garble_rank) {
        json_t *bogus = json_pack("{s:s}", "op", "bogus");
        kevo__farm_send(farm, 0, bogus, NULL);
        json_decref(bogus);
    }
    kevo_task *task = load_saxpy();
    kevo_search *s =
        farm_search_new(task, farm, &sc, &out->trace, evals, dir, resume, &e);
    out->rc = s ? kevo_search_run(s, &e) : e.code;
    snprintf(out->error, sizeof out->error, "%s", e.text);
    if (kevo_farm_rank(farm) != 0) {
        /* A member: nothing of the test runs here. */
        kevo_search_free(s);
        kevo_task_free(task);
        farm_trace_free(&out->trace);
        kevo_farm_free(farm);
        _exit(out->rc == KEVO_OK ? 0 : 1);
    }
    out->stats.size = sizeof out->stats;
    if (s)
        kevo_search_get_stats(s, &out->stats);
    kevo_search_free(s);
    kevo_task_free(task);
    kevo_farm_free(farm);
    if (dir) {
        char *path = kevo__path_join(dir, "summary.json");
        out->summary = json_load_file(path, 0, NULL);
        free(path);
    }
}

static void outcome_free(outcome *o)
{
    farm_trace_free(&o->trace);
    json_decref(o->summary);
}

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/kevo-test-farm-XXXXXX";
    char *d = mkdtemp(tmpl);
    if (!d)
        bail_out("mkdtemp failed");
    return strdup(d);
}

static void remove_tree(const char *dir)
{
    char *cmd = kevo__asprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    free(cmd);
}

/* The evaluations the summary's members returned, together. */
static long long member_evaluations(const json_t *summary, int *ended,
                                    const char **why)
{
    long long n = 0;
    size_t i;
    const json_t *r;
    *ended = 0;
    *why = "";
    json_array_foreach (
        json_object_get(json_object_get(summary, "farm"), "ranks"), i, r) {
        n += json_integer_value(json_object_get(r, "evaluations"));
        const char *w = json_string_value(json_object_get(r, "ended"));
        if (w) {
            (*ended)++;
            *why = w;
        }
    }
    return n;
}

static void test_api(void)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_farm *farm = (kevo_farm *)1;
    is_int(kevo_farm_spawn(0, &farm, &e), KEVO_EINVAL, "0 members refused");
    like_str(e.text, "0 members (allowed 1..1024)", "... with the bounds");
    ok(farm == NULL, "... and no farm");
    is_int(kevo_farm_rank(NULL), 0, "no farm: rank 0");
    is_int(kevo_farm_size(NULL), 1, "no farm: one rank");
    kevo_farm_free(NULL);
#ifndef KEVO_WITH_MPI
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_farm_mpi(&farm, &e), KEVO_EEXTERNAL,
           "without MPI, kevo_farm_mpi fails");
    like_str(e.text, "--with-mpi", "... saying how to build with it");
#endif
    kevo_task *task = load_saxpy();
    kevo_search *s = NULL;
    kevo_search_new(task, &s, NULL);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_set_farm(s, NULL, &e), KEVO_EINVAL, "NULL farm");
    int64_t lo, hi, def;
    is_int(kevo_search_option_bounds(KEVO_SEARCH_RANK_DEPTH, &lo, &hi, &def),
           KEVO_OK, "option rank_depth");
    ok(lo == 0 && hi == 4096 && def == 0, "rank_depth in [0, 4096], default 0");
    kevo_search_free(s);
    kevo_task_free(task);
}

static void test_same_decisions(void)
{
    outcome alone, farmed;
    run(0, 0, 0, 60, NULL, 0, &alone);
    is_int(alone.rc, KEVO_OK, "one rank: the search ran");
    char *dir = temp_dir();
    char *rd = kevo__path_join(dir, "run");
    run(2, 0, 0, 60, rd, 0, &farmed);
    is_int(farmed.rc, KEVO_OK, "three ranks: the search ran (%s)",
           farmed.error);
    is_uint(farmed.trace.judged, 60, "60 children judged");
    is_uint(farmed.trace.duplicates, 0, "... each exactly once");
    ok(alone.trace.text && farmed.trace.text &&
           strcmp(alone.trace.text, farmed.trace.text) == 0,
       "the same decisions as one rank, in the same order, each with its "
       "own score");
    if (alone.trace.text && farmed.trace.text &&
        strcmp(alone.trace.text, farmed.trace.text) != 0)
        diag("alone: %.300s\nfarmed: %.300s", alone.trace.text,
             farmed.trace.text);
    is_double(farmed.stats.best_fitness, alone.stats.best_fitness, 0,
              "the same best fitness");
    int ended;
    const char *why;
    long long n = member_evaluations(farmed.summary, &ended, &why);
    is_int(n, 59, "the members scored every child but the seed (%lld)", n);
    is_int(ended, 0, "no member ended early");
    is_str(json_string_value(json_object_get(
               json_object_get(farmed.summary, "farm"), "transport")),
           "processes", "summary.json names the transport");
    outcome_free(&alone);
    outcome_free(&farmed);
    remove_tree(dir);
    free(rd);
    free(dir);
}

static void test_member_dies(void)
{
    outcome alone, farmed;
    run(0, 0, 0, 60, NULL, 0, &alone);
    char *dir = temp_dir();
    char *rd = kevo__path_join(dir, "run");
    /* Rank 2 ends itself while scoring its 7th child. */
    run(2, 2, 7, 60, rd, 0, &farmed);
    is_int(farmed.rc, KEVO_OK, "a member died: the search went on (%s)",
           farmed.error);
    is_uint(farmed.trace.judged, 60, "60 children judged");
    is_uint(farmed.trace.duplicates, 0, "... each exactly once");
    ok(alone.trace.text && farmed.trace.text &&
           strcmp(alone.trace.text, farmed.trace.text) == 0,
       "the same decisions as one rank");
    int ended;
    const char *why;
    long long n = member_evaluations(farmed.summary, &ended, &why);
    is_int(ended, 1, "one member ended");
    is_str(why, "exited with status 3", "... and summary.json says how");
    ok(n < 59, "the others scored the rest (%lld by members)", n);
    outcome_free(&alone);
    outcome_free(&farmed);
    remove_tree(dir);
    free(rd);
    free(dir);
}

static void test_member_nan(void)
{
    outcome o;
    nan_instead = 1;
    run(1, 1, 5, 60, NULL, 0, &o);
    nan_instead = 0;
    is_int(o.rc, KEVO_ERANGE,
           "a member's NaN fitness stops the search as rank 0's would");
    like_str(o.error, "gave fitness nan for candidate", "... naming it");
    like_str(o.error, "on rank 1", "... and the rank");
    outcome_free(&o);
}

static void test_member_garbles(void)
{
    outcome alone, farmed;
    run(0, 0, 0, 60, NULL, 0, &alone);
    char *dir = temp_dir();
    char *rd = kevo__path_join(dir, "run");
    garble_rank = 2;
    run(2, 0, 0, 60, rd, 0, &farmed);
    garble_rank = 0;
    is_int(farmed.rc, KEVO_OK,
           "a member that breaks the protocol: the search went on (%s)",
           farmed.error);
    ok(alone.trace.text && farmed.trace.text &&
           strcmp(alone.trace.text, farmed.trace.text) == 0,
       "... with the same decisions as one rank");
    is_uint(farmed.trace.duplicates, 0, "... each child judged once");
    int ended;
    const char *why;
    member_evaluations(farmed.summary, &ended, &why);
    is_int(ended, 1, "that member was let go");
    like_str(why, "rank 2 sent an unknown message \"bogus\"",
             "... and summary.json says why");
    outcome_free(&alone);
    outcome_free(&farmed);
    remove_tree(dir);
    free(rd);
    free(dir);
}

static void test_resume(void)
{
    char *dir = temp_dir();
    char *a = kevo__path_join(dir, "alone"), *b = kevo__path_join(dir, "farm");
    outcome a1, a2, b1, b2;
    run(0, 0, 0, 30, a, 0, &a1);
    run(0, 0, 0, 70, a, 1, &a2);
    run(2, 0, 0, 30, b, 0, &b1);
    is_int(b1.rc, KEVO_OK, "a farmed run stopped at 30");
    run(2, 0, 0, 70, b, 1, &b2);
    is_int(b2.rc, KEVO_OK, "... and resumed with a farm to 70 (%s)", b2.error);
    ok(a1.trace.text && b1.trace.text &&
           strcmp(a1.trace.text, b1.trace.text) == 0,
       "the first part decided alike");
    ok(a2.trace.text && b2.trace.text &&
           strcmp(a2.trace.text, b2.trace.text) == 0,
       "the resumed part decided alike");
    is_uint(b2.trace.duplicates, 0, "nothing judged twice after the resume");
    ok(json_integer_value(json_object_get(b2.summary, "evaluations")) ==
           json_integer_value(json_object_get(a2.summary, "evaluations")),
       "as many evaluations in all as alone (%lld)",
       (long long)json_integer_value(
           json_object_get(b2.summary, "evaluations")));
    outcome_free(&a1);
    outcome_free(&a2);
    outcome_free(&b1);
    outcome_free(&b2);
    remove_tree(dir);
    free(a);
    free(b);
    free(dir);
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);

    test_api();
    test_same_decisions();
    test_member_dies();
    test_member_nan();
    test_member_garbles();
    test_resume();
    return done_testing();
}
