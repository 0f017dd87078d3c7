/* Search runs and probes in the history database (db/search_runs.c):
 * one transaction per run, failed probes stored with a NULL measurement,
 * probes deleted with their run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "cloudfit/db/search_runs.h"

static void test_insert_run_and_probes(void **state)
{
    (void)state;
    char path[] = "/tmp/cloudfit-search-history-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    cf_search_probe_record probes[2] = {
        {.kind = "profile", .cloud = "aws", .region = "us-east-1", .instance_type = "g4dn.xlarge", .gpu = "T4",
         .gpus_per_node = 1, .nodes = 1, .local_batch = 32, .steps = 20, .attempts = 1,
         .measured_step_time_s = 0.1, .predicted_step_time_s = NAN, .cost_usd = 0.001, .error = ""},
        {.kind = "probe", .cloud = "aws", .region = "us-east-1", .instance_type = "g4dn.12xlarge", .gpu = "T4",
         .gpus_per_node = 4, .nodes = 2, .local_batch = 64, .steps = 50, .attempts = 2,
         .measured_step_time_s = NAN, .predicted_step_time_s = 0.3, .cost_usd = 0, .error = "'x' timed out"}};
    cf_search_record rec = {.created_at = "2026-11-22T00:00:00Z", .tool_version = "test", .spec_hash = "abc",
                            .spec_name = "s", .runner = "trace:x.csv", .method = "cloudfit", .objective = "cost",
                            .seed = 1, .has_chosen = 1, .cloud = "aws", .instance_type = "g4dn.xlarge", .gpu = "T4",
                            .gpus_per_node = 1, .nodes = 1, .local_batch = 32, .step_time_s = 0.1, .hours = 3,
                            .total_usd = 1.5, .probe_count = 1, .profile_cost_usd = 0.001, .probe_cost_usd = 0,
                            .overhead_usd = 0, .regret_pct = NAN, .result_json = "{}"};
    long long id = 0, runs = 0, n = 0;
    assert_int_equal(cf_search_history_insert(db, &rec, probes, 2, &id), CF_OK);
    assert_true(id > 0);
    assert_int_equal(cf_search_history_count(db, &runs, &n), CF_OK);
    assert_int_equal(runs, 1);
    assert_int_equal(n, 2);
    cf_db_close(db);

    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(raw, "SELECT measured_step_time_s IS NULL, error, attempts FROM search_probes"
                                             " WHERE seq = 2", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1);
    assert_string_equal((const char *)sqlite3_column_text(st, 1), "'x' timed out");
    assert_int_equal(sqlite3_column_int(st, 2), 2);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(raw, "SELECT regret_pct IS NULL FROM search_runs", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1);
    sqlite3_finalize(st);
    /* Probes go with their run. */
    assert_int_equal(sqlite3_exec(raw, "PRAGMA foreign_keys = ON; DELETE FROM search_runs;", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(raw, "SELECT count(*) FROM search_probes", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);

    /* A bad probe (violating the kind check) leaves nothing behind. */
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    probes[1].kind = "bogus";
    assert_int_not_equal(cf_search_history_insert(db, &rec, probes, 2, &id), CF_OK);
    assert_int_equal(cf_search_history_count(db, &runs, &n), CF_OK);
    assert_int_equal(runs, 0);
    assert_int_equal(n, 0);
    cf_db_close(db);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_insert_run_and_probes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
