/* Spot availability traces (examples/spot-traces/, docs/spot.md): the
 * shipped format `t_s,nodes_available` (one count column per VM type; two
 * for a job that mixes types), the index.csv that describes a folder of
 * them, and the per-tick merge of two single-type traces. */
#ifndef CLOUDFIT_PROFILER_SPOT_TRACES_H
#define CLOUDFIT_PROFILER_SPOT_TRACES_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/profiler/types.h"

/* Parses a trace: a `t_s` column (seconds, increasing) and one or two
 * count columns (non-negative integers). Each tick lasts until the next
 * one; the last lasts as long as the one before. `requested` > 0 sets the
 * requested nodes of every type, else the largest count. Errors name
 * "name:line: column 'c'". */
cf_status cf_spot_trace_parse(const char *text, size_t len, const char *name, int requested, cf_spot_trace *out);
/* Reads `path`; when the index.csv in the same folder lists the file, its
 * row fills the VM description and, unless `requested` > 0, the requested
 * node count. */
cf_status cf_spot_trace_load(const char *path, int requested, cf_spot_trace *out);
/* Merges two single-type traces into one of two types, tick by tick over
 * the time both cover (the change points of both). */
cf_status cf_spot_trace_merge(const cf_spot_trace *a, const cf_spot_trace *b, cf_spot_trace *out);
void cf_spot_trace_free(cf_spot_trace *t);

/* Every trace listed in DIR/index.csv, loaded in the order listed. */
typedef struct {
    cf_spot_trace *traces;
    size_t n;
} cf_spot_trace_set;
cf_status cf_spot_trace_set_load(const char *dir, cf_spot_trace_set *out);
void cf_spot_trace_set_free(cf_spot_trace_set *set);

#endif
