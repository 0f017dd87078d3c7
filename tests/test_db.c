/* History database: migrations, inserts, reopen, hostile strings, and a
 * database from a newer cloudfit. Real SQLite files in a temp directory. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "cloudfit/db/history.h"

static char dir_template[] = "/tmp/cloudfit-test-db-XXXXXX";
static char db_path[256];

static int setup(void **state)
{
    (void)state;
    char *dir = mkdtemp(dir_template);
    assert_non_null(dir);
    snprintf(db_path, sizeof db_path, "%s/history.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir_template);
    return system(cmd) == 0 ? 0 : -1;
}

static cf_history_record sample(const char *name)
{
    cf_history_record r = {
        .created_at = "2026-11-21T00:00:00Z", .tool_version = "0.1.0", .spec_hash = "abc123",
        .spec_name = name, .spec_json = "{\"name\":\"x\"}", .objective = "cost", .catalog_name = "embedded",
        .catalog_date = "2026-07-30", .cloud = "aws", .region = "us-east-1", .instance_type = "g4dn.12xlarge",
        .gpu = "T4", .gpus_per_node = 4, .nodes = 2, .local_batch = 64, .accumulation = 1, .global_batch = 512,
        .lr = 0.2, .spot = 0, .step_time_s = 0.3, .hours = 10, .total_usd = 78.2, .usd_per_node_hour = 3.91,
        .result_json = "{}"};
    return r;
}

static void test_open_migrate_insert(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    assert_int_equal(cf_db_schema_version(db), 10); /* 10: measurements.after_recommendation */
    cf_history_record r = sample("resnet50");
    long long id1 = 0, id2 = 0, count = 0;
    assert_int_equal(cf_history_insert(db, &r, &id1), CF_OK);
    assert_int_equal(cf_history_insert(db, &r, &id2), CF_OK);
    assert_true(id2 > id1);
    assert_int_equal(cf_history_count(db, &count), CF_OK);
    assert_int_equal(count, 2);
    cf_db_close(db);
    /* reopen: migrations are not re-applied, rows are kept */
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    assert_int_equal(cf_db_schema_version(db), 10); /* 10: measurements.after_recommendation */
    assert_int_equal(cf_history_count(db, &count), CF_OK);
    assert_int_equal(count, 2);
    cf_db_close(db);
}

/* cf_db_hold: writes join one transaction that cf_db_release commits or
 * rolls back (a command stores its result only once it was delivered); a
 * write that fails inside the hold rolls it all back. */
static void test_hold_commits_or_rolls_back(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s.hold", db_path);
    cf_db *db = NULL, *reader = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    cf_history_record r = sample("held");
    long long id = 0, count = -1;
    assert_int_equal(cf_db_hold(db), CF_OK);
    assert_int_equal(cf_db_hold(db), CF_ERR_INTERNAL); /* one hold at a time */
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    /* another connection sees nothing before the release */
    assert_int_equal(cf_db_open_readonly(path, &reader), CF_OK);
    assert_int_equal(cf_history_count(reader, &count), CF_OK);
    assert_int_equal(count, 0);
    assert_int_equal(cf_db_release(db, 0), CF_OK);
    assert_int_equal(cf_history_count(db, &count), CF_OK);
    assert_int_equal(count, 0);
    assert_int_equal(cf_db_hold(db), CF_OK);
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    assert_int_equal(cf_db_release(db, 1), CF_OK);
    assert_int_equal(cf_history_count(reader, &count), CF_OK);
    assert_int_equal(count, 1);
    /* a failing write ends the hold: nothing of it stays */
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "CREATE TRIGGER fail_bad BEFORE INSERT ON recommendations WHEN "
                                       "NEW.spec_name = 'bad' BEGIN SELECT RAISE(ABORT, 'disk says no'); END",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(cf_db_hold(db), CF_OK);
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    cf_history_record bad = sample("bad");
    assert_int_equal(cf_history_insert(db, &bad, &id), CF_ERR_DB);
    assert_int_equal(cf_db_release(db, 1), CF_OK); /* no hold any more: nothing to commit */
    assert_int_equal(cf_history_count(reader, &count), CF_OK);
    assert_int_equal(count, 1);
    /* a hold never released is rolled back when the database is closed */
    assert_int_equal(cf_db_hold(db), CF_OK);
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    cf_db_close(db);
    assert_int_equal(cf_history_count(reader, &count), CF_OK);
    assert_int_equal(count, 1);
    cf_db_close(reader);
}

