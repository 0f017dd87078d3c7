/* Runners of `cloudfit search` (docs/search.md), each a cf_search_runner
 * (struct of function pointers) plus the candidate configurations it can
 * run:
 *   trace:MEASUREMENTS.csv  answers a probe with the measured step time of
 *                           that configuration × seeded noise; knows the oracle
 *   exec:'COMMAND TEMPLATE' runs the command (argv, no shell) per probe and
 *                           reads the JSON-lines protocol (docs/exec-protocol.md) */
#ifndef CLOUDFIT_CLI_SEARCH_RUNNERS_H
#define CLOUDFIT_CLI_SEARCH_RUNNERS_H
#include <gsl/gsl_rng.h>

#include "cloudfit/pricing.h"
#include "cloudfit/profiler/measurements.h"
#include "cloudfit/advisor/search.h"
#include "cloudfit/spec.h"
#include "options.h"

/* Parsed --price GPU=USD_PER_GPU_HR entries. */
typedef struct {
    char gpu[32];
    double usd_per_gpu_hr;
} cf_search_price;

typedef struct {
    char path[1024];
    char model[64];
    cf_search_candidate *cands;
    double *true_step_s;          /* per candidate: median of the file's rows */
    size_t n;
    cf_vm *synthetic;             /* VM rows for --price candidates (owned) */
    size_t n_synthetic;
    size_t n_rows_used, n_unpriced, n_asymmetric;
    double noise_sd;
    gsl_rng *rng;
} cf_trace_runner;

/* Loads the rows of `model` and builds the candidates. Returns 0 or prints
 * the error and returns the exit code. */
int cf_trace_runner_open(const char *path, const char *model, const cf_catalog *catalog, const cf_spec *spec,
                         const cf_search_price *prices, size_t n_prices, double noise_sd, unsigned long seed,
                         cf_trace_runner *out);
cf_search_runner cf_trace_runner_iface(cf_trace_runner *t);
void cf_trace_runner_close(cf_trace_runner *t);

#define CF_EXEC_MAX_WORDS 64

typedef struct {
    char *words[CF_EXEC_MAX_WORDS];   /* the template split into argv words (owned) */
    int n_words;
    char label[160];
    double timeout_s;
    unsigned long seed;
    int warmup_steps;
    size_t n_runs;
} cf_exec_runner;

/* Splits and checks the template (placeholders: {cloud} {region}
 * {instance_type} {gpu} {nodes} {gpus_per_node} {local_batch} {steps}). */
int cf_exec_runner_open(const char *template_text, double timeout_s, unsigned long seed, cf_exec_runner *out);
cf_search_runner cf_exec_runner_iface(cf_exec_runner *e);
void cf_exec_runner_close(cf_exec_runner *e);
/* Candidates for the exec runner from the filtered catalog rows: the
 * cheapest region of each (cloud, instance type), node counts 1, 2, 4, …
 * up to the limits, and the per-GPU batches (spec profile.local_batches,
 * else 8 … 256 by powers of two, capped by `max_local_batch` per GPU when
 * known). *out is malloc'd. */
cf_status cf_exec_candidates(const cf_spec *spec, const cf_vm *const *rows, size_t n_rows, cf_search_candidate **out,
                             size_t *n_out);

#endif
