/*
 * search_summary.c: what a search tells its readers. summary.json (the
 * archive, the history of the best fitness, the champion and its gate, the
 * per-shape table of seed, champion and reference, the operators' and the
 * prompts' records), which reports and scripts read, and best.cu, the
 * champion with a header saying what it is and how it was found.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive_private.h"
#include "eval/eval_private.h"
#include "fitness/fitness.h"
#include "search_private.h"

/* ---- summary.json -------------------------------------------------------- */

/* The label of bin b of an archive dimension, from the task's bins. */
static json_t *dimension_json(const kevo_search *s, size_t d)
{
    const kevo_archive *a = s->pop.islands[0];
    const kevo__archive_dim *dim = &a->dims[d];
    json_t *labels = json_array();
    char buf[64];
    for (size_t b = 0; b < dim->nbins; b++) {
        if (dim->nedges) {
            if (b == 0)
                snprintf(buf, sizeof buf, "<%g", dim->edges[0]);
            else if (b == dim->nedges)
                snprintf(buf, sizeof buf, ">=%g", dim->edges[b - 1]);
            else
                snprintf(buf, sizeof buf, "%g-%g", dim->edges[b - 1],
                         dim->edges[b]);
        } else {
            double w = (dim->hi - dim->lo) / (double)dim->nbins;
            snprintf(buf, sizeof buf, "%g-%g", dim->lo + w * (double)b,
                     dim->lo + w * (double)(b + 1));
        }
        json_array_append_new(labels, json_string(buf));
    }
    return json_pack("{s:s, s:I, s:o}", "name", dim->name, "bins",
                     (json_int_t)dim->nbins, "labels", labels);
}

static json_t *archive_json(const kevo_search *s)
{
    size_t cells = 0, filled = 0;
    double qd = 0;
    json_t *elites = json_array();
    for (size_t i = 0; i < s->pop.nislands; i++) {
        const kevo_archive *a = s->pop.islands[i];
        cells += kevo_archive_cell_count(a);
        filled += kevo_archive_size(a);
        for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
             c = kevo_archive_next(a, c)) {
            const kevo_candidate *e = kevo_archive_candidate(a, c);
            double f = kevo_archive_fitness(a, c);
            qd += f;
            json_t *coords = json_array();
            for (size_t d = 0; d < a->ndims; d++)
                json_array_append_new(
                    coords, json_integer((json_int_t)((c / a->dims[d].stride) %
                                                      a->dims[d].nbins)));
            const char *op = kevo_candidate_operator(e);
            json_array_append_new(
                elites, json_pack("{s:I, s:I, s:o, s:f, s:I, s:s, s:I}",
                                  "island", (json_int_t)i, "cell",
                                  (json_int_t)c, "coords", coords, "fitness", f,
                                  "id", (json_int_t)kevo_candidate_id(e),
                                  "operator", op ? op : "seed", "generation",
                                  (json_int_t)kevo_candidate_generation(e)));
        }
    }
    json_t *dims = json_array();
    for (size_t d = 0; d < kevo_archive_dimension_count(s->pop.islands[0]); d++)
        json_array_append_new(dims, dimension_json(s, d));
    return json_pack("{s:I, s:I, s:I, s:f, s:f, s:o, s:o}", "islands",
                     (json_int_t)s->pop.nislands, "cells", (json_int_t)cells,
                     "filled", (json_int_t)filled, "coverage",
                     cells ? (double)filled / (double)cells : 0.0, "qd_score",
                     qd, "dimensions", dims, "elites", elites);
}

static json_t *timing(double time, double floor)
{
    return json_pack(
        "{s:o, s:o}", "time", kevo__search_num(time), "efficiency",
        kevo__search_num(isfinite(time) && time > 0 ? floor / time : NAN));
}

static const char *bound_name(kevo_bound b)
{
    return b == KEVO_BOUND_COMPUTE   ? "compute"
           : b == KEVO_BOUND_LATENCY ? "latency"
                                     : "memory";
}

/* The per-shape table: the champion's results, with the seed's and the
 * reference's times they carry. */
/* The gate whose results fill the per-shape table: the champion's, else
 * (no elite passed) the fittest elite that was gated, or NULL. */