static void test_hostile_strings_are_data(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    const char *hostile = "x'); DROP TABLE recommendations; --\"";
    cf_history_record r = sample(hostile);
    r.spec_hash = "h'o\"stile";
    long long before = 0, after = 0, id = 0;
    cf_history_count(db, &before);
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    cf_history_count(db, &after);
    assert_int_equal(after, before + 1);
    cf_db_close(db);
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(db_path, &raw), SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    assert_int_equal(sqlite3_prepare_v2(raw, "SELECT spec_name FROM recommendations WHERE id = ?1", -1, &stmt, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, id);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(stmt, 0), hostile);
    sqlite3_finalize(stmt);
    sqlite3_close(raw);
}

/* An effective spec (the file plus command-line overrides) is stored under
 * its own hash; the baseline and recorded runs follow the file's hash, so
 * a run recorded against `--deadline-hours 50` applies to a plain run of
 * the same file. Rows from before schema 6 (no source hash) match by their
 * spec hash. */
static void test_source_hash_lineage(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s.lineage", db_path);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    cf_history_record overridden = sample("lineage");
    overridden.spec_hash = "effective-50h";
    overridden.source_hash = "file-hash";
    overridden.total_usd = 50;
    long long id = 0;
    assert_int_equal(cf_history_insert(db, &overridden, &id), CF_OK);
    cf_history_row row;
    int found = 0;
    assert_int_equal(cf_history_latest(db, NULL, "file-hash", NULL, NULL, &row, &found), CF_OK);
    assert_true(found && row.id == id && strcmp(row.spec_hash, "effective-50h") == 0);
    assert_int_equal(cf_history_latest(db, NULL, "effective-50h", NULL, NULL, &row, &found), CF_OK);
    assert_false(found); /* the baseline key is the file, not the overrides */
    cf_history_measurement m = {.recommendation_id = id, .step_time_s = 0.5, .total_hours = NAN, .total_usd = NAN};
    snprintf(m.recorded_at, sizeof m.recorded_at, "2026-11-23T00:00:00Z");
    assert_int_equal(cf_history_record_measurement(db, &m, NULL), CF_OK);
    cf_history_measurement *ms = NULL;
    size_t n = 0;
    assert_int_equal(cf_history_measurements_for_spec(db, "file-hash", &ms, &n), CF_OK);
    assert_int_equal(n, 1);
    free(ms);
    /* A row written before schema 6: no source hash, found by its spec hash. */
    cf_db_close(db);
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "UPDATE recommendations SET source_hash = NULL", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    assert_int_equal(cf_history_latest(db, NULL, "effective-50h", NULL, NULL, &row, &found), CF_OK);
    assert_true(found && row.id == id);
    cf_db_close(db);
}

/* Whether `column` of `table` leads an index (or is its INTEGER PRIMARY
 * KEY), so a lookup by it is not a scan of the table. */
static int column_leads_an_index(sqlite3 *raw, const char *table, const char *column)
{
    char sql[256];
    sqlite3_stmt *st = NULL;
    int found = 0;
    snprintf(sql, sizeof sql, "SELECT name, pk, type FROM pragma_table_info('%s')", table);
    assert_int_equal(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    int n_pk = 0, col_pk = 0, col_integer = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        n_pk += sqlite3_column_int(st, 1) > 0;
        if (strcmp((const char *)sqlite3_column_text(st, 0), column) == 0) {
            col_pk = sqlite3_column_int(st, 1);
            col_integer = strcmp((const char *)sqlite3_column_text(st, 2), "INTEGER") == 0;
        }
    }
    sqlite3_finalize(st);
    if (n_pk == 1 && col_pk == 1 && col_integer)
        return 1; /* the rowid */
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pragma_index_list('%s') l, pragma_index_info(l.name) i "
             "WHERE i.seqno = 0 AND i.name = '%s'",
             table, column);
    assert_int_equal(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    found = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return found;
}

