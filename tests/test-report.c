/*
 * test-report.c: the report of a run directory: every section of a full
 * run and of a minimal one, escaping, no script and no URL, the charts with
 * 0, 1 and 100000 evaluations, the errors for bad files, and report.html
 * written atomically.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kevo.h>
#include <kevo/report.h>

#include "tap.h"

static char tmpdir[4096];

static char *path_of(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        bail_out("out of memory");
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static char *data_dir(const char *name)
{
    char *base = path_of(tap_srcdir(), "tests/data/report");
    char *p = path_of(base, name);
    free(base);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) ||
        fclose(f) != 0)
        bail_out("cannot write %s: %s", path, strerror(errno));
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    fclose(f);
    if (!s)
        bail_out("out of memory");
    s[n] = '\0';
    return s;
}

/* Copies the plain files of src into a new directory dst. */
static void copy_dir(const char *src, const char *dst)
{
    if (mkdir(dst, 0777) != 0)
        bail_out("mkdir %s: %s", dst, strerror(errno));
    DIR *d = opendir(src);
    if (!d)
        bail_out("opendir %s: %s", src, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *from = path_of(src, e->d_name), *to = path_of(dst, e->d_name);
        char *text = read_text(from);
        if (!text)
            bail_out("cannot read %s", from);
        write_text(to, text);
        free(text);
        free(from);
        free(to);
    }
    closedir(d);
}

/* The names in dir, sorted, joined by spaces; removes them and dir when
 * remove is true. */
static char *list_dir(const char *dir, int remove)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        bail_out("scandir %s: %s", dir, strerror(errno));
    char *out = calloc(1, 4096);
    if (!out)
        bail_out("out of memory");
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            if (*out)
                strncat(out, " ", 4095 - strlen(out));
            strncat(out, name, 4095 - strlen(out));
            if (remove) {
                char *p = path_of(dir, name);
                if (unlink(p) != 0)
                    bail_out("unlink %s: %s", p, strerror(errno));
                free(p);
            }
        }
        free(names[i]);
    }
    free(names);
    if (remove && rmdir(dir) != 0)
        bail_out("rmdir %s: %s", dir, strerror(errno));
    return out;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* kevo_report_html of dir, which must succeed. */
static char *report_ok(const char *dir)
{
    kevo_error err;
    kevo_error_init(&err);
    char *html = NULL;
    kevo_status rc = kevo_report_html(dir, &html, &err);
    is_int(rc, KEVO_OK, "report of %s", dir);
    if (rc != KEVO_OK)
        diag("%s", err.text);
    return html;
}

/* What every page must be: HTML5, self-contained, no script, no URL but
 * the SVG namespace, two charts. */
static void check_page(const char *html, const char *what)
{
    ok(html && strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">", 32) == 0,
       "%s: an HTML5 page", what);
    like_str(html, "</body>\n</html>\n", "%s: the page is complete", what);
    is_uint(count(html, "<svg "), 2, "%s: one <svg> per chart", what);
    is_uint(count(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" "), 2,
            "%s: each with the SVG namespace", what);
    is_uint(count(html, "http://"), 2, "%s: no http:// but the namespace",
            what);
    is_uint(count(html, "https://"), 0, "%s: no https://", what);
    ok(!strstr(html, "<script") && !strstr(html, "<SCRIPT"), "%s: no script",
       what);
    ok(!strstr(html, "<link") && !strstr(html, "<img") && !strstr(html, "url("),
       "%s: nothing fetched", what);
    static const char *const sections[] = {
        "<section id=\"fitness\">\n<h2>Best fitness over evaluations</h2>",
        "<section id=\"archive\">\n<h2>Archive</h2>",
        "<section id=\"shapes\">\n<h2>Shapes</h2>",
        "<section id=\"gate\">\n<h2>Gate</h2>",
        "<section id=\"operators\">\n<h2>Operators</h2>",
        "<section id=\"source\">\n<h2>Champion source</h2>"};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        like_str(html, sections[i], "%s: section %zu", what, i + 1);
}

