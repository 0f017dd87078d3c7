/* `history` and `record` as library calls (docs/history.md): a request in,
 * a result out, through the database handle the caller opened.
 * cf_history_query answers list (the filters, any of several clouds and
 * GPUs), show (a recommendation with its alternatives and gates) and diff
 * (two compared); cf_history_prune_run deletes (cf_history_prune_dry_run
 * lists) what is older than a cut-off; cf_history_record_run stores what a real run of a
 * recommendation measured. What stays with the caller: options, opening
 * the database, holding it while the result is delivered (a change is
 * committed only once its report was written) and the rendered bytes. */
#ifndef CLOUDFIT_USECASE_HISTORY_H
#define CLOUDFIT_USECASE_HISTORY_H
#include <stddef.h>

#include "cloudfit/db/history.h"
#include "cloudfit/render/history_report.h"
#include "cloudfit/usecase/evidence.h"

typedef enum { CF_HISTORY_LIST, CF_HISTORY_SHOW, CF_HISTORY_DIFF } cf_history_query_kind;

typedef struct {
    cf_db *db;
    cf_history_query_kind kind;
    /* list: spec name and hash, since, until, branch, limit (0 = all);
     * its cloud and gpu are set from the lists below */
    cf_history_filter filter;
    const char *const *clouds; /* any of these; none = any cloud */
    size_t n_clouds;
    const char *const *gpus;   /* any of these; none = any GPU */
    size_t n_gpus;
    long long ids[2];          /* show: ids[0]; diff: from ids[0] to ids[1] */
} cf_history_query_request;

/* Filled in place: the reports point into the struct, so do not copy it. */
typedef struct {
    cf_history_row *rows;      /* list: newest first */
    size_t n_rows;
    cf_history_row shown[2];   /* show: [0] with its document; diff: both */
    cf_history_config *alternatives;
    cf_history_gate *gates;
    cf_history_measurement *measurements;
    cf_history_list_report list; /* width 0: the caller sets it */
    cf_history_show_report show;
    cf_history_diff_report diff;
} cf_history_query_result;

/* Checks a list request's filters before any query: a filter given as ""
 * (a script's unset variable: --spec-hash "$HASH") is CF_ERR_USAGE naming
 * the option (as a prefix "" matched every spec's rows, a name "" none),
 * and so is a spec hash prefix of anything but 1 to 64 hex digits. The
 * prefix is lowered into `hash` (hashes are lowercase hex; a prefix is
 * matched in any case, as git matches object names) and the filter then
 * points there. With both since and until, since must come before until
 * (CF_ERR_USAGE naming both: a range with no time in it listed nothing). */
cf_status cf_history_list_check(cf_history_query_request *req, char hash[65]);
/* CF_OK and `out` filled for req->kind, or a status with the last error
 * set (an id the history does not hold says so). cf_history_query_free
 * `out` either way. */
cf_status cf_history_query(const cf_history_query_request *req, cf_history_query_result *out);
void cf_history_query_free(cf_history_query_result *out);

/* `history list` (req->kind CF_HISTORY_LIST) rendered in `format` as the
 * rows are read, never held: the bytes go to `sink` in chunks of about
 * 64 KiB, so memory does not grow with the number of rows (a CI job
 * listing a long history). The table reads the rows twice on one snapshot
 * (the first pass measures the columns). No rows: the table writes
 * nothing (the caller says so), JSON "[]", CSV its header. *n_rows: the
 * rows listed. Nothing reaches `sink` before the query has returned its
 * first rows (a query that fails at once writes nothing); a read error
 * later ends the output where it was. CF_OK, or a status with the last
 * error set (the sink's own, when it failed). */
typedef cf_status (*cf_history_sink)(void *ctx, const char *text, size_t len);
cf_status cf_history_list_stream(const cf_history_query_request *req, cf_history_format format, int width,
                                 cf_history_sink sink, void *sink_ctx, size_t *n_rows);

/* Deletes the recommendations created before `before` (stored form) in
 * `db`, inside the caller's hold. out->report.n_deleted counts them; its
 * before and db_path are the caller's to set. */
typedef struct {
    cf_history_prune_report report;
} cf_history_prune_result;
cf_status cf_history_prune_run(cf_db *db, const char *before, cf_history_prune_result *out);

/* prune --dry-run: what cf_history_prune_run would delete, written to
 * `sink` as it is read, never held (a long history): the table of the
 * recommendations created before `before`, newest first, as
 * cf_history_list_stream writes it for `width` (nothing when there is
 * none), then cf_history_prune_text of *report (n_deleted and dry_run set
 * here; before and db_path the caller's). Reads only; a read error part way
 * ends the output where it was. */
cf_status cf_history_prune_dry_run(cf_db *db, const char *before, int width, cf_history_sink sink, void *sink_ctx,
                                   cf_history_prune_report *report);

typedef struct {
    cf_db *db;
    long long recommendation_id;
    double step_time_s;   /* <= 0: not measured */
    double total_hours;   /* <= 0: not measured */
    double total_usd;     /* <= 0: not measured */
    const char *note;     /* NULL = none */
} cf_history_record_request;

/* The largest whole-run wall time and cost a record takes: the ranges of the
 * spec's search.deadline_hours and search.budget_usd. Hours and cost are not
 * fed back, but a record is kept for good (no command deletes one), and a
 * value past these is another unit or a typo (1e308 dollars was stored and
 * printed with 309 digits). Beyond them: CF_ERR_USAGE, nothing stored. */
#define CF_RECORD_MAX_HOURS 1e6
#define CF_RECORD_MAX_USD 1e12

typedef struct {
    cf_history_measurement measurement;
    cf_history_row row;   /* the recommendation it measured (no document) */
    cf_record_report report;
} cf_history_record_result;

/* Checks a record without writing: that the history holds
 * req->recommendation_id and that the values are within the bounds above
 * and CF_RECORD_SCALE_MAX of its prediction (CF_ERR_USAGE otherwise). Reads
 * only, so it runs on a read-only handle: a refused record leaves the
 * database as it was (it was refused after the write open, which had made
 * the file private or upgraded it). Fills out as cf_history_record_run. */
cf_status cf_history_record_check(const cf_history_record_request *req, cf_history_record_result *out);

/* Stores what a real run of req->recommendation_id measured (now, unknown
 * values NaN), after cf_history_record_check. The database is left held
 * (cf_db_hold): the caller releases it with whether the report was
 * delivered. */
cf_status cf_history_record_run(const cf_history_record_request *req, cf_history_record_result *out);

/* Which `history` subcommand takes which of history's options: one table
 * (usecase/history.c), read by the check below and by the completion
 * scripts. The list filters (--model, --spec-hash, --since, --until,
 * --branch, --cloud, --gpu, --limit) are list's, --older-than and
 * --dry-run prune's, --to migrate's. Returns the subcommands that take
 * option `name` (a long name without dashes), space-separated, or NULL
 * when every subcommand takes it (--db, --format, ...). */
const char *cf_history_option_subcommands(const char *name);

/* The options given on the command line (`given`: long names without
 * dashes) checked against subcommand `sub`. prune deletes by age alone,
 * so a list filter given to it is CF_ERR_USAGE (history prune --model x
 * --older-than 30d deleted every model's old rows); any other option that
 * `sub` does not take is noted as ignored through `note`. */
cf_status cf_history_check_options(const char *sub, const char *const *given, size_t n_given, cf_note_fn note,
                                   void *note_ctx);

#endif
