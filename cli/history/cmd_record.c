/* `cloudfit record ID [--step-time-s S] [--total-hours H] [--total-usd USD] [--note TEXT]`:
 * stores what a real run of a stored recommendation measured. Later
 * `recommend` runs for the same spec use the recorded step times for
 * that GPU type in place of the estimate (advisor/model/inputs.c) and say so.
 * Rendered by render/history_report.c. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "exit_codes.h"
#include "cloudfit/db.h"
#include "cloudfit/render/history_report.h"
#include "cloudfit/usecase/history.h"
#include "io/db_open.h"
#include "log.h"
#include "term/output.h"
#include "cloudfit/common/number.h"

int cmd_record(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    if (n_positional != 1) {
        cf_log_error(n_positional ? "record takes one recommendation id, got %d arguments"
                                  : "missing the recommendation id%.0d",
                     n_positional);
        cf_log_hint("usage: cloudfit record ID [--step-time-s S] [--total-hours H] [--total-usd USD] [--note TEXT]");
        return CF_EXIT_USAGE;
    }
    long id = 0;
    if (cf_number_long(argv[1], 1, LONG_MAX, &id) != CF_NUMBER_OK) {
        cf_log_error("expected a recommendation id (a positive integer), got '%s'", argv[1]);
        cf_log_hint("see 'cloudfit history' for the stored ids");
        return CF_EXIT_USAGE;
    }
    if (o->step_time_s <= 0 && o->total_hours <= 0 && o->total_usd <= 0) {
        cf_log_error("nothing to record: give --step-time-s, --total-hours or --total-usd");
        cf_log_hint("the step time is what later recommendations use; hours and cost are kept for the history");
        return CF_EXIT_USAGE;
    }
    if (o->note && strlen(o->note) >= sizeof ((cf_history_measurement *)0)->note) {
        cf_log_error("--note is %zu bytes; a note holds at most %zu", strlen(o->note),
                     sizeof ((cf_history_measurement *)0)->note - 1);
        cf_log_hint("shorten it (a note is stored as given, never cut)");
        return CF_EXIT_USAGE;
    }
    char path[1024];
    cf_db *db = NULL;
    cf_history_record_request req = {.recommendation_id = id, .step_time_s = o->step_time_s,
                                     .total_hours = o->total_hours, .total_usd = o->total_usd, .note = o->note};
    cf_history_record_result res;
    /* The id and the values first, on a read-only handle: a record that
     * fails writes nothing, not even the schema upgrade or the permission
     * repair a write open makes (a history upgraded by a mistyped id is one
     * an older cloudfit can no longer read). A history of an older schema
     * cannot be read before that upgrade: then the write open's own
     * checks decide. */
    if (cf_cli_db_open_readonly(o, &db, path, sizeof path) == CF_OK) {
        req.db = db;
        cf_status checked = cf_history_record_check(&req, &res);
        cf_db_close(db);
        db = NULL;
        if (checked != CF_OK)
            return cf_report_error();
    } else if (cf_db_open_failed_schema_version() > 0) {
        cf_error_clear();
    } else if (cf_db_open_failed_schema_version() == 0) {
        cf_error_clear();
        cf_error_set(CF_ERR_INVALID, "no recommendation %ld in '%s': it holds no cloudfit history", id, path);
        cf_error_hint("pass the history's own path with --db; 'cloudfit history --db PATH' lists its ids");
        return cf_report_error();
    } else {
        return cf_report_error();
    }
    if (cf_cli_db_open(o, 0, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    req.db = db;
    /* The measurement is committed only once the result was written (term/output.h). */
    cf_status st = cf_history_record_run(&req, &res);
    int rc = st == CF_OK ? 0 : cf_report_error();
    cf_buf text = CF_BUF_INIT;
    if (rc == 0)
        cf_record_text(&res.report, &text); /* record has no --format: text */
    rc = cf_cli_deliver_held(o, db, rc, &text);
    cf_db_close(db);
    return rc;
}
