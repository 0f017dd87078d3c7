/* The result of `cloudfit validate` in each of its three modes, computed
 * once by cli/validate/cmd_validate.c and rendered as a table or JSON here. */
#ifndef CLOUDFIT_RENDER_VALIDATE_REPORT_H
#define CLOUDFIT_RENDER_VALIDATE_REPORT_H
#include <cjson/cJSON.h>

#include "cloudfit/advisor/validate.h"
#include "cloudfit/advisor/validate_crossgpu.h"
#include "cloudfit/common/buf.h"

typedef struct {
    const char *path;
    size_t n_rows;
    const cf_validate_options *options;
    const cf_validate_context *context;
    const cf_validate_group *groups;
    size_t n_groups;
    cf_ape_stats overall;
} cf_validate_steps_report;

typedef struct {
    double train_epochs;
    const cf_gns_prediction *predictions;
    size_t n;
    cf_ape_stats overall;
    /* trace rows of models the models file does not list, left out, and the first of them */
    size_t n_unlisted_rows;
    char first_unlisted[64], traces_name[256], models_name[256];
    long first_unlisted_line;
} cf_validate_gns_report;

typedef struct {
    cf_carry_validation v;
    size_t rows_left_out; /* rows naming a GPU the GPU table does not have */
} cf_validate_crossgpu_report;

void cf_validate_steps_table(const cf_validate_steps_report *r, cf_buf *out);
cJSON *cf_validate_steps_json(const cf_validate_steps_report *r);
/* Every scored row of the measurements with its prediction (--rows):
 * the measurement's identifying columns, measured and predicted step
 * time, the 80 % interval, its log sd and the inter-node share. */
void cf_validate_rows_csv(const cf_measurement *rows, size_t n_rows, const cf_validate_row_prediction *per_row,
                          cf_buf *out);
void cf_validate_gns_table(const cf_validate_gns_report *r, cf_buf *out);
cJSON *cf_validate_gns_json(const cf_validate_gns_report *r);
void cf_validate_crossgpu_table(const cf_validate_crossgpu_report *r, cf_buf *out);
cJSON *cf_validate_crossgpu_json(const cf_validate_crossgpu_report *r);

#endif
