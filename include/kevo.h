/*
 * kevo.h: everything kevo offers to programs that link it. Include this,
 * or the headers of the parts you use.
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
#include <kevo/expr.h>
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
