#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/common/proc.h"
#include "cloudfit/db/history.h"
#include "db_internal.h"
#include "cloudfit/common/env_settings.h"
#include "cloudfit/common/number.h"

/* How long a command waits for another process's write lock
 * (CLOUDFIT_DB_LOCK_TIMEOUT_S, 0 to 3600; default 30). */
static double lock_timeout_s(void)
{
    double v = 30;
    cf_env_setting("CLOUDFIT_DB_LOCK_TIMEOUT_S", &v);
    return v;
}

double cf_db_lock_timeout_s(void) { return lock_timeout_s(); }

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Turns SQLite's answer into a message that says what happened to the
 * user's data and what to do. `sys_errno`: the operating system's reason
 * behind it (sqlite3_system_errno), 0 when none: a descriptor limit or a
 * full disk is said as such whatever SQLite's code (both came as "unable
 * to open database file" with the hint to check the permissions). */
static cf_status db_failure(cf_db *db, int code, int sys_errno, const char *what, const char *detail)
{
    int primary = code & 0xff;
    if ((primary == SQLITE_BUSY || primary == SQLITE_INTERRUPT) && cf_interrupted())
        return cf_interrupt_check(); /* the wait was cut short by a stop signal */
    if (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR || primary == SQLITE_FULL) {
        if (sys_errno == EMFILE || sys_errno == ENFILE) {
            cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, detail);
            cf_error_hint("the limit of open files is reached: raise it (ulimit -n); nothing was written");
            return CF_ERR_DB;
        }
        if (sys_errno == ENOSPC || sys_errno == EDQUOT)
            primary = SQLITE_FULL;
    }
    switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        /* What was measured, never the limit alone: the wait is timed on
         * the clock (db->waited_s), whatever SQLite's retries did. */
        cf_error_set(CF_ERR_DB, "%s '%s': the database is locked: another process held its write lock for the "
                     "%.1f s this command waited (CLOUDFIT_DB_LOCK_TIMEOUT_S: %g s)", what, db->path, db->waited_s,
                     lock_timeout_s());
        cf_error_hint("another cloudfit (or sqlite3) is writing to it; try again when it is done, or raise "
                      "CLOUDFIT_DB_LOCK_TIMEOUT_S");
        break;
    case SQLITE_FULL:
        cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, detail);
        cf_error_hint("the disk is full: nothing was written and the database is as it was; free some space "
                      "or use --db on another disk");
        break;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM: {
        /* on a read-only file system SQLite cannot make its -wal and -shm:
         * it said "unable to open database file (No such file or
         * directory)" for a file that is there */
        char folder[sizeof db->path];
        struct statvfs fs;
        cf_dirname(db->path, folder, sizeof folder);
        if (statvfs(folder, &fs) == 0 && (fs.f_flag & ST_RDONLY))
            cf_error_set(CF_ERR_DB, "%s '%s': its folder is on a read-only file system (SQLite keeps its -wal "
                         "and -shm files beside the database)", what, db->path);
        else
            cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, detail);
        struct stat st;
        if (stat(folder, &st) != 0 && errno == ENOENT) /* not a permission: there is no folder to write in */
            cf_error_hint("its folder '%s' does not exist; cloudfit creates only its default folder: create it "
                          "(mkdir -p '%s') or use --db PATH for another place; nothing was written (recommend and "
                          "search also run with --no-history)", folder, folder);
        else
            cf_error_hint("the database file or its folder is not writable by this user; nothing was written "
                          "(use --db PATH for a writable place; recommend and search also run with --no-history)");
        break;
    }
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        cf_error_set(CF_ERR_DB, "database '%s' is damaged (%s): %s", db->path, what, detail);
        cf_error_hint("cloudfit never recreates a database over your data: move the file aside (or recover "
                      "what is left with: sqlite3 '%s' .recover | sqlite3 new.db) and run again", db->path);
        break;
    case SQLITE_IOERR:
        cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, detail);
        cf_error_hint("the disk reported an error; if it is full or read-only, nothing was written");
        break;
    default:
        cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, detail);
        break;
    }
    return CF_ERR_DB;
}

/* SQLite's message, with the operating system's reason for an I/O error
 * ("disk I/O error" alone does not say the disk is full). */
