/* `history` and `record` as library calls (usecase/history.c) on a real
 * SQLite file in a temporary folder: a list over several clouds and GPUs
 * (rows of any of them, newest first and cut to the limit), the list
 * streamed to a sink a row at a time,
 * show with alternatives and gates, diff, prune (dry and real, inside the
 * caller's hold) and a recorded measurement kept or dropped with the
 * caller's release. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/db.h"
#include "cloudfit/usecase/history.h"

static char dir[] = "/tmp/cloudfit-test-usecase-history-XXXXXX";
static char db_path[128];
static long long ids[4]; /* aws T4 (Nov 10), gcp A100 (Nov 12), azure T4 (Nov 14), aws A100 (Nov 16) */

static cf_history_record sample(const char *created_at, const char *cloud, const char *gpu, double usd)
{
    static const cf_history_gate gate = {.name = "max_cost_usd", .passed = 1, .note = "under $100"};
    cf_history_record r = {
        .created_at = created_at, .tool_version = "0.1.0", .spec_hash = "abc123", .source_hash = "src123",
        .spec_name = "resnet50", .spec_json = "{\"name\":\"resnet50\"}", .objective = "cost",
        .catalog_name = "embedded", .catalog_date = "2026-07-30", .cloud = cloud, .region = "r1",
        .instance_type = "vm-8", .gpu = gpu, .gpus_per_node = 8, .nodes = 2, .local_batch = 64, .accumulation = 1,
        .global_batch = 1024, .lr = 0.4, .step_time_s = 0.3, .hours = 10, .total_usd = usd,
        .usd_per_node_hour = usd / 20, .hours_p10 = NAN, .hours_p90 = NAN, .total_usd_p10 = NAN,
        .total_usd_p90 = NAN, .result_json = "{\"chosen\":{}}", .gates = &gate, .n_gates = 1};
    return r;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(db_path, sizeof db_path, "%s/history.db", dir);
    cf_db *db = NULL;
    if (cf_db_open(db_path, &db) != CF_OK)
        return -1;
    const char *when[] = {"2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-14T00:00:00Z",
                          "2026-11-16T00:00:00Z"};
    const char *cloud[] = {"aws", "gcp", "azure", "aws"}, *gpu[] = {"T4", "A100", "T4", "A100"};
    for (int i = 0; i < 4; i++) {
        cf_history_record r = sample(when[i], cloud[i], gpu[i], 50.0 + 10 * i);
        if (cf_history_insert(db, &r, &ids[i]) != CF_OK)
            return -1;
    }
    cf_db_close(db);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_list_over_clouds_and_gpus(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open_readonly(db_path, &db), CF_OK);
    const char *clouds[] = {"aws", "gcp"}, *gpus[] = {"A100", "T4"};
    cf_history_query_request req = {.db = db, .kind = CF_HISTORY_LIST, .filter = {.limit = 2},
                                    .clouds = clouds, .n_clouds = 2, .gpus = gpus, .n_gpus = 2};
    cf_history_query_result res;
    assert_int_equal(cf_history_query(&req, &res), CF_OK);
    /* aws/gcp × A100/T4 matches 3 rows (not azure); the newest 2 of them */
    assert_int_equal(res.n_rows, 2);
    assert_int_equal(res.rows[0].id, ids[3]);
    assert_int_equal(res.rows[1].id, ids[1]);
    assert_ptr_equal(res.list.rows, res.rows);
    assert_int_equal(res.list.n, 2);
    cf_history_query_free(&res);
    /* no list: any cloud and GPU, a time window */
    cf_history_query_request window = {.db = db, .kind = CF_HISTORY_LIST,
                                       .filter = {.since = "2026-11-11T00:00:00Z", .until = "2026-11-15T00:00:00Z"}};
    assert_int_equal(cf_history_query(&window, &res), CF_OK);
    assert_int_equal(res.n_rows, 2);
    assert_int_equal(res.rows[0].id, ids[2]);
    assert_int_equal(res.rows[1].id, ids[1]);
    cf_history_query_free(&res);
    cf_db_close(db);
}

