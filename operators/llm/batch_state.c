/*
 * batch_state.c: the batch transport's record of the batches it sent
 * (batch.h): NNNNNN-batch.json and NNNNNN-results.jsonl in the state
 * directory, and the requests of earlier engines a new one takes back.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "batch_private.h"
#include "files.h"

/* ---- state ------------------------------------------------------------------
 */

static char *state_path(const llm_batch *b, uint64_t number, const char *tail)
{
    llm_buf p = {0};
    kevo__llm_buf_printf(&p, "%s/%06" PRIu64 "-%s", b->cfg.state_dir, number,
                         tail);
    char *s = kevo__llm_buf_take(&p);
    kevo__llm_buf_free(&p);
    return s;
}

/* Claims the next free number of the state directory (O_EXCL). */
static uint64_t claim_number(llm_batch *b)
{
    uint64_t max = 0;
    DIR *d = opendir(b->cfg.state_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *end;
        unsigned long long v = strtoull(e->d_name, &end, 10);
        if (end != e->d_name && strcmp(end, "-batch.json") == 0 && v > max)
            max = v;
    }
    if (d)
        closedir(d);
    for (uint64_t n = max + 1; n < max + 1000; n++) {
        char *p = state_path(b, n, "batch.json");
        int fd = p ? open(p, O_WRONLY | O_CREAT | O_EXCL, 0666) : -1;
        int e2 = errno;
        free(p);
        if (fd >= 0) {
            close(fd);
            return n;
        }
        if (e2 != EEXIST)
            return 0;
    }
    return 0;
}

/* Writes j's NNNNNN-batch.json (and, once it has ended, its results
 * first). A failure is said, not fatal: the batch goes on, only a resumed
 * search would not find it. */
void kevo__llm_batch_save_state(llm_batch *b, job *j)
{
    if (!b->cfg.state_dir || !j->id)
        return;
    char err[600];
    if (!j->number && !(j->number = claim_number(b))) {
        kevo__llm_batch_say(b, true, "cannot record batch %s in %s: %s", j->id,
                            b->cfg.state_dir, strerror(errno));
        return;
    }
    bool ended = j->state == J_DONE;
    char *rpath = ended ? state_path(b, j->number, "results.jsonl") : NULL;
    if (ended && rpath &&
        !kevo__llm_files_write(rpath, j->results.data ? j->results.data : "",
                               j->results.len, err, sizeof(err)))
        kevo__llm_batch_say(b, true, "cannot keep the results of batch %s: %s",
                            j->id, err);
    free(rpath);
    json_t *reqs = json_array();
    for (size_t i = 0; reqs && i < j->nentries; i++) {
        const entry *en = &j->entries[i];
        char dg[17];
        snprintf(dg, sizeof(dg), "%016" PRIx64, en->digest);
        json_array_append_new(
            reqs,
            json_pack("{s:s, s:s?, s:I, s:s, s:I}", "custom_id", en->custom_id,
                      "run", en->run, "request", (json_int_t)en->request,
                      "digest", dg, "bytes", (json_int_t)en->bytes));
    }
    json_t *m = json_pack(
        "{s:I, s:s, s:s, s:s, s:s, s:s?, s:f, s:s?, s:b, s:s?, s:o}", "number",
        (json_int_t)j->number, "api", kevo__llm_api_name(b->cfg.api), "url",
        b->cfg.url, "model", b->cfg.model, "id", j->id, "input_file_id",
        j->input_file_id, "created", j->created, "status", j->status, "ended",
        ended, "failure", j->failure, "requests", reqs ? reqs : json_array());
    char *text = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
    char *path = state_path(b, j->number, "batch.json");
    if (!text || !path ||
        !kevo__llm_files_write(path, text, strlen(text), err, sizeof(err)))
        kevo__llm_batch_say(b, true, "cannot record batch %s: %s", j->id,
                            text && path ? err : "out of memory");
    free(path);
    free(text);
    json_decref(m);
}

char *kevo__llm_batch_jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? kevo__llm_strdup(s) : NULL;
}

/* A job of an earlier engine from its state file, or NULL when the file is
 * not one of this engine's batches (or cannot be read). */