static void detail_of(cf_db *db, const char *message, char *out, size_t n)
{
    int code = sqlite3_extended_errcode(db->handle) & 0xff;
    int sys_errno = sqlite3_system_errno(db->handle);
    if ((code == SQLITE_IOERR || code == SQLITE_FULL || code == SQLITE_CANTOPEN) && sys_errno > 0)
        snprintf(out, n, "%s (%s)", message, strerror(sys_errno));
    else
        snprintf(out, n, "%s", message);
}

static cf_status sqlite_error(cf_db *db, const char *what)
{
    char detail[640];
    detail_of(db, sqlite3_errmsg(db->handle), detail, sizeof detail);
    return db_failure(db, sqlite3_extended_errcode(db->handle), sqlite3_system_errno(db->handle), what, detail);
}

/* A long statement (history prune's DELETE of thousands of rows) stops
 * at a stop signal: SQLITE_INTERRUPT, its transaction rolled back,
 * CF_ERR_INTERRUPTED (db_failure). It ran to the end and exited 0. */
static int on_progress(void *unused)
{
    (void)unused;
    return cf_interrupted() != 0;
}

/* Whether a statement that answered SQLITE_BUSY is tried again: while the
 * clock (not a count of SQLite's busy-handler calls) says the wait is
 * within CLOUDFIT_DB_LOCK_TIMEOUT_S, no stop signal came, and nothing of a
 * transaction is lost by it (outside one, or its COMMIT). SQLite answers
 * BUSY without calling the busy handler in a few cases, e.g. while another
 * process opens the WAL index after a writer was killed: a healthy writer
 * then failed within milliseconds "after 60 s". */
static int retry_busy(cf_db *db, int rc, double started_s, int commit)
{
    db->waited_s = mono_s() - started_s;
    if ((rc & 0xff) != SQLITE_BUSY || cf_interrupted() || db->waited_s >= lock_timeout_s())
        return 0;
    if (!commit && !sqlite3_get_autocommit(db->handle))
        return 0;
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
    return 1;
}

static cf_status sqlite_exec(cf_db *db, const char *sql, const char *what)
{
    char *err = NULL;
    int rc;
    double started_s = mono_s();
    while ((rc = sqlite3_exec(db->handle, sql, NULL, NULL, &err)) != SQLITE_OK &&
           retry_busy(db, rc, started_s, strcmp(sql, "COMMIT") == 0)) {
        sqlite3_free(err);
        err = NULL;
    }
    if (rc != SQLITE_OK) {
        char detail[640];
        detail_of(db, err ? err : sqlite3_errstr(rc), detail, sizeof detail);
        sqlite3_free(err);
        return db_failure(db, sqlite3_extended_errcode(db->handle), sqlite3_system_errno(db->handle), what, detail);
    }
    return CF_OK;
}

/* One writer at a time: the write lock is taken at BEGIN, so a writer
 * waits (on_busy) before it has read anything. */
static cf_status sqlite_begin(cf_db *db) { return sqlite_exec(db, "BEGIN IMMEDIATE", "cannot lock database"); }
static cf_status sqlite_commit(cf_db *db) { return sqlite_exec(db, "COMMIT", "cannot commit to"); }
static void sqlite_rollback(cf_db *db) { sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL); }

static int sqlite_schema_version(cf_db *db)
{
    int version = -1, rc;
    double started_s = mono_s();
    do {
        sqlite3_stmt *stmt = NULL;
        rc = sqlite3_prepare_v2(db->handle, "PRAGMA user_version", -1, &stmt, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW)
            version = sqlite3_column_int(stmt, 0);
        sqlite3_finalize(stmt);
    } while (version < 0 && retry_busy(db, rc, started_s, 0));
    return version;
}

/* Applies every pending migration in one IMMEDIATE transaction: two
 * processes opening a new database at once cannot both apply one, and a
 * failure (a full disk) leaves the database at the version it had (each
 * step committed alone left a half-upgraded one, version 1 or 3 of 7,
 * under a hint that said "the database is as it was"). The version is
 * read first without a lock: an up-to-date database (the usual case)
 * never waits for a writer here. */
