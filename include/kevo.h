/*
 * kevo.h: everything kevo offers to programs that link it. Include this,
 * or the headers of the parts you use.
 *
 * The API has a stable part and an experimental one (kevo-api(7)). The
 * stable part is what a program that tunes kernels needs: tasks,
 * candidates, the archive and its queries, the evaluator's options,
 * submit and wait and its results, the search's options and run loop, the
 * report, errors and versions. It changes only as the libtool version in
 * configure.ac says. The experimental part is what may still change: the
 * operator host, the prompt pool's workings, the run directory, the event
 * log reader, random streams, paired timing, the gate and finer details
 * of results. Its declarations are seen only by a program that defines
 * KEVO_EXPERIMENTAL before it includes a kevo header (the blocks marked
 * #ifdef KEVO_EXPERIMENTAL); the library exports them all the same, and
 * they carry no ABI promise across minor versions.
 *
 * Names: every handle kevo_X is released by kevo_X_free() (NULL does
 * nothing). kevo_X_new() makes an X the caller owns, as do the functions
 * whose verb says where one comes from (_load, _from_json, _parse, _open,
 * _copy). A function that takes ownership of an argument ends in _adopt;
 * one that hands the caller something an object held has take in its
 * name. Everything else is copied or borrowed as its comment says.
 */
#ifndef KEVO_H
#define KEVO_H

#include <kevo/archive.h>
#include <kevo/candidate.h>
#include <kevo/common.h>
#include <kevo/dtype.h>
#include <kevo/error.h>
#include <kevo/eval.h>
#include <kevo/eventlog.h>
#include <kevo/export.h>
#include <kevo/expr.h>
#include <kevo/farm.h>
#include <kevo/operator.h>
#include <kevo/operator_host.h>
#include <kevo/paramspace.h>
#include <kevo/prompt.h>
#include <kevo/promptpool.h>
#include <kevo/report.h>
#include <kevo/rng.h>
#include <kevo/rundir.h>
#include <kevo/search.h>
#include <kevo/status.h>
#include <kevo/task.h>
#include <kevo/vars.h>

#endif
