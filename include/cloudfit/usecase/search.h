/* `search` (online black-box search with probe runs, docs/search.md) as a
 * library call: a request in, a result out. cf_search_session_run owns the
 * pipeline from the effective spec to a report ready for render/: the
 * runner (a trace of measurements, or a command per probe) and its
 * candidates, the evidence read through the caller's database handle, the
 * prior, the search itself, its score against the trace's truth, the
 * summary, the final recommendation over the search's estimates (spot
 * plans with --spot allow|only) and the history row's data. What stays
 * with the caller: options, opening the spec, the catalog and the
 * database, the progress display, rendering, writing the bytes and the
 * history row (cf_search_session_record gives its fields).
 *
 * (cf_search_run is the advisor's search proper, which this runs.) */
#ifndef CLOUDFIT_USECASE_SEARCH_H
#define CLOUDFIT_USECASE_SEARCH_H
#include <stddef.h>

#include "cloudfit/advisor.h"
#include "cloudfit/advisor/search.h"
#include "cloudfit/db/search_runs.h"
#include "cloudfit/pricing/source.h"
#include "cloudfit/profiler/runners.h"
#include "cloudfit/render.h"
#include "cloudfit/render/search_report.h"
#include "cloudfit/spec.h"
#include "cloudfit/usecase/evidence.h"

typedef struct {
    const cf_spec *spec;                      /* the effective spec (overrides applied) */
    const cf_catalog_source *catalog_source;  /* the catalog in use */
    cf_db *db;                                /* cached profiles; NULL = none */
    const char *db_name;                      /* how the database may be shown; NULL = "" */
    const char *runner;                       /* "trace:MEASUREMENTS.csv" or "exec:COMMAND TEMPLATE" */
    /* trace runner */
    const char *trace_model;                  /* the trace's model column; NULL = the spec's name */
    double trace_noise_sd;                    /* log sd of the answers' noise; < 0 = 0.02 */
    const cf_search_price *prices;            /* GPU prices the catalog lacks (--price) */
    size_t n_prices;
    double trace_nic_gbps;                    /* > 0: the measured cluster's NIC for every configuration */
    /* exec runner */
    double timeout_s;                         /* per probe; <= 0 = the runner's default */
    int include_restricted_regions;           /* offers in regions that need an access request too */
    const char *const *prefer_regions;        /* tie order before the search's regions */
    size_t n_prefer_regions;
    /* the search; each 0 (or NULL) = the default of cf_search_options_for */
    const cf_search_method *method;
    const double *margin;
    int max_probes;
    const double *safety_sds;
    int probe_steps;                          /* probes and profile runs */
    unsigned long seed;                       /* also the runner's; 0 = 1 */
    double probe_startup_s;
    size_t top;                               /* configurations ranked; 0 = 10 */
    cf_progress_count_fn progress;            /* before each run; NULL = none */
    void *progress_ctx;
    cf_note_fn note;                          /* what is said on the way; NULL = nothing */
    void *note_ctx;
} cf_search_session_request;

/* Filled in place: `report` and `search_report` point into the struct, so
 * do not copy it. */
typedef struct {
    const cf_spec *spec;                      /* the request's */
    int runner_is_trace;
    cf_trace_runner trace;
    cf_exec_runner exec;
    int runner_open;
    cf_search_candidate *owned_cands;         /* exec: the catalog's candidates */
    const cf_vm **rows;                       /* exec: the offers, preferred region first */
    cf_gpu_perf *prior;
    size_t n_prior;
    cf_inputs inputs;
    int have_inputs;
    cf_search_options options;
    cf_search_result result;
    int have_result;
    int infeasible;                           /* nothing meets the constraints with the safety margin */
    int no_spot_plan;                         /* --spot only, and no spot plan meets them: infeasible too */
    cf_search_score score;
    cf_search_summary summary;
    char runner_note[512];
    char created_at[32];                      /* ISO 8601 UTC (SOURCE_DATE_EPOCH fixes it) */
    cf_search_report search_report;           /* the probes and the accounting */
    /* The final recommendation (result.chosen >= 0): the `recommend`
     * report over the search's estimates. */
    cf_inputs report_inputs;                  /* inputs with the search's fitted parameters */
    cf_advice advice;
    cf_report report;
    cf_search_probe_record *probes;           /* the history row's runs, one per result.n_runs */
} cf_search_session;

/* Runs the search for req->spec. CF_OK and `out` filled (a search that
 * found nothing within the safety margin too: out->infeasible, and
 * cf_search_session_verdict says so after the result is shown), or a
 * status with the last error set: the runner cannot be opened (the
 * message names the file or template), the spec's filter names an unknown
 * value, evidence that cannot be read, the search stopped (its runs so far
 * are freed). cf_search_session_free `out` either way. */
cf_status cf_search_session_run(const cf_search_session_request *req, cf_search_session *out);
/* Whether the session has a plan to show and store (the final report):
 * the search picked one and, with --spot only, a spot plan meets the
 * constraints (an on-demand pick is no answer to --spot only). */
int cf_search_session_has_pick(const cf_search_session *s);
/* CF_OK, or CF_ERR_INFEASIBLE with the last error saying that no
 * configuration meets the spec's constraints with the safety margin. */
cf_status cf_search_session_verdict(const cf_search_session *s);
/* The history row of the search (db/search_runs.h): `result_json` is the
 * compact document shown; the row points into `s`, its spec and runner text. */
void cf_search_session_record(const cf_search_session *s, const char *result_json, cf_search_record *out);
void cf_search_session_free(cf_search_session *out);

#endif