/* cf_history_list_stream's sink: what it was given, and a failure to give. */
typedef struct {
    cf_buf text;
    int calls;
    int fail;
} sink_seen;

static cf_status sink(void *ctx, const char *text, size_t len)
{
    sink_seen *s = ctx;
    s->calls++;
    if (s->fail)
        return cf_error_set(CF_ERR_WRITE, "cannot write the result to standard output: Broken pipe");
    cf_buf_append(&s->text, text, len);
    return CF_OK;
}

/* The list streamed: the bytes of the whole-list renderer for the same
 * rows (cf_history_query's), the rows counted; a table of no rows writes
 * nothing, JSON "[]"; a failing sink's error is the answer. */
static void test_list_streamed(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open_readonly(db_path, &db), CF_OK);
    const char *clouds[] = {"aws", "gcp", "AWS"}, *gpus[] = {"A100", "T4"};
    cf_history_query_request req = {.db = db, .kind = CF_HISTORY_LIST, .filter = {.limit = 2},
                                    .clouds = clouds, .n_clouds = 3, .gpus = gpus, .n_gpus = 2};
    cf_history_query_result res;
    assert_int_equal(cf_history_query(&req, &res), CF_OK);
    cf_buf whole = CF_BUF_INIT;
    cf_history_list_table(&res.list, &whole);
    cf_history_query_free(&res);
    sink_seen seen = {CF_BUF_INIT, 0, 0};
    size_t n = 0;
    assert_int_equal(cf_history_list_stream(&req, CF_HISTORY_FORMAT_TABLE, 0, sink, &seen, &n), CF_OK);
    assert_int_equal(n, 2);
    assert_string_equal(cf_buf_cstr(&seen.text), cf_buf_cstr(&whole));
    assert_non_null(strstr(cf_buf_cstr(&seen.text), "A100"));
    cf_buf_free(&seen.text);
    cf_buf_free(&whole);
    cf_history_query_request none = {.db = db, .kind = CF_HISTORY_LIST, .filter = {.spec_name = "other"}};
    seen = (sink_seen){CF_BUF_INIT, 0, 0};
    assert_int_equal(cf_history_list_stream(&none, CF_HISTORY_FORMAT_TABLE, 80, sink, &seen, &n), CF_OK);
    assert_int_equal(n, 0);
    assert_int_equal(seen.calls, 0);
    assert_int_equal(cf_history_list_stream(&none, CF_HISTORY_FORMAT_JSON, 0, sink, &seen, &n), CF_OK);
    assert_string_equal(cf_buf_cstr(&seen.text), "[]\n");
    cf_buf_free(&seen.text);
    seen = (sink_seen){CF_BUF_INIT, 0, 1};
    assert_int_equal(cf_history_list_stream(&req, CF_HISTORY_FORMAT_CSV, 0, sink, &seen, &n), CF_ERR_WRITE);
    assert_non_null(strstr(cf_error_message(), "Broken pipe"));
    cf_db_close(db);
}