static const kevo__search_gate *table_gate(const kevo_search *s)
{
    if (s->pick.champion >= 0)
        return &s->pick.gates[s->pick.champion];
    const kevo__search_gate *best = NULL;
    for (size_t i = 0; i < s->pick.ngates; i++) {
        const kevo__search_gate *g = &s->pick.gates[i];
        if (g->done && g->train &&
            kevo_eval_result_verdict(g->train) == KEVO_VERDICT_OK &&
            (!best || g->fitness > best->fitness))
            best = g;
    }
    return best;
}

static json_t *shapes_json(const kevo_search *s)
{
    json_t *arr = json_array();
    const kevo__search_gate *g = table_gate(s);
    if (!g)
        return arr;
    const kevo_eval_result *sets[2] = {g->train, g->held};
    for (size_t k = 0; k < 2; k++) {
        const kevo_eval_result *res = sets[k];
        kevo_shape_set set = k ? KEVO_SHAPES_HELD_OUT : KEVO_SHAPES_TRAIN;
        for (size_t i = 0; res && i < kevo_eval_result_shape_count(res); i++) {
            kevo_shape_result sr = {.size = sizeof sr};
            if (kevo_eval_result_shape(res, i, &sr) != KEVO_OK)
                break;
            kevo_vars *dims = kevo_vars_new();
            if (dims)
                kevo_task_shape_vars(s->cfg.task, set, sr.index, dims);
            json_t *o = json_pack(
                "{s:s, s:I, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o}", "set",
                k ? "held_out" : "training", "index", (json_int_t)sr.index,
                "dims", kevo__search_params_json(dims), "bytes",
                kevo__search_num(sr.bytes), "flops", kevo__search_num(sr.flops),
                "floor", kevo__search_num(sr.floor), "bound",
                bound_name(sr.bound), "seed", timing(sr.seed_time, sr.floor),
                "champion", timing(sr.correct ? sr.time : NAN, sr.floor),
                "reference", timing(sr.reference_time, sr.floor));
            /* The row's times are all of one device: the one that
             * measured the result, against its own seed and reference. */
            const char *device = kevo_eval_result_device(res);
            if (o && device)
                json_object_set_new(o, "device", json_string(device));
            kevo_vars_free(dims);
            json_array_append_new(arr, o);
        }
    }
    return arr;
}

/* The gate's verdict per held-out shape: both times, which baseline, the
 * speed ratio, what the slack allowed, and the call. */
