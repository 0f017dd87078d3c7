/* What changed between two stored recommendations (db/history_diff.c),
 * field by field: the chosen configuration, its predicted time and cost,
 * and what it rests on (spec, objective, catalog, tool version). Used by
 * `history diff` and by the markdown comparison with a baseline. */
#ifndef CLOUDFIT_DB_HISTORY_DIFF_H
#define CLOUDFIT_DB_HISTORY_DIFF_H
#include <stddef.h>

#include "cloudfit/db/history.h"

#define CF_DIFF_FIELDS 16           /* room for cf_config_diff's entries */
#define CF_HISTORY_DIFF_FIELDS 24   /* room for cf_history_compare's entries */

typedef struct {
    const char *key;                   /* e.g. "instance_type", "total_usd" */
    const char *group;                 /* configuration | time | prices | cost | catalog | inputs */
    char before[96], after[96];        /* display text */
    double before_value, after_value;  /* NaN for text fields */
    int changed;                       /* numbers: changed at the precision shown */
} cf_diff_entry;

/* Fills out[0..CF_DIFF_FIELDS) with the configuration, time, price and
 * cost fields, and returns how many entries it wrote. */
size_t cf_config_diff(const cf_history_config *before, const cf_history_config *after, cf_diff_entry *out);
/* Relative change in percent (NaN when not numeric or before is 0). */
double cf_diff_pct(const cf_diff_entry *e);

/* Two whole recommendations compared: cf_config_diff of the chosen
 * configurations, then spec_hash, objective, catalog_name, catalog_date
 * and tool_version. */
typedef struct {
    cf_diff_entry entries[CF_HISTORY_DIFF_FIELDS];
    size_t n;            /* entries filled */
    size_t n_changed;
} cf_history_diff;

void cf_history_compare(const cf_history_row *before, const cf_history_row *after, cf_history_diff *out);

#endif
