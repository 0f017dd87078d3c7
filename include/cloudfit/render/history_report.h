/* The results of `cloudfit history` (list, show, diff, prune) and
 * `cloudfit record`, read from the database by cli/history/cmd_history.c and
 * cmd_record.c and rendered here as a table, JSON or CSV (docs/history.md). */
#ifndef CLOUDFIT_RENDER_HISTORY_REPORT_H
#define CLOUDFIT_RENDER_HISTORY_REPORT_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/db/history.h"
#include "cloudfit/db/history_copy.h"
#include "cloudfit/db/history_diff.h"

typedef struct {
    const cf_history_row *rows;   /* newest first */
    size_t n;
    int width;                    /* fit the table to this many columns; 0 = no limit */
} cf_history_list_report;

typedef struct {
    const cf_history_row *row;    /* with its document (result_json) */
    const cf_history_config *alternatives;
    size_t n_alternatives;
    const cf_history_gate *gates;
    size_t n_gates;
    const cf_history_measurement *measurements; /* recorded with `cloudfit record` */
    size_t n_measurements;
} cf_history_show_report;

typedef struct {
    const cf_history_row *from, *to;
    cf_history_diff diff;
} cf_history_diff_report;

typedef struct {
    long long n_deleted;          /* with dry_run: the rows it would delete */
    const char *before;           /* the cut-off as shown */
    const char *db_path;
    int dry_run;                  /* nothing was deleted */
} cf_history_prune_report;

typedef struct {
    const cf_history_measurement *measurement;
    long long measurement_id;
    const cf_history_row *row;    /* the recommendation it measured */
} cf_record_report;

void cf_history_list_table(const cf_history_list_report *r, cf_buf *out);
void cf_history_list_csv(const cf_history_list_report *r, cf_buf *out);
cJSON *cf_history_list_json(const cf_history_list_report *r);

void cf_history_show_table(const cf_history_show_report *r, cf_buf *out);
void cf_history_show_csv(const cf_history_show_report *r, cf_buf *out);
cJSON *cf_history_show_json(const cf_history_show_report *r);

void cf_history_diff_table(const cf_history_diff_report *r, cf_buf *out);
void cf_history_diff_csv(const cf_history_diff_report *r, cf_buf *out);
cJSON *cf_history_diff_json(const cf_history_diff_report *r);

void cf_history_prune_text(const cf_history_prune_report *r, cf_buf *out);
void cf_record_text(const cf_record_report *r, cf_buf *out);
/* `history migrate`: what was copied from `from` to `to` (as shown). */
void cf_history_migrate_text(const cf_history_copy_counts *n, const char *from, const char *to, cf_buf *out);

#endif