static json_t *gate_shapes_json(const kevo_search *s,
                                const kevo__search_gate *g, double slack,
                                double floor)
{
    json_t *arr = json_array();
    for (size_t i = 0; g->held && i < kevo_eval_result_shape_count(g->held);
         i++) {
        kevo_shape_result sr = {.size = sizeof sr};
        if (kevo_eval_result_shape(g->held, i, &sr) != KEVO_OK)
            break;
        kevo__gate_row row;
        kevo__gate_judge(&sr, slack, floor, &row);
        kevo_vars *dims = kevo_vars_new();
        if (dims)
            kevo_task_shape_vars(s->cfg.task, KEVO_SHAPES_HELD_OUT, sr.index,
                                 dims);
        json_t *o = json_pack(
            "{s:I, s:o, s:o, s:o, s:o, s:o, s:f, s:s, s:b, s:b, s:o}", "index",
            (json_int_t)sr.index, "dims", kevo__search_params_json(dims),
            "time", kevo__search_num(row.time), "baseline_time",
            kevo__search_num(row.base_time), "speed",
            kevo__search_num(row.speed), "efficiency",
            kevo__search_num(sr.correct ? sr.efficiency : NAN), "allowed",
            row.allowed, "call", kevo__gate_call_name(row.call), "passed",
            kevo__gate_call_passes(row.call), "paired", row.paired, "baseline",
            row.baseline ? json_string(row.baseline) : json_null());
        kevo_vars_free(dims);
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *gate_json(const kevo_search *s, const kevo__search_gate *g)
{
    double slack = NAN, floor = NAN;
    if (s->cfg.ev)
        kevo__search_gate_settings(s, &slack, &floor);
    json_t *o = json_pack("{s:I, s:b, s:f}", "id", (json_int_t)g->id, "passed",
                          g->passed, "train_fitness", g->fitness);
    json_object_set_new(o, "fitness",
                        kevo__search_num(kevo__search_gate_fitness(g)));
    json_object_set_new(o, "retimed_fitness", kevo__search_num(g->retimed));
    json_object_set_new(o, "held_out_fitness",
                        kevo__search_num(g->held_fitness));
    /* Information, not a criterion: held-out shapes of another kind have
     * their own efficiency. */
    json_object_set_new(
        o, "held_out_ratio",
        kevo__search_num(g->held_fitness / kevo__search_gate_fitness(g)));
    json_object_set_new(o, "slack", kevo__search_num(slack));
    json_object_set_new(o, "floor", kevo__search_num(floor));
    json_object_set_new(o, "reason",
                        g->reason ? json_string(g->reason) : json_null());
    /* Which devices measured it: the held-out shapes, timed in pairs with
     * the seed on one device, and the training shapes. */
    const char *held = g->held ? kevo_eval_result_device(g->held) : NULL;
    const char *train = g->train ? kevo_eval_result_device(g->train) : NULL;
    if (held)
        json_object_set_new(o, "device", json_string(held));
    if (train)
        json_object_set_new(o, "train_device", json_string(train));
    json_object_set_new(o, "shapes",
                        gate_shapes_json(s, g, isfinite(slack) ? slack : 0.1,
                                         isfinite(floor) ? floor : 0));
    return o;
}

static json_t *champion_json(const kevo_search *s)
{
    double fitness;
    const kevo_candidate *c = kevo_search_champion(s, &fitness);
    if (!c)
        return json_null();
    int64_t p = kevo_candidate_prompt(c);
    const char *op = kevo_candidate_operator(c);
    json_t *o =
        json_pack("{s:I, s:f, s:s, s:s, s:I, s:o}", "id",
                  (json_int_t)kevo_candidate_id(c), "fitness", fitness, "file",
                  "best.cu", "operator", op ? op : "seed", "generation",
                  (json_int_t)kevo_candidate_generation(c), "params",
                  kevo__search_params_json(kevo_candidate_assignment(c)));
    json_object_set_new(o, "prompt", p >= 0 ? json_integer(p) : json_null());
    json_object_set_new(o, "gate",
                        s->pick.champion >= 0
                            ? gate_json(s, &s->pick.gates[s->pick.champion])
                            : json_null());
    return o;
}

static json_t *operators_json(const kevo_search *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < s->ops.n; i++) {
        const kevo__search_op *o = &s->ops.list[i];
        uint64_t in = 0, out = 0;
        double cost = 0;
        kevo_operator_usage(o->op, &in, &out, &cost);
        json_array_append_new(
            arr,
            json_pack("{s:s, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
                      "s:I, s:I, s:f}",
                      "name", kevo_operator_name(o->op), "plugin", o->plugin,
                      "weight", o->weight, "requests", (json_int_t)o->requests,
                      "children", (json_int_t)o->children, "evaluated",
                      (json_int_t)o->evaluated, "entered",
                      (json_int_t)o->entered, "improved",
                      (json_int_t)o->improved, "failures",
                      (json_int_t)o->failures, "revisions",
                      (json_int_t)o->revisions, "input_tokens", (json_int_t)in,
                      "output_tokens", (json_int_t)out, "cost", cost));
        kevo__search_validity_put(json_array_get(arr, i), &o->validity);
    }
    return arr;
}

/* A prompt's failure kinds ({"KIND": count, ...}) and its last failed
 * children, as its record in the pool keeps them. */
static void prompt_failures(const kevo_search *s, uint64_t id, json_t *o)
{
    json_t *kinds = json_object(), *children = json_array();
    uint64_t count, cand;
    const char *kind, *diag;
    for (size_t i = 0;
         (kind = kevo_promptpool_failure_kind(s->ops.pool, id, i, &count)); i++)
        json_object_set_new(kinds, kind, json_integer((json_int_t)count));
    for (size_t i = 0; (diag = kevo_promptpool_failed_child(s->ops.pool, id, i,
                                                            &cand, &kind));
         i++)
        json_array_append_new(children,
                              json_pack("{s:I, s:s, s:s}", "candidate",
                                        (json_int_t)cand, "kind", kind,
                                        "diagnostic", diag));
    json_object_set_new(o, "failure_kinds", kinds);
    json_object_set_new(o, "failed_children", children);
}

static json_t *prompts_json(const kevo_search *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < kevo_promptpool_size(s->ops.pool); i++) {
        uint64_t id = kevo_promptpool_id(s->ops.pool, i);
        kevo_prompt_record r = {.size = sizeof r};
        if (kevo_promptpool_get_record(s->ops.pool, id, &r) != KEVO_OK)
            continue;
        const char *name = kevo_promptpool_name(s->ops.pool, id);
        json_t *o = json_pack(
            "{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I}", "id",
            (json_int_t)id, "name", name ? name : "", "parent",
            (json_int_t)kevo_promptpool_parent(s->ops.pool, id), "generation",
            (json_int_t)kevo_promptpool_generation(s->ops.pool, id), "uses",
            (json_int_t)r.uses, "children", (json_int_t)r.children, "entered",
            (json_int_t)r.entered, "beat_parent", (json_int_t)r.beat_parent,
            "mean", r.mean, "revisions", (json_int_t)r.revisions);
        json_object_set_new(o, "best_fitness",
                            kevo__search_num(r.best_fitness));
        const kevo__validity *v = kevo__search_prompt_validity(&s->ops, id);
        kevo__search_validity_put(o, v ? v : &(kevo__validity){0});
        json_object_set_new(o, "failures",
                            json_integer((json_int_t)r.failures));
        prompt_failures(s, id, o);
        json_array_append_new(arr, o);
    }
    return arr;
}