static void test_full(void)
{
    char *dir = data_dir("full");
    char *html = report_ok(dir);
    check_page(html, "full");
    like_str(html, "<section id=\"prompts\">\n<h2>Prompts</h2>",
             "full: the prompts");
    like_str(html, "<section id=\"tuning\">\n<h2>Per-shape tuning</h2>",
             "full: the per-shape tuning");

    /* The title and the figures, escaped. */
    like_str(html, "<title>kevo report: saxpy &lt;fp32&gt;</title>",
             "the task names the page, escaped");
    like_str(html,
             "<h1>saxpy &lt;fp32&gt; <span class=\"state state-finished\">"
             "finished</span></h1>",
             "the title says the state");
    like_str(html,
             "with &quot;a&quot; a scalar &amp; &lt;b&gt;no&lt;/b&gt; "
             "aliasing",
             "the description is escaped");
    ok(!strstr(html, "<b>no</b>"), "no markup from the files");
    like_str(html, "Stop reason: <b>evaluations</b>; fitness: roofline",
             "the stop reason");
    like_str(html, "<dt>evaluations</dt><dd>32</dd>", "evaluations");
    like_str(html, "<dt>failures</dt><dd>4 (12.5%)</dd>", "failures");
    like_str(html, "<dt>elapsed</dt><dd>12 min 34 s</dd>", "elapsed");
    like_str(html, "<dt>evaluations/s</dt><dd>0.0424</dd>", "evaluations/s");
    like_str(html, "<dt>coverage</dt><dd>18.8% (9 of 48 cells)</dd>",
             "coverage");
    like_str(html, "<dt>tokens</dt><dd>182345 in, 40210 out</dd>", "tokens");
    like_str(html, "<dt>device</dt><dd>NVIDIA H100 80GB HBM3</dd>", "device");
    like_str(html, "<dt>seed</dt><dd>7</dd>", "seed");
    like_str(html, "--llm-url https&#58;//llm.example/v1 --run runs/saxpy",
             "the command, with its URL defused");
    like_str(html, "events.jsonl: 1 malformed line skipped (of 44).",
             "the malformed line is counted, the unknown type is not");

    /* The fitness chart. */
    is_uint(count(html, "<circle cx="), 32, "a dot per evaluation");
    like_str(html,
             "32 evaluations (4 failed, 6 improvements) from "
             "events.jsonl",
             "the chart's caption");
    like_str(html, "<title>evaluation 5: candidate 5, compile_error</title>",
             "a failure's dot says why");
    like_str(html, "<title>evaluation 27: candidate 51, fitness 0.930</title>",
             "an improvement's dot");
    is_uint(count(html, "<title>gate after evaluation"), 2,
            "both gate events marked");
    like_str(html,
             "gate after evaluation 27: candidate 51 failed (training "
             "0.930, held-out 0.120)",
             "the failed gate's marker");
    like_str(html, "stroke=\"#dd6b20\" stroke-width=\"2\"/>",
             "the best-so-far line");
    like_str(html, ">0.2</text>", "fitness ticks");
    like_str(html, ">30</text>", "evaluation ticks");

    /* The heat map. */
    like_str(html,
             "<title>memory vector, block_size 128-255: fitness 0.910, "
             "candidate 42, island 0</title>",
             "islands merged: the best elite of the cell wins");
    ok(!strstr(html, "candidate 37, island 1</title>"),
       "the weaker elite of the same cell is not drawn");
    is_uint(count(html, ": empty</title>"), 24 - 9, "the empty cells");
    like_str(html, "<title>memory async, block_size &lt;64: empty</title>",
             "bin labels escaped");
    like_str(html,
             "9 of 48 cells filled; QD score 6.21. Colour: fitness, "
             "from 0.350 to 0.930",
             "the heat map's caption and scale");
    like_str(html, "The 2 islands are merged", "the islands note");
    like_str(html, ">empty</text>", "the legend's empty cell");

    /* Shapes. */
    is_uint(count(html, "<tr class=\"held\"><td>held-out<span class=\"tag\">"),
            2, "held-out shapes marked");
    like_str(html,
             "<td>training</td><td class=\"num\">1</td><td>n=1048576</td>"
             "<td>memory</td><td class=\"num\">4.19</td>"
             "<td class=\"num\">9.10</td><td class=\"num\">0.460</td>"
             "<td class=\"num\">4.60</td><td class=\"num\">0.911</td>"
             "<td class=\"num\">5.20</td><td class=\"num\">0.806</td>"
             "<td class=\"num\">1.98\xc3\x97</td>"
             "<td class=\"num\">1.13\xc3\x97</td>",
             "a training shape's row: \xc2\xb5s, efficiencies, speedups");
    like_str(html,
             "<td class=\"num\">2.30</td><td class=\"num\">0.870</td>"
             "<td class=\"num\">\xe2\x80\x94</td>"
             "<td class=\"num\">\xe2\x80\x94</td>"
             "<td class=\"num\">1.04\xc3\x97</td>"
             "<td class=\"num\">\xe2\x80\x94</td></tr>",
             "unknown values show a dash");

    /* The gate. */
    like_str(html,
             "Champion: candidate <b>42</b>, training fitness <b>0.910</b>, "
             "operator params, generation 3; parameters: BLOCK=256, VEC=4.",
             "the champion");
    like_str(html,
             "Verdict: <span class=\"pass\">passed</span>. The gate asks, at "
             "every held-out shape, whether the champion is correct and not "
             "slower than the seed",
             "the gate's verdict");
    like_str(html, "by more than the slack, 10.0%", "the slack");
    like_str(html,
             "Training fitness 0.910 as first measured, 0.905 timed again "
             "beside the other finalists; held-out fitness 0.810 "
             "(information only",
             "the fitness, timed again, and the held-out fitness");
    like_str(html,
             "<tr><td>n=3000017</td><td class=\"num\">14.5</td><td>seed</td>"
             "<td class=\"num\">20.0</td><td class=\"num\">1.38</td>"
             "<td class=\"num\">0.909</td><td>faster</td>",
             "the gate's row of a held-out shape");
    like_str(html, "<td>within the slack</td>", "the call of the other shape");
    like_str(html,
             "<td class=\"num\">51</td><td class=\"num\">0.930</td>"
             "<td class=\"num\">\xe2\x80\x94</td>"
             "<td class=\"num\">0.120</td>"
             "<td class=\"fail\">failed</td><td>\xe2\x80\x94</td>"
             "<td>held-out shape 1: wrong result at element 2999",
             "the elites tried");
    like_str(html,
             "<td class=\"pass\">passed</td><td>device 1 (NVIDIA H100 80GB "
             "HBM3)</td>",
             "the device that timed an elite's held-out shapes");

    /* Which devices measured what. */
    like_str(html, "<dt>devices</dt><dd>2, one worker each</dd>",
             "the number of devices");
    like_str(html,
             "<p>The held-out shapes were timed on device 1 (NVIDIA H100 "
             "80GB HBM3), the champion and its baseline together.</p>",
             "the device of the gate");
    like_str(html,
             "<p class=\"note\">Training shapes measured on device 0 "
             "(NVIDIA H100 80GB HBM3), the seed's and the reference's times "
             "with them.</p>",
             "the device of the training shapes");
    like_str(html, "<p class=\"note\">Held-out shapes measured on device 1",
             "the device of the held-out shapes");

    /* Operators and prompts. */
    like_str(html,
             "<td>llm</td><td>llm</td><td class=\"num\">2.00</td>"
             "<td class=\"num\">14</td><td class=\"num\">12</td>",
             "an operator's row");
    like_str(html,
             "<td class=\"num\">2</td><td>grid-stride &amp; unroll</td>"
             "<td class=\"num\">1</td>",
             "a prompt's row, escaped");

    /* Per-shape tuning. */
    like_str(html,
             "Parameters: BLOCK, VEC; default: BLOCK=256, VEC=4; other "
             "shapes: nearest_training_shape.",
             "the dispatch rule");
    like_str(html,
             "<tr><td>n=4096</td><td>BLOCK=128, VEC=1</td>"
             "<td class=\"num\">1.90</td><td class=\"num\">2.30</td></tr>",
             "a tuned shape");
    like_str(html,
             "<tr><td>n=999</td><td>BLOCK=128, VEC=1</td>"
             "<td class=\"pass\">yes</td></tr>",
             "a held-out check of the dispatch");

    /* The source, escaped. */
    like_str(html,
             "if (i + VEC &lt;= n &amp;&amp; "
             "(reinterpret_cast&lt;unsigned long&gt;(x) &amp; 15) == 0) {",
             "the source is escaped");
    like_str(html, "// kevo champion of task &quot;saxpy &lt;fp32&gt;&quot;",
             "quotes in the source escaped");
    ok(!strstr(html, "reinterpret_cast<"), "no raw source markup");

    char *again = report_ok(dir);
    ok(html && again && strcmp(html, again) == 0, "the same page twice");
    free(again);
    free(html);
    free(dir);
}