/* Every foreign key's child column leads an index: deleting a parent row
 * (history prune) looks its children up instead of scanning their table
 * once per deleted row (measurements.recommendation_id had none: pruning
 * 8,000 recommendations with 8,000 measurements took 11 s, quadratic). */
static void test_every_foreign_key_is_indexed(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    cf_db_close(db);
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(db_path, &raw), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(raw,
                                        "SELECT m.name, f.\"from\" FROM sqlite_master m, pragma_foreign_key_list(m.name) f "
                                        "WHERE m.type = 'table'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    int n_keys = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *table = (const char *)sqlite3_column_text(st, 0), *column = (const char *)sqlite3_column_text(st, 1);
        if (!column_leads_an_index(raw, table, column))
            fail_msg("%s.%s references another table without an index", table, column);
        n_keys++;
    }
    sqlite3_finalize(st);
    sqlite3_close(raw);
    assert_true(n_keys >= 7);
}

static void test_newer_schema_is_refused(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s.future", db_path);
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_ERR_DB);
    assert_null(db);
    assert_non_null(strstr(cf_error_message(), "schema version 99"));
}

static void test_unwritable_path(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open("/nonexistent-dir/x/history.db", &db), CF_ERR_DB);
    assert_non_null(strstr(cf_error_message(), "/nonexistent-dir/x/history.db"));
}

static void test_default_path(void **state)
{
    (void)state;
    char path[512];
    setenv("XDG_DATA_HOME", "/data/home", 1);
    assert_int_equal(cf_db_default_path(path, sizeof path), CF_OK);
    assert_string_equal(path, "/data/home/cloudfit/history.db");
    unsetenv("XDG_DATA_HOME");
    setenv("HOME", "/home/u", 1);
    assert_int_equal(cf_db_default_path(path, sizeof path), CF_OK);
    assert_string_equal(path, "/home/u/.local/share/cloudfit/history.db");
}

/* The database if there is one: none (no file), an older schema (none,
 * said), this schema (opened read-only). */
static void test_open_existing(void **state)
{
    (void)state;
    char path[300], older[512];
    cf_db *db = NULL;
    snprintf(path, sizeof path, "%s.none", db_path);
    assert_int_equal(cf_db_open_existing(path, &db, older, sizeof older), CF_OK);
    assert_null(db);
    assert_string_equal(older, "");
    assert_int_equal(access(path, F_OK), -1); /* not created */
    snprintf(path, sizeof path, "%s.old", db_path);
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "CREATE TABLE t(x); PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(cf_db_open_existing(path, &db, older, sizeof older), CF_OK);
    assert_null(db);
    assert_non_null(strstr(older, "schema"));
    assert_int_equal(cf_db_open_existing(db_path, &db, older, sizeof older), CF_OK);
    assert_non_null(db);
    assert_string_equal(older, "");
    cf_db_close(db);
}

static int n_private;
static void count_private(void *ctx, const char *path, unsigned before, unsigned after)
{
    (void)ctx;
    (void)path;
    assert_int_equal(before & 077, 044);
    assert_int_equal(after & 077, 0);
    n_private++;
}

/* A database others could read is made private, each file said once. */
static void test_make_private(void **state)
{
    (void)state;
    assert_int_equal(chmod(db_path, 0644), 0);
    n_private = 0;
    cf_db_make_private(db_path, 0, count_private, NULL);
    assert_int_equal(n_private, 1);
    struct stat st;
    assert_int_equal(stat(db_path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    cf_db_make_private(db_path, 0, count_private, NULL); /* nothing left to change */
    assert_int_equal(n_private, 1);
}

/* history migrate's "both the source and the destination": two spellings
 * of one file are one database; another file, a missing one and URLs are
 * compared by what they are. */
static void test_same_target(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK); /* the file exists */
    cf_db_close(db);
    char dotted[300], link[300], other[300];
    snprintf(dotted, sizeof dotted, "%s/./history.db", dir_template);
    snprintf(link, sizeof link, "%s/link.db", dir_template);
    snprintf(other, sizeof other, "%s/other.db", dir_template);
    assert_int_equal(symlink("history.db", link), 0);
    assert_true(cf_db_same_target(db_path, db_path));
    assert_true(cf_db_same_target(db_path, dotted));
    assert_true(cf_db_same_target(link, db_path));
    assert_false(cf_db_same_target(db_path, other)); /* not there yet */
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);
    assert_false(cf_db_same_target(db_path, other));
    assert_true(cf_db_same_target("postgresql://u@h/db", "postgresql://u@h/db"));
    assert_false(cf_db_same_target("postgresql://u@h/db", db_path));
    unlink(link);
    unlink(other);
}

