/* `cloudfit history`: list (with filters), show ID, diff ID1 ID2, prune,
 * migrate --to (a copy into another database, e.g. a team's PostgreSQL).
 * Reads the database (db/history.h), compares through the library
 * (db/history_diff.h) and renders with render/history_report.c as a
 * table (default), JSON or CSV (docs/history.md). */
#include <limits.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/db/history_copy.h"
#include "commands.h"
#include "exit_codes.h"
#include "cloudfit/render/history_report.h"
#include "cloudfit/usecase/history.h"
#include "io/db_open.h"
#include "io/evidence.h"
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

/* A point in time as --since, --until and --older-than take it: an age
 * before now (30d, 12h, 90m, 2w) or a date or UTC time, in the stored form;
 * *as_given says whether `text` was a date (shown as the user wrote it). */
static int parse_when(const char *option, const char *text, char *out, size_t n, int *as_given)
{
    if (cf_when_parse(text, out, n, as_given) == CF_OK)
        return 0;
    cf_log_error("option '%s': %s", option, cf_error_message());
    cf_log_hint("an age before now (30d, 12h, 90m, 2w) or a UTC date: e.g. '%s 7d' or '%s 2026-11-18T12:00:00Z'",
                option, option);
    return CF_EXIT_USAGE;
}

/* --since / --until: unset, or checked and in the stored form. */
static int parse_time_option(const char *option, const char *text, char *out, size_t n)
{
    int as_given;
    return text ? parse_when(option, text, out, n, &as_given) : 0;
}

/* Writes the rendered result (JSON document or text) and frees both. */
static int emit(const cf_cli_options *o, cJSON *doc, cf_buf *text)
{
    if (cf_cli_format_is(o, "table"))
        cf_cli_fit_text(cf_cli_output_width(o), text);
    int rc = cf_cli_emit(o, doc, text);
    cJSON_Delete(doc);
    cf_buf_free(text);
    return rc;
}

