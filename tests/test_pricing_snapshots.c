/* Price snapshots in SQLite (db/snapshots.c): one transaction per
 * snapshot, the newest good one by fetch time wins (also after `history
 * migrate` copied an older one in), a copy renames what refers to a copied
 * snapshot, a failed insert leaves nothing behind, a tampered snapshot is
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/db/history.h"
#include "cloudfit/db/history_copy.h"
#include "cloudfit/db/snapshots.h"

static char path[256];

static cf_db *fresh_db(void)
{
    snprintf(path, sizeof path, "%s/test_pricing_snapshots_%d.db", CF_BINARY_DIR, (int)getpid());
    unlink(path);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    return db;
}

static long count(const char *table)
{
    sqlite3 *h;
    sqlite3_open(path, &h);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    sqlite3_step(st);
    long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

static const char CSV1[] = "cloud,region\naws,us-east-1\n";
static const char CSV2[] = "cloud,region\nazure,eastus\n";

static void test_insert_and_latest(void **state)
{
    (void)state;
    cf_db *db = fresh_db();
    cf_snapshot snap;
    int found = 1;
    assert_int_equal(cf_snapshot_latest(db, &snap, &found), CF_OK);
    assert_int_equal(found, 0);
    cf_snapshot_price p = {"aws", "us-east-1", "p5.48xlarge", "H100", 8, 55.04, 26.4192};
    cf_snapshot_new s1 = {"2026-11-20T00:00:00Z", "aws", "embedded", CSV1, strlen(CSV1), 1, "", &p, 1};
    cf_snapshot_new s2 = {"2026-11-21T00:00:00Z", "azure", "snapshot-1", CSV2, strlen(CSV2), 1, "note", NULL, 0};
    long long id1 = 0, id2 = 0;
    assert_int_equal(cf_snapshot_insert(db, &s1, &id1), CF_OK);
    assert_int_equal(cf_snapshot_insert(db, &s2, &id2), CF_OK);
    assert_true(id2 > id1);
    assert_int_equal(cf_snapshot_latest(db, &snap, &found), CF_OK);
    assert_int_equal(found, 1);
    assert_string_equal(snap.name, "snapshot-2");
    assert_string_equal(snap.vms_csv, CSV2);
    assert_string_equal(snap.sources, "azure");
    assert_string_equal(snap.base, "snapshot-1");
    assert_int_equal(strlen(snap.content_hash), 64);
    cf_snapshot_free(&snap);
    cf_snapshot list[4];
    size_t n = 0;
    assert_int_equal(cf_snapshot_list(db, list, 4, &n), CF_OK);
    assert_int_equal(n, 2);
    assert_int_equal(list[1].id, id1);
    cf_db_close(db);
}

static void test_failed_insert_leaves_nothing(void **state)
{
    (void)state;
    cf_db *db = fresh_db();
    cf_snapshot_price prices[2] = {{"aws", "us-east-1", "g5.xlarge", "A10G", 1, 1.006, 0},
                                   {"aws", "us-east-1", "g6.xlarge", "L4", 1, -1.0, 0}}; /* violates CHECK */
    cf_snapshot_new s = {"2026-11-20T00:00:00Z", "aws", "embedded", CSV1, strlen(CSV1), 1, "", prices, 2};
    long long id = 0;
    assert_int_equal(cf_snapshot_insert(db, &s, &id), CF_ERR_DB);
    assert_int_equal(count("price_snapshots"), 0);
    assert_int_equal(count("price_snapshot_rows"), 0);
    cf_db_close(db);
}

static void test_tampered_snapshot_refused(void **state)
{
    (void)state;
    cf_db *db = fresh_db();
    cf_snapshot_new s = {"2026-11-20T00:00:00Z", "aws", "embedded", CSV1, strlen(CSV1), 1, "", NULL, 0};
    assert_int_equal(cf_snapshot_insert(db, &s, NULL), CF_OK);
    sqlite3 *h;
    sqlite3_open(path, &h);
    sqlite3_exec(h, "UPDATE price_snapshots SET vms_csv = 'cloud,region\naws,us-east-2\n'", NULL, NULL, NULL);
    sqlite3_close(h);
    cf_snapshot snap;
    int found = 1;
    assert_int_equal(cf_snapshot_latest(db, &snap, &found), CF_ERR_DB);
    assert_int_equal(found, 0);
    assert_non_null(strstr(cf_error_message(), "does not match its content hash"));
    cf_db_close(db);
    unlink(path);
}

static cf_db *open_at(const char *name, char *out_path, size_t cap)
{
    snprintf(out_path, cap, "%s/test_pricing_snapshots_%s_%d.db", CF_BINARY_DIR, name, (int)getpid());
    unlink(out_path);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(out_path, &db), CF_OK);
    return db;
}

static void record_priced_with(cf_db *db, const char *catalog_name)
{
    cf_history_record r = {
        .created_at = "2026-05-28T21:00:00Z", .tool_version = "0.1.0", .spec_hash = "abc123", .spec_name = "job",
        .spec_json = "{\"name\":\"job\"}", .objective = "cost", .catalog_name = catalog_name,
        .catalog_date = "2026-05-28", .cloud = "aws", .region = "us-east-1", .instance_type = "g5.xlarge",
        .gpu = "A10G", .gpus_per_node = 1, .nodes = 1, .local_batch = 64, .accumulation = 1, .global_batch = 64,
        .lr = 0.1, .step_time_s = 0.3, .hours = 10, .total_usd = 10.06, .usd_per_node_hour = 1.006,
        .hours_p10 = NAN, .hours_p90 = NAN, .total_usd_p10 = NAN, .total_usd_p90 = NAN, .result_json = "{}"};
    assert_int_equal(cf_history_insert(db, &r, NULL), CF_OK);
}