static void load_job(llm_batch *b, const char *name, uint64_t number)
{
    llm_buf p = {0};
    kevo__llm_buf_printf(&p, "%s/%s", b->cfg.state_dir, name);
    json_t *m = p.data ? json_load_file(p.data, 0, NULL) : NULL;
    kevo__llm_buf_free(&p);
    const char *api = json_string_value(json_object_get(m, "api"));
    const char *url = json_string_value(json_object_get(m, "url"));
    const char *model = json_string_value(json_object_get(m, "model"));
    json_t *reqs = json_object_get(m, "requests");
    job *j = NULL;
    if (!api || strcmp(api, kevo__llm_api_name(b->cfg.api)) != 0 || !url ||
        strcmp(url, b->cfg.url) != 0 || !model ||
        strcmp(model, b->cfg.model) != 0 || !json_is_array(reqs) ||
        !json_is_string(json_object_get(m, "id")) ||
        !(j = kevo__llm_batch_job_add(b)))
        goto done;
    j->number = number;
    j->id = kevo__llm_batch_jstr(m, "id");
    j->input_file_id = kevo__llm_batch_jstr(m, "input_file_id");
    j->status = kevo__llm_batch_jstr(m, "status");
    j->failure = kevo__llm_batch_jstr(m, "failure");
    j->created = json_number_value(json_object_get(m, "created"));
    j->state = J_POLL;
    j->entries = calloc(json_array_size(reqs) + 1, sizeof(*j->entries));
    if (!j->entries)
        goto done;
    size_t i;
    json_t *r;
    json_array_foreach (reqs, i, r) {
        entry *en = &j->entries[j->nentries];
        const char *dg = json_string_value(json_object_get(r, "digest"));
        en->custom_id = kevo__llm_batch_jstr(r, "custom_id");
        en->run = kevo__llm_batch_jstr(r, "run");
        en->request =
            (uint64_t)json_integer_value(json_object_get(r, "request"));
        en->bytes = (size_t)json_integer_value(json_object_get(r, "bytes"));
        en->digest = dg ? strtoull(dg, NULL, 16) : 0;
        if (en->custom_id)
            j->nentries++;
        else
            free(en->run);
    }
    if (json_is_true(json_object_get(m, "ended"))) {
        char *rp = state_path(b, number, "results.jsonl");
        char why[600];
        size_t len = 0;
        char *text =
            rp ? kevo__llm_files_read(rp, SIZE_MAX / 2, &len, why, sizeof(why))
               : NULL;
        if (text) {
            kevo__llm_buf_append(&j->results, text, len);
            j->state = J_DONE;
        } else {
            /* The results are lost: read them from the vendor again. */
            kevo__llm_batch_say(b, true,
                                "batch %s: %s; its results are read again",
                                j->id, why);
        }
        free(text);
        free(rp);
    }
done:
    json_decref(m);
}

/* Reads the batches that earlier engines recorded in the state directory,
 * once. */
void kevo__llm_batch_read_state(llm_batch *b)
{
    b->state_read = true;
    if (!b->cfg.state_dir)
        return;
    struct dirent **list = NULL;
    int n = scandir(b->cfg.state_dir, &list, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char *end;
        unsigned long long v = strtoull(list[i]->d_name, &end, 10);
        if (end != list[i]->d_name && strcmp(end, "-batch.json") == 0)
            load_job(b, list[i]->d_name, (uint64_t)v);
        free(list[i]);
    }
    free(list);
}

entry *kevo__llm_batch_find_entry(llm_batch *b, const llm_batch_request *req,
                                  uint64_t dg, job **jp, bool *changed)
{
    entry *other = NULL;
    job *other_job = NULL;
    for (size_t k = 0; req->run && k < b->njobs; k++) {
        job *j = b->jobs[k];
        for (size_t i = 0; i < j->nentries; i++) {
            entry *en = &j->entries[i];
            if (en->adopted || !en->run || en->request != req->request ||
                strcmp(en->run, req->run) != 0)
                continue;
            if (en->digest == dg && en->bytes == req->body_len) {
                *jp = j;
                return en;
            }
            if (!other) {
                other = en;
                other_job = j;
            }
        }
    }
    if (other && changed) {
        *changed = true;
        *jp = other_job;
        return other;
    }
    return NULL;
}