static cf_status migrate(cf_db *db)
{
    int current = cf_db_schema_version(db);
    if (current < 0)
        return cf_db_error(db, "cannot read the schema version of");
    if (current == cf_db_migration_count)
        return CF_OK;
    cf_status st = cf_db_exec(db, "BEGIN IMMEDIATE", "cannot lock database");
    if (st != CF_OK)
        return st;
    int version = cf_db_schema_version(db);
    if (version < 0)
        st = cf_db_error(db, "cannot read schema version of");
    else if (version > cf_db_migration_count)
        st = cf_db_schema_newer(db, version);
    for (; st == CF_OK && version < cf_db_migration_count; version++) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", version + 1);
        if ((st = cf_db_exec(db, cf_db_migrations[version], "cannot migrate database")) == CF_OK)
            st = cf_db_exec(db, bump, "cannot migrate database");
    }
    if (st == CF_OK)
        st = cf_db_exec(db, "COMMIT", "cannot commit migration of");
    if (st != CF_OK)
        sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
    return st;
}

/* A cheap check that the file is what its header says. Never open() the
 * database file ourselves: closing that descriptor would drop the POSIX
 * locks SQLite holds on it for this process's other connections (SQLite's
 * "how to corrupt" 2.2) — a lost-row bug seen in the concurrency test. So:
 * stat() for the kind and size, SQLite for the header. */
static cf_status check_kind(cf_db *db)
{
    struct stat st;
    if (stat(db->path, &st) == 0 && !S_ISREG(st.st_mode)) {
        cf_error_set(CF_ERR_DB, "cannot open database '%s': not a regular file", db->path);
        cf_error_hint("--db takes the path of an SQLite file");
        return CF_ERR_DB;
    }
    return CF_OK;
}

/* After opening: a file cut short (by a crash, a copy, a full disk) has
 * fewer bytes than its header's page count says; SQLite would only notice
 * when it reads the missing pages. A non-empty WAL may hold the rest.
 * Another process may be creating or writing the database meanwhile (the
 * first writer migrates it in WAL mode while others open it), so the sizes
 * are compared inside a read transaction: its snapshot's pages are in the
 * file or in the WAL, and no writer can take either away until it ends
 * (a check outside one saw a 1-page file and a 22-page count in the
 * concurrency test). */
static cf_status check_size(cf_db *db)
{
    struct stat st, ws;
    char wal[1100];
    snprintf(wal, sizeof wal, "%s-wal", db->path);
    if (stat(db->path, &st) != 0 || st.st_size == 0)
        return CF_OK; /* new: nothing to check */
    int rc;
    double started_s = mono_s();
    while ((rc = sqlite3_exec(db->handle, "BEGIN; SELECT count(*) FROM sqlite_master;", NULL, NULL, NULL)) !=
               SQLITE_OK &&
           (rc & 0xff) == SQLITE_BUSY) {
        sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
        if (!retry_busy(db, rc, started_s, 0)) {
            rc = sqlite3_exec(db->handle, "BEGIN; SELECT count(*) FROM sqlite_master;", NULL, NULL, NULL);
            break; /* the last try's error is the one reported */
        }
    }
    if (rc != SQLITE_OK) {
        /* a write open of a file this user may not write fails here first;
         * one that fails for another reason (too many open files, a full
         * disk: SQLite makes the -wal and -shm now) could not open it */
        cf_status err = cf_db_error(db, db->readonly ? "cannot read"
                                        : (rc & 0xff) == SQLITE_READONLY ? "cannot write" : "cannot open");
        sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
        return err;
    }
    sqlite3_stmt *stmt = NULL;
    long long pages = -1, page_size = -1;
    if (sqlite3_prepare_v2(db->handle, "PRAGMA page_count", -1, &stmt, NULL) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
        pages = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, "PRAGMA page_size", -1, &stmt, NULL) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
        page_size = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    int in_wal = stat(wal, &ws) == 0 && ws.st_size > 0;
    int have_size = stat(db->path, &st) == 0;
    sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
    if (pages < 0)
        return cf_db_error(db, "cannot read");
    if (!in_wal && have_size && pages > 0 && page_size > 0 && (long long)st.st_size < pages * page_size) {
        char detail[200];
        snprintf(detail, sizeof detail, "the file has %lld bytes, its header says %lld pages of %lld bytes "
                 "(truncated)", (long long)st.st_size, pages, page_size);
        return db_failure(db, SQLITE_CORRUPT, 0, "header", detail);
    }
    return CF_OK;
}

/* Creates the file with mode 0600 whatever the umask, before SQLite does
 * (its journal and WAL files then take the same mode); *created when this
 * call made it. */
