/* `validate` (measured step times) as a library call: a request in, a
 * result out. cf_validate_run owns the pipeline from the measurement file's
 * text to the report render/ shows: the rows parsed, the catalog, the
 * groups (model × GPU), the fits and their scores, the per-row predictions
 * when asked. What stays with the caller: options, reading the file,
 * the progress display, writing the per-row CSV and the rendered bytes. */
#ifndef CLOUDFIT_USECASE_VALIDATE_H
#define CLOUDFIT_USECASE_VALIDATE_H
#include <stddef.h>

#include "cloudfit/advisor/validate.h"
#include "cloudfit/common/progress.h"
#include "cloudfit/pricing.h"
#include "cloudfit/profiler/measurements.h"
#include "cloudfit/render/validate_report.h"
#include "cloudfit/usecase/evidence.h"

/* Parameter counts from "NAME=COUNT" items (--params): *out is allocated
 * (free with cf_model_params_free); CF_ERR_USAGE "expects NAME=COUNT, got
 * '...'" or "expects a positive parameter count, got '...'". */
cf_status cf_model_params_parse(const char *const *items, size_t n, cf_model_param **out, size_t *n_out);
void cf_model_params_free(cf_model_param *params, size_t n);

typedef struct {
    const char *path;                   /* how the file is named in messages and the report */
    const char *text;                   /* the measurement CSV's bytes (the caller read them) */
    size_t len;
    const cf_model_param *params;       /* parameter counts by model name */
    size_t n_params;
    double inter_node_gbps;             /* 0 = the offers' */
    int train_max_nodes;                /* rows with at most this many nodes fit the model; 0 = 1 */
    int with_2node_probe;
    int light_profile;
    int fit_all_rows;
    const char *const *train_gpus;      /* fit these GPU types, carry over to the others; none = each its own */
    size_t n_train_gpus;
    const cf_perf_constants *constants; /* NULL = the shipped constants */
    int with_per_row;                   /* also each row's prediction (result.per_row) */
    cf_progress_count_fn progress;      /* rows as they are read; NULL = none */
    void *progress_ctx;
    cf_note_fn note;                    /* a group skipped (warning + hint), fitting begins (progress) */
    void *note_ctx;
} cf_validate_request;

/* Filled in place: `report` points into the struct, so do not copy it. */
typedef struct {
    cf_measurement_set set;
    cf_catalog catalog;
    cf_validate_group *groups;
    size_t n_groups;
    cf_validate_row_prediction *per_row; /* set.n_rows of them when request.with_per_row */
    const char **train_gpus;             /* request.train_gpus, each as the file spells the GPU it names */
    cf_validate_context context;
    cf_validate_options options;
    cf_validate_steps_report report;     /* what render/ shows */
} cf_validate_result;

/* How well the model predicts req's measurements. CF_OK and `out` filled,
 * or a status with the last error set: the file does not parse (the message
 * names it and the line), no group could be predicted (saying why).
 * cf_validate_result_free `out` either way. */
cf_status cf_validate_run(const cf_validate_request *req, cf_validate_result *out);
void cf_validate_result_free(cf_validate_result *out);

/* `validate --gns`: the gradient-noise traces (`traces_path`) and their
 * models' sizes (`models_path`) read, the noise scale at each trace's
 * batches predicted from its first `train_epochs` (0 = the default) and
 * scored. CF_OK and `out` filled, or a status with the last error set (a
 * file that does not parse, named with its line). */
cf_status cf_validate_gns_run(const char *traces_path, const char *models_path, double train_epochs,
                              cf_validate_gns_report *out);
void cf_validate_gns_report_free(cf_validate_gns_report *out);

/* `validate --crossgpu`: the published cross-GPU throughput table read,
 * its GPU names resolved against the embedded GPU table (rows naming a GPU
 * that is not there are left out and said as a CF_NOTE_INFO through
 * `note`, which may be NULL), and every carry-over between GPU types scored
 * with its interval's coverage (docs/model.md). CF_OK and `out` filled, or
 * a status with the last error set; cf_validate_crossgpu_result_free `out`
 * either way (the report's GPU names point into its catalog). */
typedef struct {
    cf_catalog catalog;                 /* the GPU table the report's names point into */
    cf_validate_crossgpu_report report; /* what render/ shows */
} cf_validate_crossgpu_result;
cf_status cf_validate_crossgpu_run(const char *path, cf_note_fn on_note, void *note_ctx,
                                   cf_validate_crossgpu_result *out);
void cf_validate_crossgpu_result_free(cf_validate_crossgpu_result *out);

#endif