kevo_status kevo__search_write_summary(kevo_search *s, const char *state,
                                       kevo_error *err)
{
    if (!s->run.dir || !s->pop.islands)
        return KEVO_OK;
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    const char *fitness_name = "roofline";
    if (s->cfg.ev && s->pick.champion >= 0 &&
        s->pick.gates[s->pick.champion].train)
        fitness_name = kevo__eval_result_fitness_name(
            s->pick.gates[s->pick.champion].train);
    else if (s->cfg.score)
        fitness_name = "score";
    json_t *root = json_pack(
        "{s:s, s:i, s:s, s:s?, s:s?, s:s?, s:I, s:s, s:I, s:I, s:f, s:f, "
        "s:I, s:I, s:f, s:s}",
        "format", "kevo-summary", "version", 1, "task",
        kevo_task_name(s->cfg.task), "description",
        kevo_task_description(s->cfg.task), "device",
        s->cfg.ev ? kevo_evaluator_device_name(s->cfg.ev) : NULL, "command",
        s->run.command, "seed", (json_int_t)s->cfg.opt[KEVO_SEARCH_SEED],
        "state", state, "evaluations", (json_int_t)s->progress.evaluations,
        "failures", (json_int_t)s->progress.failures, "elapsed",
        s->progress.elapsed_before + st.elapsed, "evals_per_second",
        st.evals_per_second, "input_tokens", (json_int_t)st.input_tokens,
        "output_tokens", (json_int_t)st.output_tokens, "cost", st.cost,
        "fitness_name", fitness_name);
    if (!root)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (s->cfg.ev && kevo_evaluator_device_count(s->cfg.ev) > 1)
        json_object_set_new(
            root, "devices",
            json_integer((json_int_t)kevo_evaluator_device_count(s->cfg.ev)));
    json_object_set_new(root, "stop_reason",
                        s->state.stop
                            ? json_string(kevo_stop_reason_name(s->state.stop))
                            : json_null());
    if (s->state.stop_text)
        json_object_set_new(root, "stop_message",
                            json_string(s->state.stop_text));
    json_object_set_new(root, "archive", archive_json(s));
    json_t *hist = json_array();
    for (size_t i = 0; i < s->progress.nhistory; i++)
        json_array_append_new(
            hist, json_pack("[I, f]", (json_int_t)s->progress.history[2 * i],
                            s->progress.history[2 * i + 1]));
    json_object_set_new(root, "history", hist);
    json_object_set_new(root, "champion", champion_json(s));
    json_t *tried = json_array();
    for (size_t i = 0; i < s->pick.ngates; i++) {
        if (s->pick.gates[i].done)
            json_array_append_new(tried, gate_json(s, &s->pick.gates[i]));
    }
    json_object_set_new(root, "gate_tried", tried);
    json_object_set_new(root, "shapes", shapes_json(s));
    /* Whose figures "shapes" gives as the champion's: without a champion,
     * those of the fittest elite that failed the gate. */
    const kevo__search_gate *tg = table_gate(s);
    json_object_set_new(root, "shapes_of",
                        !tg ? json_null()
                        : s->pick.champion >= 0
                            ? json_string("champion")
                            : json_string("best_failed_gate"));
    if (tg && s->pick.champion < 0)
        json_object_set_new(root, "best_failed_gate", gate_json(s, tg));
    json_object_set_new(root, "operators", operators_json(s));
    json_t *farm = kevo__search_farm_json(s);
    if (farm)
        json_object_set_new(root, "farm", farm);
    json_object_set_new(root, "prompts", prompts_json(s));
    kevo__validity total;
    kevo__search_validity_total(&s->ops, &total);
    json_t *validity =
        json_pack("{s:I}", "repair_turns",
                  (json_int_t)s->cfg.opt[KEVO_SEARCH_REPAIR_TURNS]);
    kevo__search_validity_put(validity, &total);
    json_object_set_new(root, "validity", validity);
    json_object_set_new(root, "dispatch",
                        s->tuning.dispatch ? json_string("best.dispatch.json")
                                           : json_null());
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo_rundir_write_file(s->run.dir, "summary.json", text,
                                            strlen(text), err);
    free(text);
    return rc;
}

