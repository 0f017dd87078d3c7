/* Everything a renderer needs about one recommendation: compute once,
 * render many (table, JSON). */
#ifndef CLOUDFIT_CLI_REPORT_H
#define CLOUDFIT_CLI_REPORT_H
#include <cjson/cJSON.h>

#include "cloudfit/buf.h"
#include "inputs.h"

typedef struct {
    const cf_spec *spec;
    const cf_catalog *catalog;
    const cf_inputs *inputs;
    const cf_advice *advice;
    const char *created_at;      /* ISO 8601 UTC */
    double catalog_age_days;
    size_t n_offers;             /* catalog rows that passed the filters */
} cf_report;

/* The versioned recommendation document (DESIGN.md §4.4); caller frees. */
cJSON *cf_report_json(const cf_report *report);
cJSON *cf_config_json(const cf_config *cfg);
/* The human table and explanation. */
void cf_report_table(const cf_report *report, cf_buf *out, int color);

#endif
