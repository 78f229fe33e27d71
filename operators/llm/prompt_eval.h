/*
 * prompt_eval.h: evaluations (prompt_eval.c), the device (prompt_device.c)
 * and compile logs (prompt_log.c) in the words of a prompt. An evaluation
 * summary is the JSON that kevo_eval_result_to_json() writes (the search keeps
 * one beside each elite); a summary of another form is shown key by key. The
 * device is the JSON object the host's device_json() gives (kevo-operator(7)).
 * Nothing here writes JSON: objects become "key value" lists, arrays
 * comma-separated lists. Keys whose name starts with "held_out" never
 * appear.
 */
#ifndef KEVO_LLM_PROMPT_EVAL_H
#define KEVO_LLM_PROMPT_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "buf.h"

/* ---- prompt_eval.c ---- */

/* True for a key that is never shown (a held-out figure). */
bool kevo__llm_hidden_key(const char *key);

/* v as text: a scalar as it is (true "yes", null "none"), an array as a
 * comma-separated list, an object as "key value" pairs, nested ones in
 * parentheses, cut after a few hundred bytes. */
void kevo__llm_put_value(llm_buf *b, json_t *v);

/* An object as "key=value, key=value" (dims, an assignment). */
void kevo__llm_put_pairs(llm_buf *b, json_t *o);

/* A number of v, or NaN when it is not one; of member key of o. */
double kevo__llm_num(json_t *v);
double kevo__llm_num_at(json_t *o, const char *key);

/* True for a finite number above 0 (a figure that is known). */
bool kevo__llm_positive(double x);

/* A size in bytes as CUDA states memory sizes: "48 KiB", "50 MiB". */
void kevo__llm_put_kib(llm_buf *b, double bytes);

/* ---- prompt_device.c ---- */

/* The device: a line with its name, then "- " lines: compute capability
 * and SMs; threads, registers and shared memory per SM; per block, with
 * the 48 KiB default and the opt-in maximum of shared memory; L2; the
 * measured bandwidth, peaks and launch latency with their units; the ridge
 * point of the task's peak. Text that is not a JSON object is shown as it
 * is. */
void kevo__llm_put_device(llm_buf *b, const char *device_json);

/* The target kevo compiles for, for the first rule of the system text:
 * the device's "arch" (sm_90a, ...) with compute capability, the NVRTC
 * options (options: the fixed ones, "-std=c++17 ..."; -arch, the
 * parameters' -D macros and -DKEVO_EVAL=1 are added here), that the code
 * runs on that device alone, and what the target has and lacks: wgmma and
 * setmaxnreg on sm_90a, tcgen05 on sm_100a, clusters and bulk copies from
 * 9.0 on, none of them before. The device's architecture in general words
 * where device_json (may be NULL) names no arch. */
void kevo__llm_put_target(llm_buf *b, const char *device_json,
                          const char *options);

/* ---- prompt_eval.c ---- */

/* An evaluation in full: a line saying how it ended (the verdict and
 * reason of a failure) and its fitness; a line per shape (dims, WRONG with
 * the worst element, time, efficiency, bound, GB/s, GFLOP/s, DRAM traffic
 * against the cost model, achieved occupancy); a line per kernel (grid,
 * block, registers, spills, shared memory, occupancy, PTX features); and
 * the compile log's errors and warnings, at most max_log_lines of them.
 * Shapes name their dims in the order of task_dims (the host's
 * task_dims(); may be NULL). Text that is not a JSON object is shown as it
 * is. */
void kevo__llm_put_evaluation(llm_buf *b, const char *summary_json,
                              const char *task_dims, size_t max_log_lines);

/* An evaluation in one line: how it ended, its fitness and each shape's
 * efficiency and time. */
void kevo__llm_put_brief(llm_buf *b, const char *summary_json);

/* A line "Differs from the current kernel: ..." naming what sets a
 * variant apart from the parent: parameter values, the number of kernels,
 * and the main kernel's threads, registers, spills, shared memory,
 * occupancy, PTX features and memory strategy; nothing when nothing
 * differs. The assignments (JSON objects; NULL: the summary's copy of the
 * candidate's parameters) and the summaries may each be NULL. */
void kevo__llm_put_differences(llm_buf *b, const char *summary_json,
                               const char *assignment_json,
                               const char *parent_summary_json,
                               const char *parent_assignment_json);

/* The fitness of a summary in *fitness (its "fitness", a number or an
 * object's "value"); false, with NaN, when it has none. */
bool kevo__llm_summary_fitness(const char *summary_json, double *fitness);

/* kevo__llm_put_evaluation() as a new string ("" for NULL); NULL when out
 * of memory. For a turn that tells the model how its kernel fared. */
char *kevo__llm_eval_text(const char *summary_json, const char *task_dims,
                          size_t max_log_lines);

/* ---- prompt_log.c ---- */

/* The compile log's error and warning lines, at most max_lines of them
 * (each cut to 300 bytes), errors first, each with the source line NVRTC
 * quotes after it, and a line saying how many were left out; NVRTC's
 * closing count of errors and its remarks are not kept. "" when it has
 * none. A new string, or NULL when out of memory. */
char *kevo__llm_distill_log(const char *log, size_t max_lines);

#endif
