/*
 * kevo_search_view.c: what kevo search shows on the terminal: the line
 * that opens a run, the live progress line (plain lines for champions and
 * checkpoints when stderr is not a terminal), the operators' messages, and
 * the closing figures of a run without a summary.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kevo_cli.h"
#include "kevo_search_view.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void view_values(const view *vw, progress_values *v)
{
    kevo_search_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    memset(v, 0, sizeof *v);
    if (kevo_search_get_stats(vw->search, &st) != KEVO_OK)
        return;
    int64_t max = kevo_search_get_int(vw->search, KEVO_SEARCH_MAX_EVALS);
    v->evaluations = st.evaluations;
    v->max_evals = max > 0 ? (uint64_t)max : 0;
    v->best = st.best_fitness;
    v->champion = st.champion_fitness;
    v->coverage = st.coverage;
    v->evals_per_second = st.evals_per_second;
    v->tokens = st.input_tokens + st.output_tokens;
    v->llm = vw->llm || v->tokens > 0;
    v->cost = st.cost;
    v->seconds_left = progress_time_left(st.seconds_left, st.evaluations,
                                         v->max_evals, st.evals_per_second);
}

void view_clear(view *vw)
{
    if (!vw->live || vw->drawn == 0)
        return;
    fprintf(stderr, "\r%*s\r", (int)vw->drawn, "");
    fflush(stderr);
    vw->drawn = 0;
}

void view_draw(view *vw)
{
    if (!vw->live || !progress_due(&vw->last_draw, now_seconds()))
        return;
    progress_values v;
    char line[1024];
    view_values(vw, &v);
    int width = progress_terminal_width(STDERR_FILENO) - 1;
    size_t cols = progress_line(&v, width, vw->color, line, sizeof line);
    fprintf(stderr, "\r%s", line);
    if (cols < vw->drawn)
        fprintf(stderr, "%*s", (int)(vw->drawn - cols), "");
    fflush(stderr);
    vw->drawn = cols;
}

static void view_line(view *vw, const char *line)
{
    view_clear(vw);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    view_draw(vw);
}

void view_on_event(kevo_search *search, const kevo_search_event *event,
                   void *user)
{
    view *vw = user;
    char line[2048];
    (void)search;
    if (event->type == KEVO_SEARCH_CHAMPION && (vw->live || vw->plain)) {
        kevo_search_stats st;
        memset(&st, 0, sizeof st);
        st.size = sizeof st;
        kevo_search_get_stats(vw->search, &st);
        const kevo_candidate *c = event->candidate;
        progress_champion_line(event->fitness, c ? kevo_candidate_id(c) : 0,
                               c ? kevo_candidate_operator(c) : NULL,
                               st.evaluations, line, sizeof line);
        view_line(vw, line);
    } else if (event->type == KEVO_SEARCH_STOPPED && event->text) {
        /* Why it stopped, beyond the reason's name (an operator whose
         * requests kept failing): shown whatever the view. */
        snprintf(line, sizeof line, "%s: stopped: %s", program, event->text);
        view_line(vw, line);
    } else if (event->type == KEVO_SEARCH_CHECKPOINT && vw->plain) {
        progress_values v;
        view_values(vw, &v);
        progress_checkpoint_line(&v, line, sizeof line);
        view_line(vw, line);
    } else {
        view_draw(vw);
    }
}

void view_on_log(void *user, kevo_log_level level, const char *op_name,
                 const char *message)
{
    view *vw = user;
    view_clear(vw);
    fprintf(stderr, "%s: %s: %s%s\n", program, op_name,
            level == KEVO_LOG_ERROR ? "error: " : "warning: ", message);
    view_draw(vw);
}

/* What keeps a model's bill in check, said before the search starts: the
 * token budget (20 million unless set), the cost budget when set, and
 * the failures in a row after which the search stops. */
static void view_llm_limits(kevo_search *search)
{
    int64_t tokens = kevo_search_get_int(search, KEVO_SEARCH_MAX_TOKENS);
    int64_t micros = kevo_search_get_int(search, KEVO_SEARCH_MAX_COST_MICROS);
    int64_t fails = kevo_search_get_int(search, KEVO_SEARCH_OPERATOR_FAILURES);
    fprintf(stderr, "%s: llm: ", program);
    if (tokens > 0)
        fprintf(stderr,
                "stops at %lld tokens (--set max_tokens=N; 0: no "
                "limit)",
                (long long)tokens);
    else
        fprintf(stderr, "no token budget");
    if (micros > 0)
        fprintf(stderr, ", or a cost of %.6g", (double)micros / 1e6);
    if (fails > 0)
        fprintf(stderr,
                "; stops after %lld requests of one operator in a row "
                "without a child (--set operator_failures=N)",
                (long long)fails);
    fprintf(stderr, "\n");
}

void view_start(const view *vw, bool resumed, const kevo_task *task,
                kevo_evaluator *ev, json_t *plan, const char *dir)
{
    if (!vw->live && !vw->plain)
        return;
    json_t *ops = json_object_get(plan, "operators"), *op;
    size_t i;
    fprintf(stderr, "%s: %s %s on %s; operators", program,
            resumed ? "resuming" : "searching", kevo_task_name(task),
            kevo_evaluator_device_name(ev));
    json_array_foreach (ops, i, op)
        fprintf(stderr, "%s %s (weight %g)", i ? "," : "",
                json_string_value(json_object_get(op, "name")),
                json_number_value(json_object_get(op, "weight")));
    int64_t evals = kevo_search_get_int(vw->search, KEVO_SEARCH_MAX_EVALS);
    int64_t secs = kevo_search_get_int(vw->search, KEVO_SEARCH_MAX_SECONDS);
    if (evals > 0)
        fprintf(stderr, "; %lld evaluations", (long long)evals);
    if (secs > 0)
        fprintf(stderr, "; %lld s", (long long)secs);
    fprintf(stderr, "; run directory %s\n", dir);
    if (vw->llm)
        view_llm_limits(vw->search);
}

void view_print_stats(kevo_search *search)
{
    kevo_search_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    if (kevo_search_get_stats(search, &st) != KEVO_OK)
        return;
    printf("\nstopped: %s; %llu evaluations (%llu failed)\n",
           kevo_stop_reason_name(st.stop), (unsigned long long)st.evaluations,
           (unsigned long long)st.failures);
    if (st.proposals > 0)
        printf("validity: %.1f%% of %llu proposals compiled and were correct "
               "(%llu repairs)\n",
               100.0 * (double)st.valid / (double)st.proposals,
               (unsigned long long)st.proposals,
               (unsigned long long)st.repairs);
    double fitness;
    const kevo_candidate *c = kevo_search_champion(search, &fitness);
    if (c)
        printf("champion: candidate %llu, fitness %.3f\n",
               (unsigned long long)kevo_candidate_id(c), fitness);
}