static void test_minimal(void)
{
    char *dir = data_dir("minimal");
    char *html = report_ok(dir);
    check_page(html, "minimal");
    ok(!strstr(html, "id=\"prompts\""), "no prompts section without prompts");
    ok(!strstr(html, "id=\"tuning\""), "no tuning section without a table");
    like_str(html, "No champion: no elite has passed the held-out gate.",
             "no champion");
    like_str(html, "No elite was gated.", "nothing gated");
    like_str(html, "No events.jsonl in the run directory", "no events");
    like_str(html, "no evaluations yet", "an empty chart says so");
    is_uint(count(html, "<circle cx="), 0, "no dots");
    like_str(html, "One dimension: a single row.", "one dimension");
    like_str(html,
             "<title>occupancy mid: fitness 0.200, candidate 1, "
             "island 0</title>",
             "the one elite");
    is_uint(count(html, ": empty</title>"), 2, "two empty cells");
    like_str(html, "No champion source: best.cu is not in the run directory.",
             "no source");
    like_str(html, "<dt>device</dt><dd>\xe2\x80\x94</dd>", "no device");
    free(html);
    free(dir);
}

/* A run directory in tmpdir with the minimal summary (edited: the first
 * occurrence of from replaced with to) and files name=text. */
static char *make_run(const char *name, const char *from, const char *to,
                      const char *file, const char *text)
{
    char *dir = path_of(tmpdir, name);
    char *src = data_dir("minimal/summary.json");
    char *summary = read_text(src);
    if (!summary)
        bail_out("cannot read %s", src);
    if (mkdir(dir, 0777) != 0)
        bail_out("mkdir %s: %s", dir, strerror(errno));
    char *at = from ? strstr(summary, from) : NULL;
    if (from && !at)
        bail_out("%s not in the summary", from);
    size_t n = strlen(summary) + (to ? strlen(to) : 0) + 1;
    char *edited = malloc(n);
    if (!edited)
        bail_out("out of memory");
    if (at)
        snprintf(edited, n, "%.*s%s%s", (int)(at - summary), summary, to,
                 at + strlen(from));
    else
        snprintf(edited, n, "%s", summary);
    char *p = path_of(dir, "summary.json");
    write_text(p, edited);
    free(p);
    if (file) {
        p = path_of(dir, file);
        write_text(p, text);
        free(p);
    }
    free(edited);
    free(summary);
    free(src);
    return dir;
}