/* cf_db_close_discard_new: a history this handle created and stored
 * nothing in goes, with its -wal and -shm; one that holds a row, one that
 * was there before the open, and one another connection has open stay. */
static void test_close_discard_new(void **state)
{
    (void)state;
    char path[300], side[320];
    cf_db *db = NULL, *other = NULL;
    snprintf(path, sizeof path, "%s.new", db_path);
    assert_int_equal(cf_db_open(path, &db), CF_OK); /* created, migrated, no row */
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(side, sizeof side, "%s-wal", path);
    assert_int_equal(access(side, F_OK), -1);
    snprintf(side, sizeof side, "%s-shm", path);
    assert_int_equal(access(side, F_OK), -1);
    /* a row stored: kept, still in WAL mode */
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    cf_history_record r = sample("kept");
    long long id = 0, count = 0;
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), 0);
    sqlite3 *raw = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    sqlite3_close(raw);
    unlink(path);
    /* there before the open (an empty file, then an empty history): kept */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    /* created here, but another command opened it meanwhile and writes to
     * it later: kept, and its row lands in the file */
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    assert_int_equal(cf_db_open(path, &other), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(cf_history_insert(other, &r, &id), CF_OK);
    cf_db_close(other);
    assert_int_equal(cf_db_open_readonly(path, &db), CF_OK);
    assert_int_equal(cf_history_count(db, &count), CF_OK);
    assert_int_equal(count, 1);
    cf_db_close(db);
    cf_db_close_discard_new(NULL);
    unlink(path);
}

/* cf_db_open_in_folder: the folders it made for a history go with it when
 * it is discarded empty ($XDG_DATA_HOME/cloudfit/ stayed behind after a
 * failed first recommend), or when the open fails; those that hold
 * something, or were there before, stay. */
static void test_open_in_folder(void **state)
{
    (void)state;
    char root[300], folder[340], path[380], keep[400];
    snprintf(root, sizeof root, "%s.first", db_path);
    snprintf(folder, sizeof folder, "%s/data/cloudfit", root);
    snprintf(path, sizeof path, "%s/history.db", folder);
    assert_int_equal(mkdir(root, 0700), 0);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open_in_folder(path, folder, &db), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(keep, sizeof keep, "%s/data", root);
    assert_int_equal(access(keep, F_OK), -1); /* both folders it made, not root */
    assert_int_equal(access(root, F_OK), 0);
    /* a row stored: all kept */
    assert_int_equal(cf_db_open_in_folder(path, folder, &db), CF_OK);
    cf_history_record r = sample("kept");
    long long id = 0;
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    /* made by another: kept; a folder that holds something else: kept */
    assert_int_equal(cf_db_open_in_folder(path, folder, &db), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(folder, F_OK), 0);
    assert_int_equal(rmdir(folder), 0);
    snprintf(keep, sizeof keep, "%s/data/other", root);
    assert_int_equal(cf_db_open_in_folder(path, folder, &db), CF_OK);
    assert_int_equal(mkdir(keep, 0700), 0);
    cf_db_close_discard_new(db);
    assert_int_equal(access(folder, F_OK), -1);
    assert_int_equal(access(keep, F_OK), 0);
    assert_int_equal(rmdir(keep), 0);
    snprintf(keep, sizeof keep, "%s/data", root);
    assert_int_equal(rmdir(keep), 0);
    /* an open that fails (the history's name is a folder): the folders it made go */
    assert_int_not_equal(cf_db_open_in_folder(folder, folder, &db), CF_OK);
    assert_null(db);
    assert_int_equal(access(keep, F_OK), -1);
    /* "new/../old/cloudfit" with "old" there, empty: "old" stays (it was
     * removed, and "new" left); "a/./b//cloudfit": all three go */
    char old[340], dotted[360], made_new[340];
    snprintf(old, sizeof old, "%s/old", root);
    snprintf(made_new, sizeof made_new, "%s/new", root);
    snprintf(folder, sizeof folder, "%s/new/../old/cloudfit", root);
    snprintf(path, sizeof path, "%s/history.db", folder);
    assert_int_equal(mkdir(old, 0700), 0);
    assert_int_equal(cf_db_open_in_folder(path, folder, &db), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access(folder, F_OK), -1);
    assert_int_equal(access(old, F_OK), 0);
    assert_int_equal(rmdir(old), 0);
    rmdir(made_new); /* behind the "..": not found walking up the name, left */
    snprintf(dotted, sizeof dotted, "%s/a/./b//cloudfit", root);
    snprintf(path, sizeof path, "%s/history.db", dotted);
    assert_int_equal(cf_db_open_in_folder(path, dotted, &db), CF_OK);
    cf_db_close_discard_new(db);
    snprintf(keep, sizeof keep, "%s/a", root);
    assert_int_equal(access(keep, F_OK), -1);
    assert_int_equal(rmdir(root), 0);
}