/* ---- best.cu ------------------------------------------------------------- */

kevo_status kevo__search_write_best(kevo_search *s, kevo_error *err)
{
    double fitness;
    const kevo_candidate *c = kevo_search_champion(s, &fitness);
    if (!s->run.dir || !c)
        return KEVO_OK;
    kevo_buf b = {0};
    const kevo_vars *params = kevo_candidate_assignment(c);
    kevo__buf_printf(&b, "/*\n * kevo: the champion of task %s\n",
                     kevo_task_name(s->cfg.task));
    kevo__buf_printf(
        &b, " * fitness %.4f (candidate %llu, %s, generation %u)\n", fitness,
        (unsigned long long)kevo_candidate_id(c),
        kevo_candidate_operator(c) ? kevo_candidate_operator(c) : "seed",
        (unsigned)kevo_candidate_generation(c));
    if (s->pick.champion >= 0) {
        const kevo__search_gate *g = &s->pick.gates[s->pick.champion];
        kevo__buf_printf(&b,
                         " * held-out gate: %s (not slower than the seed at "
                         "any held-out shape beyond the slack); held-out "
                         "fitness %.4f\n",
                         g->passed ? "passed" : "failed", g->held_fitness);
        if (isfinite(g->retimed))
            kevo__buf_printf(&b,
                             " * fitness timed again beside the other "
                             "finalists: %.4f (first measured %.4f)\n",
                             g->retimed, g->fitness);
    }
    kevo__buf_puts(&b, " * parameters:");
    kevo_buf p = {0};
    for (size_t i = 0; params && i < kevo_vars_count(params); i++) {
        kevo__buf_printf(&b, " %s=%lld", kevo_vars_name(params, i),
                         (long long)kevo_vars_value(params, i));
        kevo__buf_printf(&p, " -p %s=%lld", kevo_vars_name(params, i),
                         (long long)kevo_vars_value(params, i));
    }
    if (!params || kevo_vars_count(params) == 0)
        kevo__buf_puts(&b, " none");
    kevo__buf_puts(&b, "\n");
    if (s->tuning.dispatch)
        kevo__buf_puts(&b, " * per-shape parameters: best.dispatch.json\n");
    kevo__buf_printf(&b,
                     " * evaluate it again: kevo eval --held-out%s %s/task.json"
                     " %s/best.cu\n",
                     p.data ? p.data : "", kevo_rundir_path(s->run.dir),
                     kevo_rundir_path(s->run.dir));
    if (s->run.command)
        kevo__buf_printf(&b, " * found by: %s\n", s->run.command);
    kevo__buf_puts(&b, " */\n");
    kevo__buf_puts(&b, kevo_candidate_source(c));
    kevo__buf_free(&p);
    if (b.failed) {
        kevo__buf_free(&b);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    kevo_status rc =
        kevo_rundir_write_file(s->run.dir, "best.cu", b.data, b.len, err);
    kevo__buf_free(&b);
    return rc;
}