static void remove_run(char *dir)
{
    free(list_dir(dir, 1));
    free(dir);
}

/* kevo_report_html of dir fails with code and a message holding text. */
static void check_error(const char *dir, kevo_status code, const char *text,
                        const char *what)
{
    kevo_error err;
    kevo_error_init(&err);
    char *html = (char *)"x";
    is_int(kevo_report_html(dir, &html, &err), code, "%s: status", what);
    ok(html == NULL, "%s: no page", what);
    is_int(err.code, code, "%s: err.code", what);
    like_str(err.text, text, "%s: message", what);
}

static void test_errors(void)
{
    char want[8192];
    char *dir = data_dir("bad-syntax");
    kevo_error err;
    kevo_error_init(&err);
    char *html;
    snprintf(want, sizeof want, "%s/summary.json:5:", dir);
    check_error(dir, KEVO_EPARSE, want, "not JSON");
    kevo_report_html(dir, &html, &err);
    is_int(err.line, 5, "not JSON: err.line");
    free(dir);

    dir = data_dir("bad-type");
    snprintf(want, sizeof want,
             "%s/summary.json: $.evaluations: expected a number, found a "
             "string",
             dir);
    check_error(dir, KEVO_EINVALID, want, "a field of the wrong type");
    free(dir);

    dir = data_dir("bad-missing");
    snprintf(want, sizeof want, "%s/summary.json: cannot open: No such file",
             dir);
    check_error(dir, KEVO_ENOENT, want, "no summary.json");
    free(dir);

    char *eio = path_of(tmpdir, "eio");
    char *sub = path_of(eio, "summary.json");
    if (mkdir(eio, 0777) != 0 || mkdir(sub, 0777) != 0)
        bail_out("mkdir %s: %s", sub, strerror(errno));
    snprintf(want, sizeof want, "%s: is a directory, not a file", sub);
    check_error(eio, KEVO_EIO, want, "summary.json cannot be read");
    rmdir(sub);
    rmdir(eio);
    free(sub);
    free(eio);

    kevo_error_init(&err);
    html = (char *)"x";
    is_int(kevo_report_html(NULL, &html, &err), KEVO_EINVAL, "NULL run_dir");
    ok(html == NULL, "NULL run_dir: no page");
    is_int(kevo_report_html("x", NULL, NULL), KEVO_EINVAL, "NULL html");
    is_int(kevo_report_write(NULL, NULL), KEVO_EINVAL, "write: NULL run_dir");

    static const struct {
        const char *from, *to, *file, *text, *want;
        kevo_status code;
    } cases[] = {
        {"\"kevo-summary\"", "\"kevo-checkpoint\"", NULL, NULL,
         "summary.json: $.format: \"kevo-checkpoint\" is not a run summary",
         KEVO_EFORMAT},
        {"\"version\": 1", "\"version\": 2", NULL, NULL,
         "summary.json: $.version: version 2; this library reads version 1",
         KEVO_EFORMAT},
        {"\"seed\": {\"time\": null", "\"seed\": {\"time\": \"fast\"", NULL,
         NULL,
         "summary.json: $.shapes[0].seed.time: expected a number, found a "
         "string",
         KEVO_EINVALID},
        {"\"dims\": {\"n\": 1024}", "\"dims\": {\"n\": [1024]}", NULL, NULL,
         "summary.json: $.shapes[0].dims.n: expected a number or a string, "
         "found an array",
         KEVO_EINVALID},
        {"\"coords\": [1]", "\"coords\": [3]", NULL, NULL,
         "summary.json: $.archive.elites[0].coords[0]: expected a bin from 0 "
         "to 2",
         KEVO_EINVALID},
        {"\"bins\": 3", "\"bins\": 2.5", NULL, NULL,
         "summary.json: $.archive.dimensions[0].bins: expected a whole number",
         KEVO_EINVALID},
        {"\"history\": []", "\"history\": [[1, 0.5], [2]]", NULL, NULL,
         "summary.json: $.history[1]: expected [evaluation, best fitness]",
         KEVO_EINVALID},
        {"\"champion\": null", "\"champion\": {\"id\": 1, \"file\": \"../x\"}",
         NULL, NULL,
         "summary.json: $.champion.file: \"../x\" is not a file name",
         KEVO_EINVALID},
        {"\"prompts\": []", "\"prompts\": [{\"id\": \"one\"}]", NULL, NULL,
         "summary.json: $.prompts[0].id: expected an integer, found a string",
         KEVO_EINVALID},
        {NULL, NULL, "best.dispatch.json", "{\"params\": [\"B\", 2]}",
         "best.dispatch.json: $.params[1]: expected a string, found an "
         "integer",
         KEVO_EINVALID},
        {NULL, NULL, "best.dispatch.json", "{\"shapes\": [{\"time\": 1e-6,\n",
         "best.dispatch.json:2:", KEVO_EPARSE},
        {NULL, NULL, "best.dispatch.json",
         "{\"held_out\": [{\"dims\": {}, \"correct\": \"yes\"}]}",
         "best.dispatch.json: $.held_out[0].correct: expected a boolean",
         KEVO_EINVALID},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "case%zu", i);
        char *run = make_run(name, cases[i].from, cases[i].to, cases[i].file,
                             cases[i].text);
        snprintf(want, sizeof want, "%s/%s", run, cases[i].want);
        check_error(run, cases[i].code, want, cases[i].want);
        remove_run(run);
    }
}

