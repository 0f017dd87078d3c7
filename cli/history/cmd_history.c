/* `cloudfit history`: list (with filters), show ID, diff ID1 ID2, prune.
 * Reads the database (db/history.h), compares through the library
 * (db/history_diff.h) and renders with render/history_report.c as a
 * table (default), JSON or CSV (docs/history.md). */
#include <limits.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "commands.h"
#include "exit_codes.h"
#include "cloudfit/render/history_report.h"
#include "io/db_open.h"
#include "log.h"
#include "term/output.h"
#include "cloudfit/common/number.h"

#define DEFAULT_LIMIT 20

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV } out_format;

static int parse_format(const cf_cli_options *o, out_format *f)
{
    *f = FMT_TABLE;
    if (!o->format || strcmp(o->format, "table") == 0)
        return 0;
    if (strcmp(o->format, "json") == 0)
        *f = FMT_JSON;
    else if (strcmp(o->format, "csv") == 0)
        *f = FMT_CSV;
    else {
        cf_log_error("option '--format' does not accept '%s' for history", o->format);
        cf_log_hint("use one of: table, json, csv");
        return CF_EXIT_USAGE;
    }
    return 0;
}

static int parse_id(const char *text, long long *id)
{
    long v = 0;
    if (cf_number_long(text, 1, LONG_MAX, &v) != CF_NUMBER_OK) {
        cf_log_error("expected a recommendation id (a positive integer), got '%s'", text);
        cf_log_hint("see 'cloudfit history' for the stored ids");
        return CF_EXIT_USAGE;
    }
    *id = v;
    return 0;
}

/* --since / --until: a checked date or UTC time, in the stored form. */
static int parse_time_option(const char *option, const char *text, char *out, size_t n)
{
    if (!text)
        return 0;
    if (cf_iso8601_normalize(text, out, n) == CF_OK)
        return 0;
    cf_log_error("option '%s': %s", option, cf_error_message());
    cf_log_hint("e.g. '%s 2026-11-01' or '%s 2026-11-18T12:00:00Z' (UTC)", option, option);
    return CF_EXIT_USAGE;
}

/* Writes the rendered result (JSON document or text) and frees both. */
static int emit(const cf_cli_options *o, cJSON *doc, cf_buf *text)
{
    int rc = cf_cli_emit(o, doc, text);
    cJSON_Delete(doc);
    cf_buf_free(text);
    return rc;
}

/* Text whatever --format says (prune has no other form); frees it. */
static int emit_text(const cf_cli_options *o, cf_buf *text)
{
    int rc;
    if (cf_buf_failed(text)) {
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
        rc = cf_report_error();
    } else {
        rc = cf_cli_write_result(o, text->data ? text->data : "", text->len);
    }
    cf_buf_free(text);
    return rc;
}