static cf_status create_private(cf_db *db, int *created)
{
    *created = 0;
    int fd = open(db->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return CF_OK;
        int e = errno;
        char detail[256];
        snprintf(detail, sizeof detail, "%s", strerror(e));
        return db_failure(db, e == ENOSPC ? SQLITE_FULL : SQLITE_CANTOPEN, e, "cannot create database", detail);
    }
    fchmod(fd, 0600);
    close(fd);
    *created = 1;
    return CF_OK;
}

/* Whether the database h holds no schema at all (user_version 0, nothing
 * in sqlite_master). */
static int schema_empty(sqlite3 *h)
{
    sqlite3_stmt *q = NULL;
    int empty = 0;
    if (sqlite3_prepare_v2(h, "SELECT (SELECT user_version FROM pragma_user_version) = 0 AND NOT EXISTS "
                              "(SELECT 1 FROM sqlite_master)", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        empty = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    return empty;
}

/* A database this command created and could not set up (a full disk) is
 * removed, with its -wal and -shm: it was left empty behind. Only under
 * its write lock, taken without waiting, and only while it holds no
 * schema: another process that opened it meanwhile and is setting it up
 * holds that lock (a read saw its uncommitted schema as none, and the file
 * was removed under it). Where even the lock cannot be taken for another
 * reason (the disk is full), only a file of one header page at most with
 * an empty WAL goes (cloudfit's schema takes a page per table). */
static void remove_if_empty(const char *path)
{
    char side[sizeof ((cf_db *)0)->path + 8];
    sqlite3 *h = NULL;
    int remove = 0;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        int rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) & 0xff;
        if (rc == SQLITE_OK) {
            remove = schema_empty(h);
        } else if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
            struct stat main_st, wal_st;
            snprintf(side, sizeof side, "%s-wal", path);
            remove = stat(path, &main_st) == 0 && main_st.st_size <= 4096 &&
                     !(stat(side, &wal_st) == 0 && wal_st.st_size != 0);
        }
    }
    if (remove) /* still holding the lock, when it was taken */
        for (const char *suffix = "-wal"; suffix; suffix = strcmp(suffix, "-wal") == 0 ? "-shm" : NULL) {
            snprintf(side, sizeof side, "%s%s", path, suffix);
            unlink(side);
        }
    if (remove)
        unlink(path);
    sqlite3_close(h);
}

/* Whether h is the only connection to its database: 1 yes, 0 no, -1 not
 * known. A connection that opened a WAL database and read it keeps a
 * shared lock on the file, and leaving WAL mode needs the file's exclusive
 * lock (taken without waiting: SQLITE_BUSY while another has it open). In
 * rollback mode BEGIN EXCLUSIVE then locks the database as a whole, so
 * nobody opens it for reading meanwhile either. Where the switch fails for
 * another reason (a full disk: it checkpoints the log), it is not known. */
static int sole_connection(sqlite3 *h)
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h, "PRAGMA journal_mode=DELETE", -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    const unsigned char *mode = rc == SQLITE_ROW ? sqlite3_column_text(q, 0) : NULL;
    int sole = mode ? strcmp((const char *)mode, "delete") == 0
                    : (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED ? 0 : -1;
    sqlite3_finalize(q);
    return sole;
}

void cf_db_remove_unused(const char *path)
{
    sqlite3 *h = NULL;
    int unused = 0, sole = 0;
    /* not known (a full disk): under the write lock alone, as a database this
     * command could not fill */
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK && (sole = sole_connection(h)) != 0 &&
        sqlite3_exec(h, sole > 0 ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK) {
        sqlite3_stmt *tables = NULL;
        unused = sqlite3_prepare_v2(h, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                       "'sqlite\\_%' ESCAPE '\\'", -1, &tables, NULL) == SQLITE_OK;
        while (unused && sqlite3_step(tables) == SQLITE_ROW) {
            char sql[300];
            sqlite3_stmt *any = NULL;
            snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM \"%s\")", (const char *)sqlite3_column_text(tables, 0));
            unused = sqlite3_prepare_v2(h, sql, -1, &any, NULL) == SQLITE_OK && sqlite3_step(any) == SQLITE_ROW &&
                     sqlite3_column_int(any, 0) == 0;
            sqlite3_finalize(any);
        }
        sqlite3_finalize(tables);
    }
    if (unused) { /* still holding the lock */
        char side[sizeof ((cf_db *)0)->path + 12];
        for (const char *suffix = "-wal"; suffix;
             suffix = !strcmp(suffix, "-wal") ? "-shm" : !strcmp(suffix, "-shm") ? "-journal" : NULL) {
            snprintf(side, sizeof side, "%s%s", path, suffix);
            unlink(side);
        }
        unlink(path);
    } else if (sole > 0) { /* kept: back in the journal mode every open sets */
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_exec(h, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    }
    sqlite3_close(h);
}