/* Runs the query on the database (read only) and renders its result. */
static int query(const cf_cli_options *o, out_format fmt, cf_history_query_request *req)
{
    char path[1024];
    if (cf_cli_db_open_readonly(o, &req->db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_history_query_result res;
    cf_status st = cf_history_query(req, &res);
    cf_db_close(req->db);
    int rc = st == CF_OK ? 0 : cf_report_error();
    cf_buf text = CF_BUF_INIT;
    cJSON *doc = NULL;
    if (rc == 0 && req->kind == CF_HISTORY_SHOW) {
        if (fmt == FMT_CSV)
            cf_history_show_csv(&res.show, &text);
        else if (fmt == FMT_TABLE)
            cf_history_show_table(&res.show, &text);
        doc = fmt == FMT_JSON ? cf_history_show_json(&res.show) : NULL;
    } else if (rc == 0) {
        if (fmt == FMT_CSV)
            cf_history_diff_csv(&res.diff, &text);
        else if (fmt == FMT_TABLE)
            cf_history_diff_table(&res.diff, &text);
        doc = fmt == FMT_JSON ? cf_history_diff_json(&res.diff) : NULL;
    }
    if (rc == 0)
        rc = emit(o, doc, &text);
    if (rc == 0 && fmt == FMT_JSON && req->kind == CF_HISTORY_SHOW && res.show.document_unreadable) {
        /* shown, but a script reading "document" must not take null for "none stored" */
        cf_log_warning("%s: recommendation %lld: its stored document is not valid JSON (a damaged row): "
                       "\"document\" is null", path, res.shown[0].id);
        rc = CF_EXIT_DATA;
    }
    cf_history_query_free(&res);
    return rc;
}

/* list: written as it is read, never held (a long history in CI). */
static int list_rows(const cf_cli_options *o, out_format fmt, cf_history_query_request *req)
{
    static const cf_history_format formats[] = {[FMT_TABLE] = CF_HISTORY_FORMAT_TABLE,
                                                [FMT_JSON] = CF_HISTORY_FORMAT_JSON, [FMT_CSV] = CF_HISTORY_FORMAT_CSV};
    char path[1024];
    if (cf_cli_db_open_readonly(o, &req->db, path, sizeof path) != CF_OK)
        return cf_report_error();
    int width = cf_cli_output_width(o);
    cf_cli_stream out;
    cf_cli_stream_init(&out, o, fmt == FMT_TABLE ? width : 0);
    size_t n = 0;
    cf_status st = cf_history_list_stream(req, formats[fmt], width, cf_cli_stream_write, &out, &n);
    cf_db_close(req->db);
    int rc = st == CF_OK ? 0 : cf_report_error();
    if (rc == 0 && fmt == FMT_TABLE && n == 0)
        cf_log_info("no recommendations match in %s", path);
    return cf_cli_stream_finish(&out, rc);
}

static int list(const cf_cli_options *o, out_format fmt)
{
    char since[32], until[32], hash[65];
    cf_history_query_request req = {
        .kind = CF_HISTORY_LIST,
        .filter = {.spec_name = o->model, .spec_hash = o->spec_hash, .branch = o->branch,
                   .limit = o->limit > 0 ? o->limit : DEFAULT_LIMIT},
        .clouds = (const char *const *)o->clouds.items, .n_clouds = (size_t)o->clouds.n,
        .gpus = (const char *const *)o->gpus.items, .n_gpus = (size_t)o->gpus.n};
    int rc;
    if ((rc = parse_time_option("--since", o->since, since, sizeof since)) ||
        (rc = parse_time_option("--until", o->until, until, sizeof until)))
        return rc;
    req.filter.since = o->since ? since : NULL;
    req.filter.until = o->until ? until : NULL;
    if (cf_history_list_check(&req, hash) != CF_OK)
        return cf_report_error();
    return list_rows(o, fmt, &req);
}

static int show(const cf_cli_options *o, out_format fmt, const char *id_text)
{
    cf_history_query_request req = {.kind = CF_HISTORY_SHOW};
    int rc = parse_id(id_text, &req.ids[0]);
    return rc ? rc : query(o, fmt, &req);
}

static int diff(const cf_cli_options *o, out_format fmt, const char *a_text, const char *b_text)
{
    cf_history_query_request req = {.kind = CF_HISTORY_DIFF};
    int rc;
    if ((rc = parse_id(a_text, &req.ids[0])) || (rc = parse_id(b_text, &req.ids[1])))
        return rc;
    return query(o, fmt, &req);
}

/* prune --dry-run: the table of what would go, then the count. */
static int prune_dry_run(const cf_cli_options *o, const char *before, const char *shown)
{
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open_readonly(o, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    int width = cf_cli_output_width(o);
    cf_cli_stream out;
    cf_cli_stream_init(&out, o, width);
    cf_history_prune_report report = {.before = shown, .db_path = path};
    cf_status st = cf_history_prune_dry_run(db, before, width, cf_cli_stream_write, &out, &report);
    cf_db_close(db);
    return cf_cli_stream_finish(&out, st == CF_OK ? 0 : cf_report_error());
}

static int prune(const cf_cli_options *o)
{
    if (!o->older_than) {
        cf_log_error("history prune needs --older-than AGE");
        cf_log_hint("e.g. 'cloudfit history prune --older-than 90d' (--dry-run shows what it would delete)");
        return CF_EXIT_USAGE;
    }
    char before[32];
    int as_given;
    int rc = parse_when("--older-than", o->older_than, before, sizeof before, &as_given);
    if (rc)
        return rc;
    char path[1024];
    cf_db *db = NULL;
    if (o->dry_run) /* reads only; written as it is read, like the list */
        return prune_dry_run(o, before, as_given ? o->older_than : before);
    cf_status st = cf_cli_db_open(o, 0, &db, path, sizeof path);
    if (st == CF_OK)
        st = cf_db_hold(db);
    cf_history_prune_result res;
    memset(&res, 0, sizeof res);
    if (st == CF_OK)
        st = cf_history_prune_run(db, before, &res);
    res.report.before = as_given ? o->older_than : before;
    res.report.db_path = path;
    cf_buf text = CF_BUF_INIT;
    if (st != CF_OK) {
        rc = cf_report_error();
    } else {
        cf_history_prune_text(&res.report, &text);
        rc = cf_cli_deliver_held(o, db, 0, &text);
    }
    cf_db_close(db);
    return rc;
}

/* history migrate --to URL: the history of --db (or the default file)
 * copied into another database, idempotently (db/history_copy.h). */
static int migrate(const cf_cli_options *o)
{
    if (!o->migrate_to || !o->migrate_to[0]) {
        cf_log_error("history migrate needs --to DATABASE");
        cf_log_hint("e.g. 'cloudfit history migrate --to postgresql://ci@db.example/cloudfit' (the password from "
                    "PGPASSFILE or a PGSERVICE entry)");
        return CF_EXIT_USAGE;
    }
    char from_path[1024], to_path[1024], source[2048];
    if (cf_db_check_target(o->migrate_to, "to") != CF_OK || cf_cli_db_path(o, source, sizeof source) != CF_OK)
        return cf_report_error();
    if (cf_db_same_target(source, o->migrate_to)) { /* the file itself, however spelled */
        cf_db_redact(source, from_path, sizeof from_path);
        cf_db_redact(o->migrate_to, to_path, sizeof to_path);
        if (strcmp(source, o->migrate_to) == 0)
            cf_log_error("history migrate: '%s' is both the source and the destination", from_path);
        else
            cf_log_error("history migrate: '%s' is both the source and the destination ('--to %s' is the same file)",
                         from_path, to_path);
        cf_log_hint("--db (or CLOUDFIT_DB) names the history to copy, --to where it goes");
        return CF_EXIT_USAGE;
    }
    cf_db *from = NULL, *to = NULL;
    /* The source is only read: a foreign SQLite file is refused, not given
     * cloudfit's tables, and an older schema is reported, not upgraded */
    if (cf_cli_db_open_readonly(o, &from, from_path, sizeof from_path) != CF_OK)
        return cf_report_error();
    cf_db_redact(o->migrate_to, to_path, sizeof to_path);
    /* a new SQLite destination that the copy then fails to fill (a full
     * disk: its schema committed, the copy not) is removed with its -wal
     * and -shm: an empty history left there read as a migration of nothing */
    int created = !cf_db_is_postgresql(o->migrate_to) && access(o->migrate_to, F_OK) != 0;
    if (cf_db_open(o->migrate_to, &to) != CF_OK) {
        cf_db_close(from);
        return cf_report_error();
    }
    cf_history_copy_counts n;
    cf_status st = cf_db_hold(to);
    if (st == CF_OK)
        st = cf_history_copy(from, to, &n);
    cf_db_close(from);
    int rc;
    if (st != CF_OK) {
        rc = cf_report_error();
    } else {
        cf_buf text = CF_BUF_INIT;
        cf_history_migrate_text(&n, from_path, to_path, &text);
        rc = cf_cli_deliver_held(o, to, 0, &text);
    }
    cf_db_close(to);
    if (rc && created)
        cf_db_remove_unused(o->migrate_to); /* only while it holds no row, under its write lock */
    return rc;
}

/* The options of one subcommand given to another (cf_history_check_options,
 * whose table says which subcommand takes which). */
static int check_sub_options(const cf_cli_options *o, const char *sub)
{
    /* what the command line gave: a configuration file's defaults apply where they can */
    const char *given[CF_CLI_MAX_OPTIONS];
    size_t n = cf_cli_subcommand_options_given(o, CMD_HISTORY, cf_history_option_subcommands, given);
    if (cf_history_check_options(sub, given, n, cf_cli_note, NULL) != CF_OK)
        return cf_report_error();
    return 0;
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
    if ((rc = check_sub_options(o, sub)))
        return rc;
    if (strcmp(sub, "list") == 0 && n_args == 0)
        return list(o, fmt);
    if (strcmp(sub, "show") == 0 && n_args == 1)
        return show(o, fmt, argv[2]);
    if (strcmp(sub, "diff") == 0 && n_args == 2)
        return diff(o, fmt, argv[2], argv[3]);
    if (strcmp(sub, "prune") == 0 && n_args == 0)
        return prune(o);
    if (strcmp(sub, "migrate") == 0 && n_args == 0)
        return migrate(o);
    if (!strcmp(sub, "list") || !strcmp(sub, "show") || !strcmp(sub, "diff") || !strcmp(sub, "prune") ||
        !strcmp(sub, "migrate"))
        cf_log_error("history %s: wrong number of arguments (%d)", sub, n_args);
    else
        cf_log_error("'%s' is not a history command", sub);
    cf_log_hint("usage: cloudfit history [list] | show ID | diff ID1 ID2 | prune --older-than AGE | migrate --to URL");
    return CF_EXIT_USAGE;
}
