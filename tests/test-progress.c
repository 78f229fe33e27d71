/*
 * test-progress.c: the progress output of `kevo search`
 * (examples/kevo_progress.c): durations, the time left, the live line at
 * every width, with and without colour, NO_COLOR, unknown values, and the
 * plain lines.
 */
#include "tap.h"

#include "kevo_progress.h"

/* s without its ANSI escapes (ESC [ ... m), in out. */
static void strip_ansi(const char *s, char *out, size_t size)
{
    size_t n = 0;
    while (*s && n + 1 < size) {
        if (s[0] == '\033' && s[1] == '[') {
            s += 2;
            while (*s && *s != 'm')
                s++;
            if (*s)
                s++;
            continue;
        }
        out[n++] = *s++;
    }
    out[n] = '\0';
}

static progress_values sample(void)
{
    progress_values v = {
        .evaluations = 37,
        .max_evals = 300,
        .best = 0.9123,
        .champion = 0.88,
        .coverage = 0.125,
        .evals_per_second = 7.12,
        .llm = false,
        .seconds_left = 185,
    };
    return v;
}

static void test_duration(void)
{
    char buf[32];
    static const struct {
        double s;
        const char *want;
    } cases[] = {
        {0, "0s"},          {42, "42s"},      {42.4, "42s"},   {59.6, "1m00s"},
        {725, "12m05s"},    {3599, "59m59s"}, {3600, "1h00m"}, {11220, "3h07m"},
        {180000, "50h00m"}, {NAN, "--"},      {-1, "--"},      {INFINITY, "--"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n = progress_duration(cases[i].s, buf, sizeof buf);
        is_str(buf, cases[i].want, "duration %g", cases[i].s);
        is_int(n, strlen(cases[i].want), "duration %g: length", cases[i].s);
    }
}

static void test_time_left(void)
{
    is_double(progress_time_left(100, 0, 0, NAN), 100, 1e-12,
              "the wall-time budget alone");
    is_double(progress_time_left(NAN, 100, 300, 10), 20, 1e-12,
              "estimated from the evaluations left and the rate");
    is_double(progress_time_left(5, 100, 300, 10), 5, 1e-12,
              "both budgets: the sooner");
    is_double(progress_time_left(500, 100, 300, 10), 20, 1e-12,
              "both budgets: the sooner, the other way");
    ok(isnan(progress_time_left(NAN, 100, 0, 10)), "no budget: unknown");
    ok(isnan(progress_time_left(NAN, 0, 300, 0)), "no rate yet: unknown");
    ok(isnan(progress_time_left(NAN, 0, 300, NAN)), "NaN rate: unknown");
    is_double(progress_time_left(NAN, 310, 300, 10), 0, 1e-12,
              "past the budget: nothing left");
}

static void test_line(void)
{
    char buf[512], plain[512];
    progress_values v = sample();

    size_t cols = progress_line(&v, 200, false, buf, sizeof buf);
    is_str(buf,
           " 37/300 evals  best 0.912  champion 0.880  cov 12.5%  7.12 ev/s  "
           "3m05s left",
           "the whole line");
    is_int(cols, strlen(buf), "columns of the whole line");

    /* Every width: the line fits, and the evaluation count is always
     * there (cut when it must be). */
    bool fits = true, count_first = true;
    for (int w = 1; w <= 120; w++) {
        cols = progress_line(&v, w, false, buf, sizeof buf);
        if (cols > (size_t)w || strlen(buf) != cols)
            fits = false;
        if (strncmp(buf, " 37/300 evals", cols < 13 ? cols : 13) != 0)
            count_first = false;
    }
    ok(fits, "at every width from 1 to 120 the line fits");
    ok(count_first, "at every width the evaluation count comes first");

    progress_line(&v, 5, false, buf, sizeof buf);
    is_str(buf, " 37/3", "width 5: the count, cut");
    progress_line(&v, 24, false, buf, sizeof buf);
    is_str(buf, " 37/300 evals", "width 24: the count alone");
    progress_line(&v, 25, false, buf, sizeof buf);
    is_str(buf, " 37/300 evals  best 0.912", "width 25: and the best");
    progress_line(&v, 40, false, buf, sizeof buf);
    is_str(buf, " 37/300 evals  best 0.912",
           "width 40: nothing less important than the champion, which "
           "does not fit");
    progress_line(&v, 41, false, buf, sizeof buf);
    is_str(buf, " 37/300 evals  best 0.912  champion 0.880",
           "width 41: and the champion");
    progress_line(&v, 53, false, buf, sizeof buf);
    is_str(buf, " 37/300 evals  best 0.912  champion 0.880  3m05s left",
           "width 53: and the time left, before the rate and coverage");
    progress_line(&v, 80, false, buf, sizeof buf);
    is_str(buf,
           " 37/300 evals  best 0.912  champion 0.880  cov 12.5%  7.12 ev/s  "
           "3m05s left",
           "width 80: everything");

    /* Colour: escapes that take no columns. */
    cols = progress_line(&v, 200, true, buf, sizeof buf);
    ok(strstr(buf, "\033[") != NULL, "colour: ANSI escapes");
    ok(strstr(buf, "\033[1;32m0.912\033[0m") != NULL,
       "colour: the best fitness in bold green");
    strip_ansi(buf, plain, sizeof plain);
    progress_line(&v, 200, false, buf, sizeof buf);
    is_str(plain, buf, "colour: the same text without the escapes");
    is_int(cols, strlen(plain), "colour: columns count only the text");
    bool fits_color = true;
    for (int w = 1; w <= 120; w++) {
        cols = progress_line(&v, w, true, buf, sizeof buf);
        strip_ansi(buf, plain, sizeof plain);
        if (cols > (size_t)w || strlen(plain) != cols)
            fits_color = false;
    }
    ok(fits_color, "colour: at every width the visible text fits");
}

static void test_unknowns(void)
{
    char buf[512];
    progress_values v = sample();
    v.best = NAN;
    v.champion = NAN;
    v.evals_per_second = NAN;
    v.seconds_left = NAN;
    v.evaluations = 0;
    progress_line(&v, 200, false, buf, sizeof buf);
    is_str(buf,
           "  0/300 evals  best --  champion --  cov 12.5%  -- ev/s  -- left",
           "NaN best, champion, rate and time left: --");
    progress_line(&v, 200, true, buf, sizeof buf);
    ok(strstr(buf, "best \033[2m--\033[0m") != NULL,
       "colour: an unknown best is dim, not green");

    v = sample();
    v.max_evals = 0;
    v.evaluations = 1234;
    progress_line(&v, 200, false, buf, sizeof buf);
    ok(strncmp(buf, "1234 evals  best", 16) == 0,
       "no evaluation budget: the count alone");

    v = sample();
    v.seconds_left = 11220;
    progress_line(&v, 200, false, buf, sizeof buf);
    like_str(buf, "ev/s  3h07m left", "hours and minutes left");
    v.seconds_left = 725;
    progress_line(&v, 200, false, buf, sizeof buf);
    like_str(buf, "ev/s  12m05s left", "minutes and seconds left");
}

static void test_llm(void)
{
    char buf[512];
    progress_values v = sample();
    v.llm = true;
    v.tokens = 12345;
    v.cost = 0.4215;
    progress_line(&v, 200, false, buf, sizeof buf);
    is_str(buf,
           " 37/300 evals  best 0.912  champion 0.880  cov 12.5%  7.12 ev/s  "
           "12.3k tok, cost 0.42  3m05s left",
           "tokens and cost with an llm operator");
    v.tokens = 2500000;
    progress_line(&v, 200, false, buf, sizeof buf);
    like_str(buf, "  2.5M tok", "millions of tokens");
    v.tokens = 999;
    progress_line(&v, 200, false, buf, sizeof buf);
    like_str(buf, " 999 tok", "fewer than a thousand tokens");
    v.tokens = 12345;
    progress_line(&v, 80, false, buf, sizeof buf);
    is_str(buf,
           " 37/300 evals  best 0.912  champion 0.880  12.3k tok, cost 0.42  "
           "3m05s left",
           "width 80: the rate and the coverage go before the tokens");
}

static void test_color_wanted(void)
{
    ok(progress_color_wanted(true, NULL), "terminal, NO_COLOR unset: colour");
    ok(progress_color_wanted(true, ""), "terminal, NO_COLOR empty: colour");
    ok(!progress_color_wanted(true, "1"), "terminal, NO_COLOR=1: none");
    ok(!progress_color_wanted(true, "0"), "terminal, NO_COLOR=0: none");
    ok(!progress_color_wanted(false, NULL), "not a terminal: none");
}

static void test_due(void)
{
    double last = -1;
    ok(progress_due(&last, 10.0), "the first draw is due");
    is_double(last, 10.0, 0, "it records the time");
    ok(!progress_due(&last, 10.1), "0.1 s later: not due");
    ok(!progress_due(&last, 10.24), "0.24 s later: not due");
    ok(progress_due(&last, 10.25), "0.25 s later: due");
    is_double(last, 10.25, 0, "it records the new time");
}

static void test_plain_lines(void)
{
    char buf[256];
    progress_champion_line(0.91234, 42, "params", 37, buf, sizeof buf);
    is_str(buf,
           "champion: fitness 0.912 (candidate 42, params) after 37 "
           "evaluations",
           "the champion line");
    progress_champion_line(0.5, 7, NULL, 3, buf, sizeof buf);
    is_str(buf, "champion: fitness 0.500 (candidate 7) after 3 evaluations",
           "the champion line without an operator");
    progress_champion_line(0.5, 1, NULL, 1, buf, sizeof buf);
    is_str(buf, "champion: fitness 0.500 (candidate 1) after 1 evaluation",
           "after 1 evaluation, singular");
    progress_values v = sample();
    v.evaluations = 100;
    progress_checkpoint_line(&v, buf, sizeof buf);
    is_str(buf,
           "checkpoint: 100/300 evaluations, best 0.912, coverage 12.5%, "
           "7.12 evaluations/s",
           "the checkpoint line");
    v.max_evals = 0;
    v.best = NAN;
    progress_checkpoint_line(&v, buf, sizeof buf);
    is_str(buf,
           "checkpoint: 100 evaluations, best --, coverage 12.5%, 7.12 "
           "evaluations/s",
           "the checkpoint line without a budget or a best");
}

int main(void)
{
    test_duration();
    test_time_left();
    test_line();
    test_unknowns();
    test_llm();
    test_color_wanted();
    test_due();
    test_plain_lines();
    return done_testing();
}