static void test_show_and_diff(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open_readonly(db_path, &db), CF_OK);
    cf_history_query_request req = {.db = db, .kind = CF_HISTORY_SHOW, .ids = {ids[1]}};
    cf_history_query_result res;
    assert_int_equal(cf_history_query(&req, &res), CF_OK);
    assert_string_equal(res.show.row->chosen.cloud, "gcp");
    assert_string_equal(res.show.row->result_json, "{\"chosen\":{}}");
    assert_int_equal(res.show.n_gates, 1);
    assert_string_equal(res.show.gates[0].name, "max_cost_usd");
    cf_history_query_free(&res);

    req = (cf_history_query_request){.db = db, .kind = CF_HISTORY_DIFF, .ids = {ids[0], ids[3]}};
    assert_int_equal(cf_history_query(&req, &res), CF_OK);
    assert_int_equal(res.diff.from->id, ids[0]);
    assert_int_equal(res.diff.to->id, ids[3]);
    int saw_gpu = 0;
    for (size_t i = 0; i < res.diff.diff.n; i++)
        saw_gpu |= strcmp(res.diff.diff.entries[i].key, "gpu") == 0 && res.diff.diff.entries[i].changed;
    assert_true(saw_gpu); /* T4 → A100 */
    cf_history_query_free(&res);

    req = (cf_history_query_request){.db = db, .kind = CF_HISTORY_SHOW, .ids = {999}};
    assert_int_not_equal(cf_history_query(&req, &res), CF_OK);
    assert_non_null(strstr(cf_error_message(), "999"));
    cf_error_clear();
    cf_history_query_free(&res);
    cf_db_close(db);
}

static long long count(cf_db *db)
{
    long long n = 0;
    assert_int_equal(cf_history_count(db, &n), CF_OK);
    return n;
}

static void test_record_kept_with_the_release(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    cf_history_record_request req = {.db = db, .recommendation_id = ids[2], .step_time_s = 0.25, .note = "run 1"};
    cf_history_record_result res;
    assert_int_equal(cf_history_record_run(&req, &res), CF_OK);
    assert_true(res.report.measurement_id > 0);
    assert_string_equal(res.row.chosen.cloud, "azure");
    assert_true(isnan(res.measurement.total_usd));
    assert_int_equal(cf_db_release(db, 0), CF_OK); /* the report could not be delivered */
    cf_history_measurement *ms = NULL;
    size_t n = 0;
    assert_int_equal(cf_history_measurements_for_spec(db, "src123", &ms, &n), CF_OK);
    assert_int_equal(n, 0);
    free(ms);
    assert_int_equal(cf_history_record_run(&req, &res), CF_OK);
    assert_int_equal(cf_db_release(db, 1), CF_OK);
    assert_int_equal(cf_history_measurements_for_spec(db, "src123", &ms, &n), CF_OK);
    assert_int_equal(n, 1);
    assert_true(fabs(ms[0].step_time_s - 0.25) < 1e-12);
    free(ms);
    /* an id the history does not hold: nothing recorded, nothing held */
    req.recommendation_id = 999;
    assert_int_not_equal(cf_history_record_run(&req, &res), CF_OK);
    cf_error_clear();
    cf_db_close(db);
}

static void test_prune_dry_then_real(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    /* the dry run writes its table as it reads the rows, then the count */
    sink_seen seen = {CF_BUF_INIT, 0, 0};
    cf_history_prune_report dry = {.before = "2026-11-13", .db_path = "h.db"};
    assert_int_equal(cf_history_prune_dry_run(db, "2026-11-13T00:00:00Z", 0, sink, &seen, &dry), CF_OK);
    assert_int_equal(dry.n_deleted, 2);
    assert_true(dry.dry_run);
    const char *table = cf_buf_cstr(&seen.text);
    char id_line[32];
    snprintf(id_line, sizeof id_line, "\n %lld  ", ids[1]); /* the newest of the two first, under the header */
    assert_true(strncmp(table, "ID ", 3) == 0 && strstr(table, id_line) == strchr(table, '\n'));
    assert_non_null(strstr(table, "dry run: prune would delete 2 recommendations created before 2026-11-13 from h.db"));
    cf_buf_free(&seen.text);
    assert_int_equal(count(db), 4);
    cf_history_prune_result res;
    assert_int_equal(cf_db_hold(db), CF_OK);
    assert_int_equal(cf_history_prune_run(db, "2026-11-13T00:00:00Z", &res), CF_OK);
    assert_int_equal(res.report.n_deleted, 2);
    assert_int_equal(cf_db_release(db, 1), CF_OK);
    assert_int_equal(count(db), 2);
    cf_db_close(db);
}