/* The minimal summary's dimensions and elites. */
static const char minimal_archive[] =
    "\"dimensions\": [{\"name\": \"occupancy\", \"bins\": 3, \"labels\": "
    "[\"low\", \"mid\", \"high\"]}],\n    \"elites\": [{\"island\": 0, "
    "\"cell\": 1, \"coords\": [1], \"fitness\": 0.2, \"id\": 1, "
    "\"operator\": \"seed\", \"generation\": 0}]";

/* Three dimensions: each cell of the map shows the best over the third;
 * none: one cell. */
static void test_dimensions(void)
{
    char *run = make_run(
        "dims", minimal_archive,
        "\"dimensions\": [{\"name\": \"a\", \"bins\": 2}, "
        "{\"name\": \"b\", \"bins\": 2, \"labels\": [\"lo\", \"hi\"]}, "
        "{\"name\": \"c\", \"bins\": 5}], \"elites\": ["
        "{\"island\": 0, \"coords\": [1, 0, 0], \"fitness\": 0.3, \"id\": 5}, "
        "{\"island\": 0, \"coords\": [1, 0, 4], \"fitness\": 0.6, \"id\": 6}, "
        "{\"island\": 0, \"coords\": [0, 1, 2], \"fitness\": 0.4, "
        "\"id\": 7}]",
        NULL, NULL);
    char *html = report_ok(run);
    check_page(html, "three dimensions");
    like_str(html, "<title>a 1, b lo: fitness 0.600, candidate 6, island 0",
             "the best over the third dimension wins");
    like_str(html, "<title>a 0, b hi: fitness 0.400, candidate 7",
             "bins without labels show their numbers");
    is_uint(count(html, ": empty</title>"), 2, "the other two cells empty");
    like_str(html,
             "The archive has 3 dimensions: each cell shows the best "
             "fitness over the other 1.",
             "a note says so");
    free(html);
    remove_run(run);

    run = make_run("nodims", minimal_archive,
                   "\"dimensions\": [], \"elites\": [{\"island\": 0, "
                   "\"coords\": [], \"fitness\": 0.2, \"id\": 1}]",
                   NULL, NULL);
    html = report_ok(run);
    check_page(html, "no dimensions");
    like_str(html, "<title>fitness 0.200, candidate 1, island 0</title>",
             "no dimensions: one cell");
    free(html);
    remove_run(run);
}

