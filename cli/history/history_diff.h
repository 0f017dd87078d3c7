/* What changed between two recommendations' chosen configurations, field
 * by field (used by `history diff` and the markdown renderer). */
#ifndef CLOUDFIT_CLI_HISTORY_DIFF_H
#define CLOUDFIT_CLI_HISTORY_DIFF_H
#include "cloudfit/advisor.h"
#include "cloudfit/db/history.h"

#define CF_DIFF_FIELDS 16

typedef struct {
    const char *key;             /* e.g. "instance_type", "total_usd" */
    const char *group;           /* configuration | time | cost | prices */
    char before[96], after[96];  /* display text */
    double before_value, after_value; /* NaN for text fields */
    int changed;
} cf_diff_entry;

/* The stored form of an advisor configuration. */
void cf_history_config_from(const cf_config *c, int rank, cf_history_config *out);
/* Fills out[0..CF_DIFF_FIELDS) and returns how many entries it wrote. */
size_t cf_config_diff(const cf_history_config *before, const cf_history_config *after, cf_diff_entry *out);
/* Relative change in percent (NaN when not numeric or before is 0). */
double cf_diff_pct(const cf_diff_entry *e);

#endif
