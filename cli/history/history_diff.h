/* The stored form of an advisor configuration (the advisor and db modules
 * do not include each other, so the CLI converts). The field-by-field diff
 * lives in the db module (cloudfit/db/history_diff.h, included here for
 * the recommend renderers). */
#ifndef CLOUDFIT_CLI_HISTORY_DIFF_H
#define CLOUDFIT_CLI_HISTORY_DIFF_H
#include "cloudfit/advisor.h"
#include "cloudfit/db/history.h"
#include "cloudfit/db/history_diff.h"

void cf_history_config_from(const cf_config *c, int rank, cf_history_config *out);

#endif