/* The report of a run with n evaluations in events.jsonl, then the lines
 * of extra; the improvements' dot titles go to improved (may be NULL). */
static char *events_report(size_t n, const char *extra, char ***improved,
                           size_t *nimproved)
{
    char *run = make_run("events", NULL, NULL, NULL, NULL);
    char *p = path_of(run, "events.jsonl");
    FILE *f = fopen(p, "wb");
    if (!f)
        bail_out("cannot write %s", p);
    double best = 0;
    for (size_t i = 1; i <= n; i++) {
        double fit = 0.5 + 0.4 * (double)((i * 7919) % 1000) / 1000;
        int failed = i % 17 == 0;
        if (!failed && fit > best) {
            best = fit;
            if (improved) {
                char **t = realloc(*improved, (*nimproved + 1) * sizeof *t);
                if (!t || !(t[*nimproved] = malloc(96)))
                    bail_out("out of memory");
                snprintf(t[*nimproved], 96,
                         "<title>evaluation %zu: candidate %zu, fitness "
                         "%.3f</title>",
                         i, i + 1, fit);
                *improved = t;
                (*nimproved)++;
            }
        }
        fprintf(f,
                "{\"seq\":%zu,\"time\":%zu,\"type\":\"eval\",\"n\":%zu,"
                "\"id\":%zu,\"verdict\":\"%s\",\"fitness\":%.4f,"
                "\"best\":%.4f}\n",
                i, i, i, i + 1, failed ? "wrong" : "ok", failed ? 0 : fit,
                best);
    }
    fputs(extra, f);
    fclose(f);
    free(p);
    char *html = report_ok(run);
    remove_run(run);
    return html;
}