/* Waiting for another process's lock: in steps of 10 ms up to the
 * timeout, measured on the clock from the first call for this lock (a
 * count of calls times 10 ms is not the time waited on a loaded machine),
 * and not at all once a stop signal arrived. */
static int on_busy(void *data, int count)
{
    cf_db *db = data;
    double now = mono_s();
    if (count == 0)
        db->busy_since_s = now;
    db->waited_s = now - db->busy_since_s;
    if (cf_interrupted() || db->waited_s >= lock_timeout_s())
        return 0;
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
    return 1;
}

/* 0 when `want` more descriptors can be opened, else the errno (EMFILE,
 * ENFILE) that says why not. SQLite opens a WAL database's three files
 * (the database, its -wal, its -shm) one by one: one descriptor short of
 * the limit it made the -wal, failed on the -shm and left the empty -wal
 * behind, which cannot be removed afterwards (another process may have
 * opened it meanwhile). Checked first, touching nothing. */
static int descriptors_short(int want)
{
    int fds[8], n = 0, e = 0, from = fcntl(STDERR_FILENO, F_GETFD) >= 0 ? STDERR_FILENO
                                     : fcntl(STDIN_FILENO, F_GETFD) >= 0 ? STDIN_FILENO : -1;
    if (from < 0)
        return 0; /* nothing to copy: SQLite will say it */
    while (n < want && n < 8) {
        int fd = fcntl(from, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            e = errno == EMFILE || errno == ENFILE ? errno : 0;
            break;
        }
        fds[n++] = fd;
    }
    while (n > 0)
        close(fds[--n]);
    return e;
}

static cf_status open_handle(cf_db *db, int flags, const char *uri_tail)
{
    int short_of = descriptors_short(3);
    if (short_of) {
        char detail[300];
        snprintf(detail, sizeof detail, "SQLite needs 3 descriptors for it, its -wal and -shm (%s)",
                 strerror(short_of));
        return db_failure(db, SQLITE_CANTOPEN, short_of, "cannot open database", detail);
    }
    char uri[1200];
    cf_buf u = CF_BUF_INIT; /* a URI: '?', '#' and '%' in the path are escaped */
    cf_buf_puts(&u, "file:");
    for (const char *p = db->path; *p; p++) {
        if (*p == '?' || *p == '#' || *p == '%')
            cf_buf_printf(&u, "%%%02X", (unsigned char)*p);
        else
            cf_buf_append(&u, p, 1);
    }
    cf_buf_puts(&u, uri_tail);
    snprintf(uri, sizeof uri, "%s", cf_buf_cstr(&u));
    cf_buf_free(&u);
    int rc = sqlite3_open_v2(uri, &db->handle, flags | SQLITE_OPEN_URI, NULL);
    if (rc != SQLITE_OK) {
        char detail[640];
        int sys_errno = db->handle ? sqlite3_system_errno(db->handle) : 0;
        if (db->handle)
            detail_of(db, sqlite3_errmsg(db->handle), detail, sizeof detail);
        else
            snprintf(detail, sizeof detail, "out of memory");
        sqlite3_close(db->handle);
        db->handle = NULL;
        return db_failure(db, rc, sys_errno, "cannot open database", detail);
    }
    sqlite3_busy_handler(db->handle, on_busy, db);
    sqlite3_progress_handler(db->handle, 1000, on_progress, NULL);
    sqlite3_extended_result_codes(db->handle, 1);
    return CF_OK;
}

/* Whether the file db->handle opened is no longer the one at db->path:
 * removed (or replaced) since. */
