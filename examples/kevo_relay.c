/*
 * kevo_relay.c: `kevo relay DIR --llm CONFIG`, for a machine that reaches
 * the models when the search's cannot (a cluster's login node): it answers
 * the request files of the llm operator's files transport in DIR through
 * HTTP, or a vendor's batch API for a model with "transport": "batch"
 * (operators/llm/relay.h), until it is stopped, or with --once until none
 * is left (kevo-relay(1)).
 *
 * It is built from the llm operator's own sources: the same request
 * engine, configuration, budgets and redaction.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "files.h"
#include "kevo_cli.h"
#include "relay.h"
#include "wire.h"

/* The largest configuration file read. */
#define MAX_CONFIG_BYTES ((size_t)1 << 20)

static volatile sig_atomic_t signals_caught;

static void on_signal(int sig)
{
    (void)sig;
    if (signals_caught < 2)
        signals_caught++;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s relay DIR --llm CONFIG [--once] [--interval S] "
            "[--quiet]\n"
            "\n"
            "Answers the llm operator's request files in DIR (its files "
            "transport):\n"
            "sends each DIR/pending/NNNNNN.json without a reply to the model "
            "its\n"
            "sidecar names, as CONFIG configures that model, and writes the "
            "reply as\n"
            "DIR/done/NNNNNN.json. No request is sent twice, also across "
            "restarts.\n"
            "\n"
            "options:\n"
            "  -l, --llm CONFIG    the llm configuration (kevo-llm(7)) "
            "with the models,\n"
            "                      their URLs, keys (key_env), prices and "
            "the budgets\n"
            "  -1, --once          stop once no request is left to send "
            "(default: run\n"
            "                      until SIGINT or SIGTERM)\n"
            "  -i, --interval S    look for new requests every S seconds "
            "(default 1)\n"
            "  -q, --quiet         say only what went wrong\n"
            "  -h, --help          this help\n"
            "\n"
            "SIGINT or SIGTERM: no new request is sent, and the relay ends "
            "once the\n"
            "requests in flight have their replies; a second signal ends it "
            "at once,\n"
            "each request in flight answered with a failure (never sent "
            "again). A model\n"
            "with \"transport\": \"batch\" goes through its vendor's batch "
            "API: a batch in\n"
            "progress is not waited for; the next relay takes its requests "
            "back.\n"
            "\n"
            "Exit status: 0 stopped or done; 1 a bad CONFIG or DIR, or with "
            "--once a\n"
            "request left for a problem; 2 bad command line. See "
            "kevo-relay(1).\n",
            program);
}

typedef struct relay_view {
    bool quiet;
} relay_view;

static void on_say(void *ud, bool warning, const char *text)
{
    const relay_view *v = ud;
    if (warning || !v->quiet)
        fprintf(stderr, "%s: relay: %s\n", program, text);
}

/* Reads and parses CONFIG; false after saying why. */
static bool load_config(const char *path, llm_config *cfg)
{
    char err[1024];
    size_t len;
    char *text =
        kevo__llm_files_read(path, MAX_CONFIG_BYTES, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, "%s: relay: %s\n", program, err);
        return false;
    }
    bool ok = kevo__llm_config_parse(text, cfg, NULL, err, sizeof err);
    free(text);
    if (!ok)
        fprintf(stderr, "%s: relay: %s: %s\n", program, path, err);
    return ok;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL); /* a signal ends it early */
}

/* Relays until stopped (or, with once, until nothing is left to send).
 * Returns whether requests are left for a problem. */
