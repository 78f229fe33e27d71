/*
 * relay_claim.h: the marks by which kevo relay never sends a request
 * twice. Before it sends DIR/pending/NNNNNN.json, a relay makes
 * DIR/sent/NNNNNN.json, whole and only where there is none (a link(2) of
 * a file written first under another name), naming itself:
 *
 *   {"number": 7, "host": "login1", "boot": "5f0c...", "pid": 4242,
 *    "model": "o3", "url": "https://api.openai.com/v1/chat/completions",
 *    "claimed": "2025-06-01T10:00:00Z"}
 *
 * Once the reply (or the failure) is written as DIR/done/NNNNNN.json, the
 * mark is rewritten with how the request ended and what it cost:
 *
 *   ..., "outcome": "ok", "ended": "2025-06-01T10:01:12Z",
 *   "usage": {"input_tokens": 1200, "output_tokens": 800, "cost": 0.02}
 *
 * A request sent through a vendor's batch API has its batch in the mark
 * once the batch is created:
 *
 *   ..., "batch": {"id": "batch_abc", "custom_id": "kevo-7-0"}
 *
 * A mark without an outcome is a request in flight. Its relay is alive
 * when it runs on this host since the same boot and its process is there;
 * a mark of a relay that is gone (killed while the request was in flight)
 * is stale: the request may have been answered and paid for, and is not
 * sent again (a request in a batch is taken back by the next relay, which
 * makes the mark its own and waits for the batch). The marks that ended are the
 * directory's ledger: a relay started on it counts their usage against its
 * budgets.
 */
#ifndef KEVO_LLM_RELAY_CLAIM_H
#define KEVO_LLM_RELAY_CLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A relay process: where it runs, since which boot, its process id. */
typedef struct llm_relay_owner {
    char host[256];
    char boot[64]; /* /proc/sys/kernel/random/boot_id, or "" */
    long pid;
} llm_relay_owner;

/* This process. */
void kevo__llm_claim_self(llm_relay_owner *me);

typedef enum llm_claim_state {
    LLM_CLAIM_NONE,  /* no mark: the request was never sent */
    LLM_CLAIM_LIVE,  /* in flight at a relay that runs (or may run: on
                        another host) */
    LLM_CLAIM_STALE, /* in flight at a relay that is gone */
    LLM_CLAIM_ENDED, /* it ended (the mark has an outcome) */
    LLM_CLAIM_BAD    /* a mark that does not read: left alone */
} llm_claim_state;

/* What a mark says. */
typedef struct llm_claim {
    llm_claim_state state;
    llm_relay_owner owner;
    char claimed[32]; /* when, as written */
    char outcome[32]; /* "" while in flight */
    char batch[256];  /* the id of its batch, or "" */
    uint64_t input_tokens, output_tokens;
    double cost;
    char why[300]; /* for LLM_CLAIM_BAD: what is wrong with it */
} llm_claim;

/* Reads the mark of request number in dir into *c, as me sees it. */
void kevo__llm_claim_read(const char *dir, uint64_t number,
                          const llm_relay_owner *me, llm_claim *c);

/* Makes the mark of request number in dir for me. Returns false with a
 * reason in err when it cannot be written; *taken is false (and true is
 * returned) when another relay made it first. */
bool kevo__llm_claim_take(const char *dir, uint64_t number,
                          const llm_relay_owner *me, const char *model,
                          const char *url, bool *taken, char *err,
                          size_t errlen);

/* Rewrites the mark of request number with how it ended and its usage.
 * Returns false with a reason in err. */
bool kevo__llm_claim_end(const char *dir, uint64_t number, const char *outcome,
                         uint64_t input_tokens, uint64_t output_tokens,
                         double cost, char *err, size_t errlen);

/* Writes the batch (its id, and the request's custom_id in it) into the
 * mark of request number. Returns false with a reason in err. */
bool kevo__llm_claim_batch(const char *dir, uint64_t number,
                           const char *batch_id, const char *custom_id,
                           char *err, size_t errlen);

/* Makes the mark of request number, in flight at a relay that is gone,
 * me's (a request taken back into its batch). Returns false with a reason
 * in err. */
bool kevo__llm_claim_retake(const char *dir, uint64_t number,
                            const llm_relay_owner *me, char *err,
                            size_t errlen);

/* Removes the mark of a request that was never sent, so that a relay may
 * send it. Returns false with a reason in err. */
bool kevo__llm_claim_drop(const char *dir, uint64_t number, char *err,
                          size_t errlen);

/* The usage the ended marks of dir record, added up. */
void kevo__llm_claim_ledger(const char *dir, uint64_t *tokens, double *cost);

#endif