static int has_moved(cf_db *db)
{
    int moved = 0;
    return db->handle && sqlite3_file_control(db->handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK &&
           moved;
}

static cf_status sqlite_open_write(const char *path, cf_db **out)
{
    *out = NULL;
    cf_db *db = calloc(1, sizeof *db);
    if (!db)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    db->driver = &cf_db_sqlite_driver;
    snprintf(db->path, sizeof db->path, "%s", path);
    int created = 0;
    cf_status st;
    /* A new database another command created and is discarding
     * (cf_db_remove_unused) can be removed between this open and its first
     * lock: nothing holds it yet. Then the handle is on a file no longer
     * there (SQLite: "attempt to write a readonly database", or a row
     * stored in a removed file), and the open starts again on what the path
     * names now. Once configured, WAL's shared lock keeps the file. */
    for (int tries = 0;; tries++) {
        created = 0;
        st = check_kind(db);
        if (st == CF_OK)
            st = create_private(db, &created);
        if (st == CF_OK)
            st = open_handle(db, SQLITE_OPEN_READWRITE, "");
        if (st == CF_OK)
            st = check_size(db);
        if (st == CF_OK)
            st = cf_db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
                            "cannot configure database");
        if (st == CF_OK)
            st = migrate(db);
        struct stat gone;
        int moved = has_moved(db) || (st != CF_OK && !created && stat(db->path, &gone) != 0 && errno == ENOENT);
        if (!moved)
            break;
        sqlite3_close(db->handle);
        db->handle = NULL;
        created = 0; /* what is there now is not this open's */
        if (tries == 8) {
            if (st == CF_OK)
                st = cf_error_set(CF_ERR_DB, "cannot open database '%s': it was removed or replaced while it was "
                                  "opened, nine times", db->path);
            break;
        }
        cf_error_clear();
    }
    if (st != CF_OK) {
        sqlite3_close(db->handle);
        if (created)
            remove_if_empty(db->path);
        free(db);
        return st;
    }
    db->created = created;
    *out = db;
    return CF_OK;
}

/* Copies `from` to `to` (created 0600); 0 on success, else the errno of the
 * call that failed, saved there (a write cut short by a full disk sets none:
 * the rest is written again, and a write of nothing is ENOSPC; a later
 * close() changed errno, and the message said "No such file or directory"). */
static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, e = in < 0 ? errno : 0;
    if (!e && (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
        e = errno;
    if (!e)
        cf_proc_track_temp(to);
    char buf[65536];
    while (!e) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno != EINTR)
                e = errno;
            continue;
        }
        for (ssize_t done = 0; done < n && !e;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w > 0)
                done += w;
            else if (w == 0)
                e = ENOSPC;
            else if (errno != EINTR)
                e = errno;
        }
    }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && !e)
        e = errno;
    return e;
}

static void remove_copy(cf_db *db)
{
    if (!db->copy_dir[0])
        return;
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    char file[1100];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        snprintf(file, sizeof file, "%s/h.db%s", db->copy_dir, suffixes[i]);
        unlink(file);
        cf_proc_untrack_temp(file);
    }
    rmdir(db->copy_dir);
    db->copy_dir[0] = '\0';
}

/* A database whose write-ahead log holds committed changes but has no -shm
 * file, in a folder this user cannot write (a read-only mount, a backup):
 * SQLite cannot build the WAL index there, and reading the file alone
 * (immutable) would miss what is in the log. Both are copied to a private
 * temporary folder and read there, so the answer includes every commit;
 * the copy goes when the handle is closed. No writer can be active: it
 * would have made the -shm file. */