static bool relay_loop(llm_relay *r, bool once, double interval)
{
    llm_relay_stats st;
    double next_scan = 0;
    bool told_stop = false;
    for (;;) {
        bool scanned = false;
        size_t sent = 0;
        if (!signals_caught && now_s() >= next_scan) {
            sent = kevo__llm_relay_scan(r);
            scanned = true;
            next_scan = now_s() + interval;
        }
        kevo__llm_relay_stats_get(r, &st);
        size_t http = st.in_flight - st.in_batches;
        if (signals_caught >= 2)
            break;
        if (signals_caught && !told_stop && http) {
            told_stop = true;
            fprintf(stderr,
                    "%s: relay: stopping once %zu request%s in flight %s "
                    "its reply (signal again to stop now)\n",
                    program, http, http == 1 ? "" : "s",
                    http == 1 ? "has" : "have");
        }
        /* Batches are not waited for: they go on at the vendor, and the
         * next relay takes their requests back. */
        if (signals_caught && st.busy == 0)
            break;
        if (st.in_flight > 0) {
            kevo__llm_relay_poll(r, 200);
            continue;
        }
        if (signals_caught || (once && scanned && sent == 0))
            break;
        if (once)
            next_scan = 0; /* look again at once */
        else
            nap(next_scan - now_s() < 0.2 ? next_scan - now_s() : 0.2);
    }
    return st.problems > 0;
}

int cmd_relay(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"llm", required_argument, NULL, 'l'},
        {"once", no_argument, NULL, '1'},
        {"interval", required_argument, NULL, 'i'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL;
    bool once = false;
    double interval = 1;
    relay_view v = {false};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "l:1i:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': config = optarg; break;
        case '1': once = true; break;
        case 'q': v.quiet = true; break;
        case 'i':
            if (!cli_parse_real(optarg, &interval) || interval < 0.01 ||
                interval > 3600) {
                fprintf(stderr,
                        "%s: relay: --interval '%s': seconds from 0.01 to "
                        "3600\n",
                        program, optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return EXIT_OK;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || !config) {
        fprintf(stderr, "%s: relay: %s\n", program,
                optind >= argc      ? "no request directory"
                : optind < argc - 1 ? "one request directory"
                                    : "no --llm CONFIG");
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *dir = argv[optind];
    llm_config cfg;
    if (!load_config(config, &cfg))
        return EXIT_INVALID;
    char err[1024];
    /* The handlers first: a signal from here on stops the relay cleanly. */
    cli_on_signals(on_signal, 0);
    llm_relay *r = kevo__llm_relay_new(dir, &cfg, on_say, &v, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s: relay: %s\n", program, err);
        kevo__llm_config_free(&cfg);
        return EXIT_INVALID;
    }
    llm_relay_stats st;
    kevo__llm_relay_stats_get(r, &st);
    if (!v.quiet)
        fprintf(stderr,
                "%s: relay: answering %s/pending with %zu model%s%s; %llu "
                "tokens and a cost of %.6g spent through it so far\n",
                program, dir, cfg.nmodels, cfg.nmodels == 1 ? "" : "s",
                once ? ", once" : " until SIGINT or SIGTERM",
                (unsigned long long)st.ledger_tokens, st.ledger_cost);
    bool problems = relay_loop(r, once, interval);
    kevo__llm_relay_stats_get(r, &st);
    /* What is still in flight over HTTP: failure files; in batches: left
     * for the next relay. */
    kevo__llm_relay_free(r);
    if (!v.quiet || problems)
        fprintf(
            stderr,
            "%s: relay: %llu sent, %llu taken back into their batch, "
            "%llu replied, %llu failed, %llu in batches left for the next "
            "relay, %llu of stopped relays answered with a failure; %llu "
            "tokens, cost %.6g%s\n",
            program, (unsigned long long)st.sent,
            (unsigned long long)st.taken_back, (unsigned long long)st.answered,
            (unsigned long long)(st.failed + st.in_flight - st.in_batches),
            (unsigned long long)st.in_batches, (unsigned long long)st.lost,
            (unsigned long long)(st.input_tokens + st.output_tokens), st.cost,
            problems ? "; requests are left for problems said above" : "");
    kevo__llm_config_free(&cfg);
    return once && problems ? EXIT_INVALID : EXIT_OK;
}