/* Another first command discarding the history it made (cf_db_remove_unused:
 * its write lock held, the file unlinked, then its folder) while this one
 * is between its open and its first lock: this open starts again on what
 * the path names now, makes the file (and folder) again, and its row lands
 * in the file at the path. It failed with "attempt to write a readonly
 * database", or stored into the removed file (2 of 100 rounds of a failing
 * and a succeeding first recommend). */
static void removed_while_opening(int in_folder)
{
    char folder[300], path[340];
    snprintf(folder, sizeof folder, "%s.race%d", db_path, in_folder);
    snprintf(path, sizeof path, "%s/history.db", folder);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open_in_folder(path, folder, &db), CF_OK); /* the other's history, migrated, no row */
    cf_db_close(db);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the other command, discarding it */
        sqlite3 *h = NULL;
        int ok = sqlite3_open(path, &h) == SQLITE_OK &&
                 sqlite3_exec(h, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) == SQLITE_OK &&
                 sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK;
        if (write(ready[1], ok ? "y" : "n", 1) != 1 || !ok)
            _exit(1);
        struct timespec wait = {0, 300 * 1000 * 1000};
        nanosleep(&wait, NULL); /* this process is opening it meanwhile, waiting for the lock */
        unlink(path);
        if (in_folder)
            rmdir(folder);
        sqlite3_close(h);
        _exit(0);
    }
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    close(ready[0]);
    close(ready[1]);
    cf_status st = in_folder ? cf_db_open_in_folder(path, folder, &db) : cf_db_open(path, &db);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(status, 0);
    assert_int_equal(st, CF_OK);
    cf_history_record r = sample("after the other's discard");
    long long id = 0, count = 0;
    assert_int_equal(cf_history_insert(db, &r, &id), CF_OK);
    cf_db_close_discard_new(db);
    assert_int_equal(cf_db_open_readonly(path, &db), CF_OK);
    assert_int_equal(cf_history_count(db, &count), CF_OK);
    assert_int_equal(count, 1);
    cf_db_close(db);
    unlink(path);
    rmdir(folder);
}

static void test_history_removed_while_opening_is_opened_again(void **state)
{
    (void)state;
    removed_while_opening(0);
    removed_while_opening(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_migrate_insert),
        cmocka_unit_test(test_hold_commits_or_rolls_back),
        cmocka_unit_test(test_hostile_strings_are_data),
        cmocka_unit_test(test_source_hash_lineage),
        cmocka_unit_test(test_every_foreign_key_is_indexed),
        cmocka_unit_test(test_newer_schema_is_refused),
        cmocka_unit_test(test_unwritable_path),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_open_existing),
        cmocka_unit_test(test_make_private),
        cmocka_unit_test(test_same_target),
        cmocka_unit_test(test_close_discard_new),
        cmocka_unit_test(test_open_in_folder),
        cmocka_unit_test(test_history_removed_while_opening_is_opened_again),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