static int list(const cf_cli_options *o, out_format fmt)
{
    if (o->clouds.n > 1 || o->gpus.n > 1) {
        cf_log_error("history takes one --cloud and one --gpu filter");
        return CF_EXIT_USAGE;
    }
    char since[32], until[32];
    int rc;
    if ((rc = parse_time_option("--since", o->since, since, sizeof since)) ||
        (rc = parse_time_option("--until", o->until, until, sizeof until)))
        return rc;
    cf_history_filter f = {.spec_name = o->model, .spec_hash = o->spec_hash, .since = o->since ? since : NULL,
                           .until = o->until ? until : NULL, .cloud = o->clouds.n ? o->clouds.items[0] : NULL,
                           .gpu = o->gpus.n ? o->gpus.items[0] : NULL, .branch = o->branch,
                           .limit = o->limit > 0 ? o->limit : DEFAULT_LIMIT};
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open_readonly(o, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_history_list_report r = {0};
    cf_history_row *rows = NULL;
    cf_status st = cf_history_list(db, &f, &rows, &r.n);
    cf_db_close(db);
    if (st != CF_OK)
        return cf_report_error();
    r.rows = rows;
    cf_buf text = CF_BUF_INIT;
    if (fmt == FMT_CSV)
        cf_history_list_csv(&r, &text);
    else if (fmt == FMT_TABLE && r.n == 0)
        cf_log_info("no recommendations match in %s", path);
    else if (fmt == FMT_TABLE)
        cf_history_list_table(&r, &text);
    rc = emit(o, fmt == FMT_JSON ? cf_history_list_json(&r) : NULL, &text);
    cf_history_rows_free(rows, r.n);
    return rc;
}

static int show(const cf_cli_options *o, out_format fmt, const char *id_text)
{
    long long id;
    int rc = parse_id(id_text, &id);
    if (rc)
        return rc;
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open_readonly(o, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_history_row row;
    cf_history_config *alts = NULL;
    cf_history_gate *gates = NULL;
    cf_history_show_report r = {.row = &row};
    memset(&row, 0, sizeof row);
    cf_status st = cf_history_get(db, id, &row);
    if (st == CF_OK)
        st = cf_history_alternatives(db, id, &alts, &r.n_alternatives);
    if (st == CF_OK)
        st = cf_history_gates(db, id, &gates, &r.n_gates);
    cf_db_close(db);
    r.alternatives = alts;
    r.gates = gates;
    if (st != CF_OK) {
        rc = cf_report_error();
    } else {
        cf_buf text = CF_BUF_INIT;
        if (fmt == FMT_CSV)
            cf_history_show_csv(&r, &text);
        else if (fmt == FMT_TABLE)
            cf_history_show_table(&r, &text);
        rc = emit(o, fmt == FMT_JSON ? cf_history_show_json(&r) : NULL, &text);
    }
    free(row.result_json);
    free(alts);
    free(gates);
    return rc;
}

static int diff(const cf_cli_options *o, out_format fmt, const char *a_text, const char *b_text)
{
    long long ids[2];
    int rc;
    if ((rc = parse_id(a_text, &ids[0])) || (rc = parse_id(b_text, &ids[1])))
        return rc;
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open_readonly(o, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_history_row rows[2];
    memset(rows, 0, sizeof rows);
    cf_status st = cf_history_get(db, ids[0], &rows[0]);
    if (st == CF_OK)
        st = cf_history_get(db, ids[1], &rows[1]);
    cf_db_close(db);
    free(rows[0].result_json);
    free(rows[1].result_json);
    if (st != CF_OK)
        return cf_report_error();
    cf_history_diff_report r = {.from = &rows[0], .to = &rows[1]};
    cf_history_compare(&rows[0], &rows[1], &r.diff);
    cf_buf text = CF_BUF_INIT;
    if (fmt == FMT_CSV)
        cf_history_diff_csv(&r, &text);
    else if (fmt == FMT_TABLE)
        cf_history_diff_table(&r, &text);
    return emit(o, fmt == FMT_JSON ? cf_history_diff_json(&r) : NULL, &text);
}

/* --older-than: an age ("30d") before now, or a date or UTC time (shown
 * as given). */
static int cutoff(const char *age, char *out, size_t n, const char **shown)
{
    double age_s;
    *shown = out;
    if (cf_duration_parse_s(age, &age_s) == CF_OK) {
        cf_iso8601_ago(age_s, out, n);
        return 0;
    }
    if (cf_iso8601_normalize(age, out, n) == CF_OK) {
        *shown = age;
        return 0;
    }
    if (isdigit((unsigned char)age[0]) && strchr(age, '-')) /* meant as a date: say what is wrong with it */
        cf_log_error("option '--older-than': %s", cf_error_message());
    else
        cf_log_error("option '--older-than' expects an age (30d, 12h, 90m, 2w) or a date (2026-01-31), got '%s'",
                     age);
    return CF_EXIT_USAGE;
}

static int prune(const cf_cli_options *o)
{
    if (!o->older_than) {
        cf_log_error("history prune needs --older-than AGE");
        cf_log_hint("e.g. 'cloudfit history prune --older-than 90d'");
        return CF_EXIT_USAGE;
    }
    char before[32];
    cf_history_prune_report r = {0};
    int rc = cutoff(o->older_than, before, sizeof before, &r.before);
    if (rc)
        return rc;
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 0, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    r.db_path = path;
    cf_status st = cf_history_prune(db, before, &r.n_deleted);
    cf_db_close(db);
    if (st != CF_OK)
        return cf_report_error();
    cf_buf text = CF_BUF_INIT;
    cf_history_prune_text(&r, &text);
    return emit_text(o, &text);
}

int cmd_history(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    out_format fmt;
    int rc = parse_format(o, &fmt);
    if (rc)
        return rc;
    const char *sub = n_positional ? argv[1] : "list";
    int n_args = n_positional ? n_positional - 1 : 0;
    if (strcmp(sub, "list") == 0 && n_args == 0)
        return list(o, fmt);
    if (strcmp(sub, "show") == 0 && n_args == 1)
        return show(o, fmt, argv[2]);
    if (strcmp(sub, "diff") == 0 && n_args == 2)
        return diff(o, fmt, argv[2], argv[3]);
    if (strcmp(sub, "prune") == 0 && n_args == 0)
        return prune(o);
    if (!strcmp(sub, "list") || !strcmp(sub, "show") || !strcmp(sub, "diff") || !strcmp(sub, "prune"))
        cf_log_error("history %s: wrong number of arguments (%d)", sub, n_args);
    else
        cf_log_error("'%s' is not a history command", sub);
    cf_log_hint("usage: cloudfit history [list] | show ID | diff ID1 ID2 | prune --older-than AGE");
    return CF_EXIT_USAGE;
}
