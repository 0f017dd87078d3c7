/* Price snapshots in SQLite (db/snapshots.c): one transaction per
 * snapshot, newest good one wins, a failed insert leaves nothing behind, a
 * tampered snapshot is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_and_latest),
        cmocka_unit_test(test_failed_insert_leaves_nothing),
        cmocka_unit_test(test_tampered_snapshot_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