/* `history migrate` of a laptop's old file into a team database that holds
 * a newer snapshot: the newer one stays in use (by fetch time, not by the
 * copy's higher id), and the copied snapshot's base and the copied
 * recommendation's catalog name the copies, not the destination's
 * snapshots that happen to have the source's ids. */
static void test_migrated_older_snapshot_is_not_latest(void **state)
{
    (void)state;
    char team_path[256], old_path[256];
    cf_db *team = open_at("team", team_path, sizeof team_path);
    cf_db *old = open_at("old", old_path, sizeof old_path);
    cf_snapshot_new newest = {"2026-11-18T06:13:20Z", "lambda", "embedded", CSV1, strlen(CSV1), 1, "", NULL, 0};
    assert_int_equal(cf_snapshot_insert(team, &newest, NULL), CF_OK); /* team's snapshot-1 */
    cf_snapshot_new old1 = {"2026-05-20T00:00:00Z", "aws", "embedded", CSV2, strlen(CSV2), 1, "", NULL, 0};
    cf_snapshot_new old2 = {"2026-05-28T20:26:40Z", "azure", "snapshot-1", CSV1, strlen(CSV1), 1, "", NULL, 0};
    assert_int_equal(cf_snapshot_insert(old, &old1, NULL), CF_OK); /* old's snapshot-1 */
    assert_int_equal(cf_snapshot_insert(old, &old2, NULL), CF_OK); /* old's snapshot-2, based on its snapshot-1 */
    record_priced_with(old, "snapshot-2");
    record_priced_with(old, "embedded");
    cf_history_copy_counts counts;
    assert_int_equal(cf_history_copy(old, team, &counts), CF_OK);
    assert_int_equal(counts.snapshots, 2);
    assert_int_equal(counts.recommendations, 2);

    cf_snapshot snap;
    int found = 0;
    assert_int_equal(cf_snapshot_latest(team, &snap, &found), CF_OK);
    assert_int_equal(found, 1);
    assert_string_equal(snap.fetched_at, "2026-11-18T06:13:20Z");
    assert_string_equal(snap.name, "snapshot-1");
    cf_snapshot_free(&snap);

    cf_snapshot list[4];
    size_t n = 0;
    assert_int_equal(cf_snapshot_list(team, list, 4, &n), CF_OK);
    assert_int_equal(n, 3);
    assert_string_equal(list[0].fetched_at, "2026-11-18T06:13:20Z");
    assert_string_equal(list[1].fetched_at, "2026-05-28T20:26:40Z");
    assert_string_equal(list[2].fetched_at, "2026-05-20T00:00:00Z");
    assert_string_equal(list[1].base, list[2].name); /* the copy of its base, not the team's snapshot-1 */
    assert_string_equal(list[2].base, "embedded");

    cf_history_filter all = {0};
    cf_history_row *rows = NULL;
    size_t n_rows = 0;
    assert_int_equal(cf_history_list(team, &all, &rows, &n_rows), CF_OK);
    assert_int_equal(n_rows, 2);
    int renamed = 0, embedded = 0;
    for (size_t i = 0; i < n_rows; i++) {
        renamed += strcmp(rows[i].catalog_name, list[1].name) == 0;
        embedded += strcmp(rows[i].catalog_name, "embedded") == 0;
    }
    assert_int_equal(renamed, 1);
    assert_int_equal(embedded, 1);
    cf_history_rows_free(rows, n_rows);

    /* a second migrate finds both snapshots there and copies nothing */
    assert_int_equal(cf_history_copy(old, team, &counts), CF_OK);
    assert_int_equal(counts.snapshots, 0);
    cf_db_close(old);
    cf_db_close(team);
    unlink(old_path);
    unlink(team_path);
}

/* Two snapshots fetched in the same second: the later insert wins. */
static void test_same_fetch_time_goes_by_id(void **state)
{
    (void)state;
    cf_db *db = fresh_db();
    cf_snapshot_new a = {"2026-11-20T00:00:00Z", "aws", "embedded", CSV1, strlen(CSV1), 1, "", NULL, 0};
    cf_snapshot_new b = {"2026-11-20T00:00:00Z", "azure", "snapshot-1", CSV2, strlen(CSV2), 1, "", NULL, 0};
    assert_int_equal(cf_snapshot_insert(db, &a, NULL), CF_OK);
    assert_int_equal(cf_snapshot_insert(db, &b, NULL), CF_OK);
    cf_snapshot snap;
    int found = 0;
    assert_int_equal(cf_snapshot_latest(db, &snap, &found), CF_OK);
    assert_string_equal(snap.name, "snapshot-2");
    cf_snapshot_free(&snap);
    cf_db_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_and_latest),
        cmocka_unit_test(test_failed_insert_leaves_nothing),
        cmocka_unit_test(test_tampered_snapshot_refused),
        cmocka_unit_test(test_migrated_older_snapshot_is_not_latest),
        cmocka_unit_test(test_same_fetch_time_goes_by_id),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (path[0]) /* the last test's database (each test starts a fresh one) */
        unlink(path);
    return failed;
}
