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
#include "cloudfit/render/text_table.h"

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
    int document_unreadable;      /* the stored document is not valid JSON (a hand edit): JSON shows null */
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

/* The list written a row at a time, for a history too long to hold
 * (usecase/history.h cf_history_list_stream): init; for the table only,
 * every row measured first (its widths decide what fits); begin; each row
 * in order; end. The bytes are those of cf_history_list_table and
 * cf_history_list_csv for the same rows, and for JSON those --format json
 * prints for cf_history_list_json's document (cJSON_Print and a newline). */
typedef enum { CF_HISTORY_FORMAT_TABLE, CF_HISTORY_FORMAT_JSON, CF_HISTORY_FORMAT_CSV } cf_history_format;
#define CF_HISTORY_LIST_COLUMNS 11
typedef struct {
    cf_history_format format;
    int width;                    /* fit the table to this many columns; 0 = no limit */
    size_t n;                     /* rows written */
    cf_text_table table;
    cf_text_table_stream stream;
    cf_buf left_out;              /* the table's columns left out to fit */
    char cell[CF_HISTORY_LIST_COLUMNS][96], created_short[96]; /* the current row's cells */
    const char *cell_ptr[CF_HISTORY_LIST_COLUMNS], *short_ptr[CF_HISTORY_LIST_COLUMNS];
} cf_history_list_writer;
cf_status cf_history_list_writer_init(cf_history_list_writer *w, cf_history_format format, int width);
void cf_history_list_measure(cf_history_list_writer *w, const cf_history_row *row);
void cf_history_list_begin(cf_history_list_writer *w, cf_buf *out);
void cf_history_list_row(cf_history_list_writer *w, const cf_history_row *row, cf_buf *out);
void cf_history_list_end(cf_history_list_writer *w, cf_buf *out);
void cf_history_list_writer_free(cf_history_list_writer *w);

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
