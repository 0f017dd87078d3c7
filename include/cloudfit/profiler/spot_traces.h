/* Spot availability traces (examples/spot-traces/, docs/spot.md): the
 * shipped format `t_s,nodes_available` (one count column per VM type; two
 * for a job that mixes types), the index.csv that describes a folder of
 * them, and the per-tick merge of two single-type traces. */
#ifndef CLOUDFIT_PROFILER_SPOT_TRACES_H
#define CLOUDFIT_PROFILER_SPOT_TRACES_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/profiler/types.h"

/* Largest node count a trace may hold; largest GPUs per VM a file name
 * may say (more is a CPU VM's cores: the public traces' intel_64). */
#define CF_SPOT_MAX_COUNT 100000
#define CF_SPOT_MAX_GPUS_PER_VM 16

/* Parses a trace: the public traces' JSON ({"metadata": {"gap_seconds":
 * G}, "data": [count, ...]}: one count every G s) or a `t_s` column (seconds, increasing) and one or two
 * count columns (non-negative integers). Each tick lasts until the next
 * one; the last lasts as long as the one before. `requested` > 0 sets the
 * requested nodes of every type, else the largest count. Errors name
 * "name:line: column 'c'". */
cf_status cf_spot_trace_parse(const char *text, size_t len, const char *name, int requested, cf_spot_trace *out);
/* Reads `path`; when the index.csv in the same folder lists the file, its
 * row fills the VM description and, unless `requested` > 0, the requested
 * node count; else what the path says (cf_spot_trace_vm_from_path). */
cf_status cf_spot_trace_load(const char *path, int requested, cf_spot_trace *out);
/* Merges two single-type traces into one of two types, tick by tick over
 * the time both cover (the change points of both). */
cf_status cf_spot_trace_merge(const cf_spot_trace *a, const cf_spot_trace *b, cf_spot_trace *out);
/* Count column k (0 or 1) of a trace with one per VM type, as a trace of
 * its own ("NAME (count column 2)", the column's VM): the two traces that
 * cf_spot_trace_merge would merge back into `t`. */
cf_status cf_spot_trace_column(const cf_spot_trace *t, int k, cf_spot_trace *out);
void cf_spot_trace_free(cf_spot_trace *t);

/* What a trace's path says about its VMs: the public traces' layout
 * (KIND/N-node/CLOUD-MM-DD-YYYY/ZONE_GPU_COUNT.json, skypilot-org/
 * spot-traces) or their CSV copies' names (KIND_Nnode_MM-DD-YYYY_ZONE_
 * GPUxCOUNT.csv): requested nodes, cloud, zone, region, GPU (upper case),
 * GPUs per VM, start date (ISO); no instance type. 1 when recognised. */
int cf_spot_trace_vm_from_path(const char *path, cf_spot_trace_vm *vm);
/* The cloud and region of a zone name: AWS us-east-1a → aws, us-east-1;
 * Google Cloud us-central1-a → gcp, us-central1. 0 for another form. */
int cf_spot_zone_cloud(const char *zone, char *cloud, size_t n_cloud, char *region, size_t n_region);

/* Every trace listed in DIR/index.csv, loaded in the order listed; without
 * an index.csv, every *.csv and *.json under DIR (4 folders deep) whose
 * path describes its VMs, in path order, the others skipped and named in
 * `skipped` (an error when none is left). */
typedef struct {
    cf_spot_trace *traces;
    size_t n;
    size_t n_skipped;
    char skipped[1024];
} cf_spot_trace_set;
cf_status cf_spot_trace_set_load(const char *dir, cf_spot_trace_set *out);
void cf_spot_trace_set_free(cf_spot_trace_set *set);

#endif
