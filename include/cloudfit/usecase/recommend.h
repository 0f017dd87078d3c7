/* `recommend` as a library call (libgit2's way): a request in, a result
 * out. cf_recommend owns the pipeline from the effective spec to a report
 * ready for render/: the offers that pass the search section's filter in
 * their regions' tie order, the prices in use, the evidence read through
 * the caller's database handle, the advisor's inputs, the ranking and,
 * when asked, the mixed-GPU split, then the CI side (docs/ci.md): the
 * baseline (through the same handle) and the gates; cf_recommend_record
 * writes the history row. What stays with the caller: options, opening
 * files and the database (once), detecting CI, launch specs and writing
 * the rendered bytes. */
#ifndef CLOUDFIT_USECASE_RECOMMEND_H
#define CLOUDFIT_USECASE_RECOMMEND_H
#include <stddef.h>

#include "cloudfit/advisor.h"
#include "cloudfit/advisor/gates.h"
#include "cloudfit/advisor/hetero.h"
#include "cloudfit/advisor/inputs.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/source.h"
#include "cloudfit/db/history.h"
#include "cloudfit/render.h"
#include "cloudfit/spec.h"
#include "cloudfit/usecase/evidence.h"

typedef struct {
    const cf_spec *spec;               /* the effective spec (overrides applied) */
    cf_catalog_source *catalog_source; /* the catalog in use; cf_recommend sets the prices in use */
    cf_db *db;                         /* cached profiles, recorded runs, the baseline; NULL = none */
    const char *db_name;               /* how the database may be shown (no password); NULL = "" */
    const char *history;               /* the history named (as db_name), for the next measurement's command;
                                          NULL = the default (report.history) */
    size_t top;                        /* configurations ranked; 0 = 10 */
    int mix;                           /* also the best job mixing two GPU types (docs/spot.md) */
    int include_restricted_regions;    /* regions that need an access request too */
    const char *const *prefer_regions; /* tie order before the search's regions */
    size_t n_prefer_regions;
    const char *baseline_key;          /* the identity baselines follow; NULL = NAME@PATH */
    const cf_ci_info *ci;              /* the CI run detected (report.ci); NULL = none */
    const char *base_branch;           /* the baseline's branch; NULL = ci's base branch, else the run's own
                                          branch (a push build), else any */
    const char *compare_to;            /* a recommendation document as the baseline; NULL = the history's */
    const cf_gate_limits *gate_limits; /* NULL = no gate */
    cf_note_fn note;                   /* what is said on the way; NULL = nothing */
    void *note_ctx;
} cf_recommend_request;

/* Filled in place: `report` points into the struct, so do not copy it. */
typedef struct {
    const cf_vm **rows; /* the offers ranked, preferred region first */
    size_t n_rows;
    cf_inputs inputs;
    cf_advice advice;
    cf_hetero_advice hetero; /* when request.mix */
    char created_at[32];     /* ISO 8601 UTC (SOURCE_DATE_EPOCH fixes it) */
    char identity[512];      /* cf_recommend_identity */
    cf_baseline baseline;    /* .have = 0: none found (.lookup says where it was looked for) */
    cf_history_gate gates[CF_MAX_GATES];
    size_t n_gates;
    cf_report report;        /* everything render/ needs */
} cf_recommend_result;

/* The recommendation for req->spec. CF_OK and `out` filled, or a status
 * with the last error set: the spec's filter names an unknown value (the
 * message names the spec and its key), evidence that cannot be read, no
 * configuration meets the constraints (CF_ERR_INFEASIBLE, saying how far
 * the best miss), the mixed-GPU search failed, the baseline cannot be
 * read. cf_recommend_result_free `out` either way. */
cf_status cf_recommend(const cf_recommend_request *req, cf_recommend_result *out);
void cf_recommend_result_free(cf_recommend_result *out);
/* Writes the recommendation `report` shows to the history `db` (with its
 * alternatives, CI metadata and gates; `json_text` is the compact
 * document); *id gets its id. Inside the caller's hold (cf_db_hold), so
 * the row is committed only once the result was delivered. */
cf_status cf_recommend_record(cf_db *db, const cf_report *report, const char *json_text, long long *id);
/* A baseline from a recommendation document (--compare-to FILE). */
cf_status cf_baseline_from_file(const char *path, cf_baseline *out);
/* A baseline from a history row. */
void cf_baseline_from_row(const cf_history_row *row, cf_baseline *out);

/* The identity a spec's CI baselines follow (docs/ci.md): `baseline_key`
 * when given, else NAME@PATH with the spec file's path in its git
 * repository (the same on every checkout), else (a spec read from a pipe)
 * its name alone. */
void cf_recommend_identity(const cf_spec *spec, const char *baseline_key, char *out, size_t n);
/* Prefixes the last error of a failed catalog filter on the list `failed`
 * (cf_catalog_check_filter_field) with the spec and the key the value came
 * from ("m.json: search.gpus: unknown GPU 'T5'"). */
void cf_spec_filter_error_prefix(const cf_spec *spec, cf_filter_field failed);
/* training.current.gpu, when the spec gives it, names a GPU of the table
 * (in any tool's spelling; on offer or not: it is today's setup); else
 * CF_ERR_INVALID naming the spec and the key, with the near names. */
cf_status cf_spec_check_current_gpu(const cf_spec *spec, const cf_catalog *catalog);
/* The offers of `catalog` that pass the spec's search filter (clouds,
 * regions, GPUs) under `spot`, regions that need an access request only
 * with `include_restricted`, in their regions' tie order
 * (cf_region_preference: `prefer_regions` first); *rows is malloc'd (also
 * on failure: free it), `fs` holds the filter used. A value the catalog
 * does not know is an error naming the spec and its key. */
cf_status cf_spec_offers(const cf_spec *spec, const cf_catalog *catalog, cf_spot_policy spot, int include_restricted,
                         const char *const *prefer_regions, size_t n_prefer_regions, cf_catalog_filter_storage *fs,
                         const cf_vm ***rows, size_t *n_rows);
/* The tie-break order of regions: `first` (e.g. --prefer-region's), then
 * `regions` (the search's, in their order). Returns the count written. */
size_t cf_region_preference(const char *const *first, size_t n_first, const char *const *regions, size_t n_regions,
                            const char **out, size_t cap);

#endif