static int n_notes;
static char last_note[160];

static void keep_note(void *ctx, cf_note_kind kind, const char *text)
{
    (void)ctx;
    (void)kind;
    n_notes++;
    snprintf(last_note, sizeof last_note, "%s", text);
}

/* The one table of which subcommand takes which option: what the
 * completion scripts offer after a subcommand (cf_history_option_subcommands)
 * and what the check accepts there without a word. */
static void test_sub_options(void **state)
{
    (void)state;
    assert_string_equal(cf_history_option_subcommands("model"), "list");
    assert_string_equal(cf_history_option_subcommands("limit"), "list");
    assert_string_equal(cf_history_option_subcommands("older-than"), "prune");
    assert_string_equal(cf_history_option_subcommands("dry-run"), "prune");
    assert_string_equal(cf_history_option_subcommands("to"), "migrate");
    assert_null(cf_history_option_subcommands("db"));
    assert_string_equal(cf_history_option_subcommands("format"), "list show diff");
    const char *filter[] = {"since"}, *age[] = {"older-than", "dry-run"}, *to[] = {"to"};
    n_notes = 0;
    assert_int_equal(cf_history_check_options("list", filter, 1, keep_note, NULL), CF_OK);
    assert_int_equal(cf_history_check_options("prune", age, 2, keep_note, NULL), CF_OK);
    assert_int_equal(cf_history_check_options("migrate", to, 1, keep_note, NULL), CF_OK);
    assert_int_equal(n_notes, 0);
    assert_int_equal(cf_history_check_options("prune", filter, 1, keep_note, NULL), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "does not take --since"));
    cf_error_clear();
    /* the subcommands that write refuse what they would not honour: prune --to
     * deleted without a copy, migrate --model/--dry-run/--older-than copied
     * the whole history, each with a note only */
    assert_int_equal(cf_history_check_options("prune", to, 1, keep_note, NULL), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "prune deletes, it copies nothing: it does not take --to"));
    cf_error_clear();
    assert_int_equal(cf_history_check_options("migrate", filter, 1, keep_note, NULL), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "migrate copies the whole history: it does not take --since"));
    cf_error_clear();
    assert_int_equal(cf_history_check_options("migrate", age, 2, keep_note, NULL), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "does not take --older-than"));
    cf_error_clear();
    const char *dry[] = {"dry-run"};
    assert_int_equal(cf_history_check_options("migrate", dry, 1, keep_note, NULL), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "does not take --dry-run"));
    cf_error_clear();
    assert_int_equal(n_notes, 0);
    assert_int_equal(cf_history_check_options("list", age, 2, keep_note, NULL), CF_OK);
    assert_int_equal(n_notes, 2); /* --dry-run given to list: noted (the CLI said nothing) */
    assert_string_equal(last_note, "note: --dry-run applies to 'history prune' only; ignored");
    /* -f json given to prune or migrate, which print text: noted (they printed the text without a word) */
    const char *format[] = {"format"};
    n_notes = 0;
    assert_int_equal(cf_history_check_options("show", format, 1, keep_note, NULL), CF_OK);
    assert_int_equal(cf_history_check_options("diff", format, 1, keep_note, NULL), CF_OK);
    assert_int_equal(n_notes, 0);
    assert_int_equal(cf_history_check_options("prune", format, 1, keep_note, NULL), CF_OK);
    assert_string_equal(last_note,
                        "note: --format applies to 'history list', 'history show' and 'history diff' only; ignored");
    assert_int_equal(cf_history_check_options("migrate", format, 1, keep_note, NULL), CF_OK);
    assert_int_equal(n_notes, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_over_clouds_and_gpus),
        cmocka_unit_test(test_list_streamed),
        cmocka_unit_test(test_show_and_diff),
        cmocka_unit_test(test_record_kept_with_the_release),
        cmocka_unit_test(test_prune_dry_then_real),
        cmocka_unit_test(test_sub_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