static cf_status open_copy(cf_db *db, const char *path)
{
    const char *tmp = getenv("TMPDIR");
    int from_env = tmp && *tmp == '/' && strlen(tmp) <= 256;
    if (!from_env)
        tmp = "/tmp";
    const char *whose = from_env ? " (TMPDIR)" : "";
    snprintf(db->copy_dir, sizeof db->copy_dir, "%s/cloudfit-db-XXXXXX", tmp);
    if (!mkdtemp(db->copy_dir)) {
        int e = errno;
        db->copy_dir[0] = '\0';
        cf_error_set(CF_ERR_DB, "cannot read '%s': its write-ahead log '%s-wal' holds changes and its folder is "
                     "read-only, and no temporary folder could be made in '%s'%s to read a copy: %s",
                     path, path, tmp, whose, strerror(e));
        cf_error_hint("point TMPDIR at a writable folder with room for a copy of the database and its -wal");
        return CF_ERR_DB;
    }
    char from[1100], to[1100];
    int e = 0;
    for (int wal = 0; wal <= 1 && !e; wal++) {
        snprintf(from, sizeof from, "%s%s", path, wal ? "-wal" : "");
        snprintf(to, sizeof to, "%s/h.db%s", db->copy_dir, wal ? "-wal" : "");
        e = copy_file(from, to);
    }
    if (e) {
        char dir[sizeof db->copy_dir];
        memcpy(dir, db->copy_dir, sizeof dir);
        remove_copy(db);
        cf_error_set(CF_ERR_DB, "cannot read '%s': its write-ahead log holds changes, its folder is read-only, "
                     "and copying it to '%s'%s to read failed: %s", path, dir, whose, strerror(e));
        if (e == ENOSPC || e == EDQUOT)
            cf_error_hint("the temporary folder is full: free some space there or point TMPDIR at another disk "
                          "(the copy was removed)");
        return CF_ERR_DB;
    }
    char saved[sizeof db->path];
    memcpy(saved, db->path, sizeof saved);
    snprintf(db->path, sizeof db->path, "%s/h.db", db->copy_dir);
    cf_status st = open_handle(db, SQLITE_OPEN_READWRITE, "");
    if (st == CF_OK)
        st = cf_db_exec(db, "PRAGMA query_only=1", "cannot open");
    memcpy(db->path, saved, sizeof saved); /* messages name the user's file */
    return st;
}

static cf_status sqlite_open_read(const char *path, cf_db **out)
{
    *out = NULL;
    cf_db *db = calloc(1, sizeof *db);
    if (!db)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    db->driver = &cf_db_sqlite_driver;
    snprintf(db->path, sizeof db->path, "%s", path);
    db->readonly = 1;
    cf_status st = check_kind(db);
    /* A read-write handle that never writes (query_only): it takes part in
     * WAL's shared-memory locking like any connection, so a reader never
     * disturbs concurrent writers.
     * A file this user cannot write (another user's history in a shared
     * folder): SQLite opens it read-only but creates -wal and -shm beside
     * it when they are missing, owned by this user and left behind, and
     * the owner's next write fails on them. With a -shm there (a writer
     * is about), a read-only handle uses it and creates nothing; without
     * one no writer is active, and the file is read the way a read-only
     * folder's is (below), touching nothing. */
    char shm[1100];
    struct stat ss;
    snprintf(shm, sizeof shm, "%s-shm", path);
    int file_writable = access(path, W_OK) == 0, shm_there = stat(shm, &ss) == 0;
    if (st == CF_OK && (file_writable || shm_there))
        st = open_handle(db, file_writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, "");
    if (st == CF_OK && (file_writable || shm_there))
        st = cf_db_exec(db, "PRAGMA query_only=1", "cannot open");
    int version = -1;
    if (st == CF_OK && ((!file_writable && !shm_there) || (version = cf_db_schema_version(db)) < 0)) {
        /* WAL needs its -shm file: in a folder this user cannot write,
         * with no writer around, read the file as it is (immutable) when
         * nothing is in the WAL, else a private copy of both (open_copy). */
        char wal[1100];
        struct stat ws;
        snprintf(wal, sizeof wal, "%s-wal", path);
        int wal_empty = stat(wal, &ws) != 0 || ws.st_size == 0;
        int code = db->handle ? sqlite3_extended_errcode(db->handle) & 0xff : SQLITE_READONLY;
        if (code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_IOERR) {
            sqlite3_close(db->handle);
            db->handle = NULL;
            cf_error_clear();
            st = wal_empty ? open_handle(db, SQLITE_OPEN_READONLY, "?mode=ro&immutable=1") : open_copy(db, path);
            if (st == CF_OK)
                version = cf_db_schema_version(db);
        }
        if (st == CF_OK && version < 0)
            st = cf_db_error(db, "cannot read");
    }
    if (st == CF_OK)
        st = check_size(db);
    if (st == CF_OK && version != cf_db_migration_count)
        st = cf_db_schema_unreadable(db, version);
    if (st != CF_OK) {
        sqlite3_close(db->handle);
        remove_copy(db);
        free(db);
        return st;
    }
    *out = db;
    return CF_OK;
}