static void test_event_counts(void)
{
    char *html = events_report(0, "", NULL, NULL);
    check_page(html, "0 events");
    like_str(html, "no evaluations yet", "0 events: the chart says so");
    ok(!strstr(html, "malformed"), "0 events: nothing malformed");
    free(html);

    html = events_report(1, "", NULL, NULL);
    check_page(html, "1 event");
    is_uint(count(html, "<circle cx="), 1, "1 event: one dot");
    like_str(html, "1 evaluation (0 failed, 1 improvement)",
             "1 event: caption");
    free(html);

    html = events_report(2,
                         "{\"type\":\"eval\",\"n\":\"three\"}\n"
                         "{\"type\":\"gate\",\"passed\":1}\n"
                         "{\"type\":\"eval\",\"n\":4,\"fitness\":0.1",
                         NULL, NULL);
    is_uint(count(html, "<circle cx="), 2, "bad events: no dot for them");
    like_str(html, "events.jsonl: 3 malformed lines skipped (of 5).",
             "events with bad fields and a cut line are counted");
    free(html);

    /* A run resumed from its checkpoint after evaluation 1 makes 2 and 3
     * again: each is drawn and counted once, as the resumed run made it. */
    html = events_report(3,
                         "{\"type\":\"resume\",\"n\":1}\n"
                         "{\"type\":\"eval\",\"n\":2,\"id\":3,"
                         "\"verdict\":\"wrong\",\"fitness\":0,"
                         "\"best\":0.5}\n"
                         "{\"type\":\"eval\",\"n\":3,\"id\":4,"
                         "\"verdict\":\"ok\",\"fitness\":0.95,"
                         "\"best\":0.95}\n",
                         NULL, NULL);
    is_uint(count(html, "<circle cx="), 3,
            "a resumed run: the evaluations made again are drawn once");
    like_str(html, "3 evaluations (1 failed, 2 improvements)",
             "a resumed run: the caption counts the resumed run's");
    like_str(html, "evaluation 3: candidate 4, fitness 0.950",
             "a resumed run: the evaluation made again is the one drawn");
    ok(!strstr(html, "malformed"), "a resumed run: nothing malformed");
    free(html);

    /* Parsing is far slower under valgrind: fewer there, still more than
     * the dots drawn. */
    const char *vg = getenv("KEVO_VALGRIND");
    size_t n = vg && strcmp(vg, "1") == 0 ? 10000 : 100000;
    char **improved = NULL;
    size_t nimproved = 0, missing = 0;
    html = events_report(n, "", &improved, &nimproved);
    check_page(html, "many events");
    size_t dots = count(html, "<circle cx=");
    ok(dots >= 3000 && dots <= 4000, "%zu events: %zu dots drawn", n, dots);
    char want[128];
    snprintf(want, sizeof want,
             "; %zu dots drawn: every improvement and one in ", dots);
    like_str(html, want, "%zu events: the caption says how they were kept", n);
    for (size_t i = 0; i < nimproved; i++) {
        missing += !strstr(html, improved[i]);
        free(improved[i]);
    }
    free(improved);
    ok(nimproved > 0 && missing == 0, "%zu events: all %zu improvements drawn",
       n, nimproved);
    snprintf(want, sizeof want, ">%zu</text>", n);
    like_str(html, want, "%zu events: the axis reaches the end", n);
    ok(strlen(html) < 1000000, "%zu events: a page of %zu bytes", n,
       strlen(html));
    free(html);
}

static void test_write(void)
{
    char *src = data_dir("full");
    char *run = path_of(tmpdir, "run");
    copy_dir(src, run);
    kevo_error err;
    kevo_error_init(&err);
    is_int(kevo_report_write(run, &err), KEVO_OK, "kevo_report_write");
    char *page = path_of(run, "report.html");
    char *written = read_text(page);
    char *html = report_ok(run);
    ok(written && html && strcmp(written, html) == 0,
       "report.html holds the report");
    free(written);
    write_text(page, "old");
    is_int(kevo_report_write(run, &err), KEVO_OK, "a second write");
    written = read_text(page);
    ok(written && html && strcmp(written, html) == 0, "replaces the page");
    struct stat st;
    ok(stat(page, &st) == 0 && (st.st_mode & 0777) == 0644,
       "report.html is readable by all");
    char *names = list_dir(run, 0);
    is_str(names,
           "best.cu best.dispatch.json events.jsonl report.html summary.json",
           "no temporary file left behind");
    free(names);
    free(written);
    free(html);
    free(page);
    remove_run(run);
    free(src);

    run = make_run("bad", "\"evaluations\": 0", "\"evaluations\": \"x\"", NULL,
                   NULL);
    kevo_error_init(&err);
    is_int(kevo_report_write(run, &err), KEVO_EINVALID, "write: a bad summary");
    like_str(err.text, "$.evaluations", "write: the error names the field");
    names = list_dir(run, 0);
    is_str(names, "summary.json", "write: nothing written on failure");
    free(names);
    remove_run(run);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/kevo-report-XXXXXX",
             t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir))
        bail_out("mkdtemp: %s", strerror(errno));
    test_full();
    test_minimal();
    test_errors();
    test_dimensions();
    test_event_counts();
    test_write();
    if (rmdir(tmpdir) != 0)
        ok(0, "temporary directory %s left empty: %s", tmpdir, strerror(errno));
    return done_testing();
}
