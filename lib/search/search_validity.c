/*
 * search_validity.c: how valid the children of each operator and of each
 * prompt were. Validity is the fraction of proposals that compile and are
 * correct, the figure the literature on LLM-written kernels compares; a
 * proposal is a child that was judged or that the operator host refused
 * (its blocks did not parse, an #include kernels may not have, ...).
 * Repairs count as proposals too, and apart: of the first attempts, how
 * many were valid as proposed, and how many more a repair made valid.
 * Saved in the checkpoint and written to summary.json.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "search_private.h"

/* A prompt's counters. */
struct kevo__search_pvalid {
    uint64_t prompt;
    kevo__validity v;
};

static kevo__validity *prompt_counters(kevo__search_operators *ops,
                                       int64_t prompt)
{
    if (prompt < 0)
        return NULL;
    for (size_t i = 0; i < ops->npvalid; i++) {
        if (ops->pvalid[i].prompt == (uint64_t)prompt)
            return &ops->pvalid[i].v;
    }
    if (ops->npvalid == ops->cpvalid) {
        size_t c = ops->cpvalid ? 2 * ops->cpvalid : 16;
        kevo__search_pvalid *n = realloc(ops->pvalid, c * sizeof *n);
        if (!n)
            return NULL;
        ops->pvalid = n;
        ops->cpvalid = c;
    }
    kevo__search_pvalid *p = &ops->pvalid[ops->npvalid++];
    memset(p, 0, sizeof *p);
    p->prompt = (uint64_t)prompt;
    return &p->v;
}

static void count(kevo__validity *v, uint32_t turn, bool valid)
{
    v->proposals++;
    v->valid += valid;
    if (turn == 0) {
        v->first++;
        v->first_valid += valid;
    } else {
        v->rescued += valid;
    }
}

kevo_status kevo__search_count_proposal(kevo__search_operators *ops, size_t op,
                                        int64_t prompt, uint32_t turn,
                                        bool valid)
{
    if (op < ops->n)
        count(&ops->list[op].validity, turn, valid);
    if (prompt < 0)
        return KEVO_OK;
    kevo__validity *v = prompt_counters(ops, prompt);
    if (!v)
        return KEVO_ENOMEM;
    count(v, turn, valid);
    return KEVO_OK;
}

kevo_status kevo__search_count_repair(kevo__search_operators *ops, size_t op,
                                      int64_t prompt)
{
    if (op < ops->n)
        ops->list[op].validity.repairs++;
    if (prompt < 0)
        return KEVO_OK;
    kevo__validity *v = prompt_counters(ops, prompt);
    if (!v)
        return KEVO_ENOMEM;
    v->repairs++;
    return KEVO_OK;
}

void kevo__search_validity_total(const kevo__search_operators *ops,
                                 kevo__validity *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < ops->n; i++) {
        const kevo__validity *v = &ops->list[i].validity;
        out->proposals += v->proposals;
        out->valid += v->valid;
        out->first += v->first;
        out->first_valid += v->first_valid;
        out->repairs += v->repairs;
        out->rescued += v->rescued;
    }
}

const kevo__validity *
kevo__search_prompt_validity(const kevo__search_operators *ops, uint64_t prompt)
{
    for (size_t i = 0; i < ops->npvalid; i++) {
        if (ops->pvalid[i].prompt == prompt)
            return &ops->pvalid[i].v;
    }
    return NULL;
}

static json_t *fraction(uint64_t part, uint64_t whole)
{
    return whole ? json_real((double)part / (double)whole) : json_null();
}

void kevo__search_validity_put(json_t *o, const kevo__validity *v)
{
    json_object_set_new(o, "proposals", json_integer((json_int_t)v->proposals));
    json_object_set_new(o, "valid", json_integer((json_int_t)v->valid));
    json_object_set_new(o, "validity", fraction(v->valid, v->proposals));
    json_object_set_new(o, "first_attempts",
                        json_integer((json_int_t)v->first));
    json_object_set_new(o, "first_valid",
                        json_integer((json_int_t)v->first_valid));
    json_object_set_new(o, "repairs", json_integer((json_int_t)v->repairs));
    json_object_set_new(o, "repaired_valid",
                        json_integer((json_int_t)v->rescued));
    json_object_set_new(o, "validity_first",
                        fraction(v->first_valid, v->first));
    json_object_set_new(o, "validity_repaired",
                        fraction(v->first_valid + v->rescued, v->first));
}

static uint64_t get(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0
               ? (uint64_t)json_integer_value(v)
               : 0;
}

void kevo__search_validity_get(const json_t *o, kevo__validity *v)
{
    v->proposals = get(o, "proposals");
    v->valid = get(o, "valid");
    v->first = get(o, "first_attempts");
    v->first_valid = get(o, "first_valid");
    v->repairs = get(o, "repairs");
    v->rescued = get(o, "repaired_valid");
}

json_t *kevo__search_pvalid_json(const kevo__search_operators *ops)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < ops->npvalid; i++) {
        json_t *o =
            json_pack("{s:I}", "prompt", (json_int_t)ops->pvalid[i].prompt);
        if (o)
            kevo__search_validity_put(o, &ops->pvalid[i].v);
        json_array_append_new(arr, o);
    }
    return arr;
}

kevo_status kevo__search_pvalid_restore(kevo__search_operators *ops,
                                        const json_t *arr, kevo_error *err)
{
    size_t i;
    json_t *o;
    ops->npvalid = 0;
    json_array_foreach (arr, i, o) {
        json_t *p = json_object_get(o, "prompt");
        if (!json_is_integer(p) || json_integer_value(p) < 0)
            continue;
        kevo__validity *v = prompt_counters(ops, json_integer_value(p));
        if (!v)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        kevo__search_validity_get(o, v);
    }
    return KEVO_OK;
}

void kevo__search_validity_free(kevo__search_operators *ops)
{
    free(ops->pvalid);
    ops->pvalid = NULL;
    ops->npvalid = ops->cpvalid = 0;
}