cf_status cf_db_sqlite_open(const char *path, int readonly, cf_db **out)
{
    return readonly ? sqlite_open_read(path, out) : sqlite_open_write(path, out);
}

static void sqlite_close(cf_db *db)
{
    sqlite3_close(db->handle);
    remove_copy(db);
}

cf_status cf_db_default_path(char *out, size_t n)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    int written;
    if (xdg && *xdg == '/')
        written = snprintf(out, n, "%s/cloudfit/history.db", xdg);
    else if (home && *home)
        written = snprintf(out, n, "%s/.local/share/cloudfit/history.db", home);
    else {
        cf_error_set(CF_ERR_DB, "cannot find a place for the history database: neither XDG_DATA_HOME nor HOME is set");
        cf_error_hint("pass --db PATH or --no-history");
        return CF_ERR_DB;
    }
    if (written < 0 || (size_t)written >= n)
        return cf_error_set(CF_ERR_DB, "history database path is too long");
    return CF_OK;
}

/* ---- statements ----------------------------------------------------------- */

static cf_status sqlite_prepare(cf_db *db, const char *sql, cf_db_stmt **out)
{
    *out = NULL;
    cf_db_stmt *s = calloc(1, sizeof *s);
    if (!s)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    s->db = db;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &s->sqlite, NULL) != SQLITE_OK) {
        free(s);
        return CF_ERR_DB; /* the caller names what failed (cf_db_error) */
    }
    *out = s;
    return CF_OK;
}

static void sqlite_bind_text(cf_db_stmt *s, int i, const char *text, size_t len)
{
    sqlite3_bind_text(s->sqlite, i, text, (int)len, SQLITE_TRANSIENT);
}
static void sqlite_bind_int64(cf_db_stmt *s, int i, long long v) { sqlite3_bind_int64(s->sqlite, i, v); }
static void sqlite_bind_double(cf_db_stmt *s, int i, double v) { sqlite3_bind_double(s->sqlite, i, v); }
static void sqlite_bind_null(cf_db_stmt *s, int i, int is_number)
{
    (void)is_number;
    sqlite3_bind_null(s->sqlite, i);
}

static int sqlite_step(cf_db_stmt *s)
{
    int rc = sqlite3_step(s->sqlite);
    return rc == SQLITE_ROW ? CF_DB_ROW : rc == SQLITE_DONE ? CF_DB_DONE : CF_DB_FAILED;
}

static void sqlite_reset(cf_db_stmt *s)
{
    sqlite3_reset(s->sqlite);
    sqlite3_clear_bindings(s->sqlite);
}

static void sqlite_finalize(cf_db_stmt *s)
{
    sqlite3_finalize(s->sqlite);
    free(s);
}

static int sqlite_column_is_null(cf_db_stmt *s, int col) { return sqlite3_column_type(s->sqlite, col) == SQLITE_NULL; }
static const char *sqlite_column_text(cf_db_stmt *s, int col, size_t *len)
{
    const unsigned char *text = sqlite3_column_text(s->sqlite, col);
    *len = text ? (size_t)sqlite3_column_bytes(s->sqlite, col) : 0;
    return text ? (const char *)text : "";
}
static long long sqlite_column_int64(cf_db_stmt *s, int col) { return sqlite3_column_int64(s->sqlite, col); }
static double sqlite_column_double(cf_db_stmt *s, int col) { return sqlite3_column_double(s->sqlite, col); }
static long long sqlite_changes(cf_db_stmt *s) { return sqlite3_changes(s->db->handle); }

const cf_db_driver cf_db_sqlite_driver = {
    .name = "sqlite",
    .close = sqlite_close,
    .exec = sqlite_exec,
    .begin = sqlite_begin,
    .commit = sqlite_commit,
    .rollback = sqlite_rollback,
    .schema_version = sqlite_schema_version,
    .prepare = sqlite_prepare,
    .bind_text = sqlite_bind_text,
    .bind_int64 = sqlite_bind_int64,
    .bind_double = sqlite_bind_double,
    .bind_null = sqlite_bind_null,
    .step = sqlite_step,
    .reset = sqlite_reset,
    .finalize = sqlite_finalize,
    .column_is_null = sqlite_column_is_null,
    .column_text = sqlite_column_text,
    .column_int64 = sqlite_column_int64,
    .column_double = sqlite_column_double,
    .changes = sqlite_changes,
    .error = sqlite_error,
};
