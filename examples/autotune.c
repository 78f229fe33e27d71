/*
 * autotune.c: a custom autotuner in about a hundred lines, to copy from.
 * It builds a task in C (z = a * x + b * y over n floats), searches the
 * seed kernel's parameters with the params operator for 60 evaluations on
 * the GPU, and prints each new champion, then the champion's parameters,
 * its fitness and its per-shape dispatch table.
 *
 *   cc autotune.c $(pkg-config --cflags --libs kevo) -o autotune
 *   ./autotune [RUN_DIR]       (RUN_DIR: keep a run directory and report)
 *
 * Exits 0 with a champion, 1 on an error or when no elite passed the
 * held-out gate, and 77 where there is no GPU.
 */
#include <inttypes.h>
#include <stdio.h>

#include <kevo.h>
#include <kevo/search.h>

static const char reference[] =
    "/* kevo:launch axpby_ref<<<ceil_div(n, 256), 256>>>(a, b, x, y, z, n) */\n"
    "extern \"C\" __global__ void axpby_ref(float a, float b, const float *x,\n"
    "                                     const float *y, float *z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i] = (float)((double)a * x[i] + (double)b * y[i]);\n"
    "}\n";

static const char seed[] =
    "// kevo:param\n"
    "//   BLOCK in pow2(32..1024) = 64\n"
    "//   ITEMS in {1, 2, 4, 8} = 1\n"
    "/* kevo:launch\n"
    " *   axpby<<<ceil_div(n, BLOCK * ITEMS), BLOCK>>>(a, b, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void __launch_bounds__(BLOCK)\n"
    "    axpby(float a, float b, const float *__restrict__ x,\n"
    "          const float *__restrict__ y, float *__restrict__ z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < ITEMS; k++, i += BLOCK)\n"
    "        if (i < n)\n"
    "            z[i] = a * x[i] + b * y[i];\n"
    "}\n";

/* Prints every new champion as the search finds it. */
static void on_event(kevo_search *s, const kevo_search_event *ev, void *user)
{
    kevo_search_stats st = {.size = sizeof st};
    (void)user;
    if (ev->type != KEVO_SEARCH_CHAMPION || kevo_search_get_stats(s, &st))
        return;
    printf("evaluation %" PRIu64 ": new champion %" PRIu64 ", fitness %.3f\n",
           st.evaluations, kevo_candidate_id(ev->candidate), ev->fitness);
}

int main(int argc, char **argv)
{
    kevo_error err;
    kevo_task *task = NULL;
    kevo_evaluator *ev = NULL;
    kevo_search *s = NULL;
    kevo_status rc;
    int status = 1;
    kevo_error_init(&err);

    /* The task: what the search may not change. */
    const int64_t train[][1] = {{1 << 24}, {3000000}}, held_out[] = {1000003};
    if ((rc = kevo_task_new("axpby", &task, &err)) ||
        (rc = kevo_task_add_dim(task, "n", &err)) ||
        (rc = kevo_task_add_scalar(task, "a", KEVO_DTYPE_F32, NULL, &err)) ||
        (rc = kevo_task_set_init(task, "a", KEVO_DIST_UNIFORM, -2, 2, &err)) ||
        (rc = kevo_task_add_scalar(task, "b", KEVO_DTYPE_F32, "0.5", &err)) ||
        (rc = kevo_task_add_buffer(task, "x", KEVO_DTYPE_F32, KEVO_ROLE_IN, "n",
                                   &err)) ||
        (rc = kevo_task_add_buffer(task, "y", KEVO_DTYPE_F32, KEVO_ROLE_IN, "n",
                                   &err)) ||
        (rc = kevo_task_add_buffer(task, "z", KEVO_DTYPE_F32, KEVO_ROLE_OUT,
                                   "n", &err)) ||
        (rc = kevo_task_add_scalar(task, "n", KEVO_DTYPE_I32, "n", &err)) ||
        (rc = kevo_task_set_tolerance(task, NULL, 1e-6, 1e-5, &err)) ||
        (rc = kevo_task_set_cost(task, "12*n", "3*n", KEVO_PEAK_FP32, &err)) ||
        (rc = kevo_task_set_reference(task, reference, "ref", &err)) ||
        (rc = kevo_task_set_seed(task, seed, "seed", &err)) ||
        (rc =
             kevo_task_add_shape(task, KEVO_SHAPES_TRAIN, train[0], 1, &err)) ||
        (rc =
             kevo_task_add_shape(task, KEVO_SHAPES_TRAIN, train[1], 1, &err)) ||
        (rc = kevo_task_add_shape(task, KEVO_SHAPES_HELD_OUT, held_out, 1,
                                  &err)) ||
        (rc = kevo_task_add_descriptor(task, "memory", 0, 0, 0, &err)) ||
        (rc = kevo_task_add_descriptor(task, "block_size", 0, 0, 0, &err)) ||
        (rc = kevo_task_validate(task, &err)))
        goto done;

    /* The evaluator: compile processes and a GPU worker. */
    if ((rc = kevo_evaluator_new(&ev, &err)) ||
        (rc = kevo_evaluator_start(ev, 0, &err))) {
        if (rc == KEVO_ENODEV) {
            fprintf(stderr, "autotune: skipped, no GPU: %s\n", err.text);
            status = 77;
        }
        goto done;
    }

    /* The search: the params operator, 60 evaluations, a callback. */
    if ((rc = kevo_search_new(task, &s, &err)) ||
        (rc = kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 60, &err)) ||
        (rc = kevo_search_set_evaluator(s, ev, &err)) ||
        (rc = kevo_operator_host_load(kevo_search_host(s), "params", NULL,
                                      &err)) ||
        (rc = kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &err)) ||
        (rc = kevo_search_set_callback(s, on_event, NULL, &err)) ||
        (argc > 1 && (rc = kevo_search_open_run(s, argv[1], 0, NULL, &err))) ||
        (rc = kevo_search_run(s, &err)) ||
        (argc > 1 && (rc = kevo_report_write(argv[1], &err))))
        goto done;

    double fitness = 0;
    const kevo_candidate *champ = kevo_search_champion(s, &fitness);
    if (!champ) {
        fprintf(stderr, "autotune: no elite passed the held-out gate\n");
        goto done;
    }
    printf("champion %" PRIu64 ": fitness %.3f,", kevo_candidate_id(champ),
           fitness);
    const kevo_vars *params = kevo_candidate_assignment(champ);
    for (size_t i = 0; i < kevo_vars_count(params); i++)
        printf(" %s=%" PRId64, kevo_vars_name(params, i),
               kevo_vars_value(params, i));
    const char *dispatch = kevo_search_dispatch_json(s);
    printf("\ndispatch: %s\n", dispatch ? dispatch : "(not tuned)");
    status = 0;
done:
    if (rc != KEVO_OK && status != 77)
        fprintf(stderr, "autotune: %s\n",
                err.text[0] ? err.text : kevo_strerror(rc));
    kevo_search_free(s);
    kevo_evaluator_free(ev);
    kevo_task_free(task);
    return status;
}
