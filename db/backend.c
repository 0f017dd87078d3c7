/* The db module's front door (cloudfit/db.h): which backend a name means,
 * its display form, and the calls every backend answers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/common/proc.h"
#include "cloudfit/db.h"
#include "db_internal.h"

int cf_db_is_postgresql(const char *target)
{
    return target && (strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0);
}

int cf_db_same_target(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    if (strcmp(a, b) == 0)
        return 1;
    if (cf_db_is_postgresql(a) || cf_db_is_postgresql(b))
        return 0; /* a URL names a server's database: only its spelling is known here */
    /* Two spellings of one file (./h.db, its absolute path, a symlink, a
     * hard link) are one device and inode; a file not there yet is no
     * other file. */
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A value meant for libpq: key = value, or a scheme:/ that is not one
 * of the two URL prefixes (cloudfit/db.h). */
static int meant_for_libpq(const char *v)
{
    /* libpq's connection keywords (a file may be called a=b.db) */
    static const char *const keywords[] = {"host", "hostaddr", "port", "dbname", "user", "password", "passfile",
                                           "service", "sslmode", "options", "application_name", "connect_timeout",
                                           "target_session_attrs", "require_auth", "channel_binding"};
    const char *p = v + strspn(v, " \t");
    size_t word = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
    const char *after = p + word;
    after += strspn(after, " \t");
    for (size_t i = 0; word > 0 && *after == '=' && i < sizeof keywords / sizeof *keywords; i++)
        if (strlen(keywords[i]) == word && strncmp(p, keywords[i], word) == 0)
            return 1;
    size_t scheme = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
    return scheme > 0 && strncmp(v + scheme, ":/", 2) == 0 && !cf_db_is_postgresql(v);
}

cf_status cf_db_check_target(const char *target, const char *option)
{
    if (!target || !meant_for_libpq(target))
        return CF_OK;
    cf_error_set(CF_ERR_USAGE, "option '--%s': takes a file name or a URL starting postgresql:// or postgres://, not a %s",
                 option, strchr(target, '=') && !strstr(target, ":/") ? "key=value connection string" : "URL of another form");
    cf_error_hint("e.g. --%s postgresql://ci@db.example/cloudfit (the password from ~/.pgpass, PGPASSFILE or a "
                  "PGSERVICE entry), or --%s history.db (a file so named: ./NAME)",
                  option, option);
    return CF_ERR_USAGE;
}

/* Appends src[0..len) to out (capacity n, used *k), always terminated. */
static void put(char *out, size_t n, size_t *k, const char *src, size_t len)
{
    for (size_t i = 0; i < len && *k + 1 < n; i++)
        out[(*k)++] = src[i];
    out[*k < n ? *k : n - 1] = '\0';
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int cf_db_url_is_password_key(const char *key, size_t len)
{
    /* libpq percent-decodes a parameter's name as well as its value:
     * pass%77ord= and %70assword= are password= (they were shown) */
    static const char want[] = "password";
    size_t k = 0;
    for (size_t i = 0; i < len; i++, k++) {
        char c = key[i];
        if (c == '%' && i + 2 < len && hex_digit(key[i + 1]) >= 0 && hex_digit(key[i + 2]) >= 0) {
            c = (char)(hex_digit(key[i + 1]) * 16 + hex_digit(key[i + 2]));
            i += 2;
        }
        if (k >= sizeof want - 1 || c != want[k])
            return 0;
    }
    return k == sizeof want - 1;
}

/* cf_db_redact (mask "***") and cf_db_shareable (mask NULL: the password
 * and its key dropped) of a postgresql:// URL; `target` is one. */
static void url_without_password(const char *target, char *out, size_t n, const char *mask);

void cf_db_redact(const char *target, char *out, size_t n)
{
    if (n == 0)
        return;
    out[0] = '\0';
    if (target && !cf_db_is_postgresql(target) && meant_for_libpq(target)) {
        /* refused (cf_db_check_target), but shown by config show: a
         * key=value string's password=VALUE, another spelling's user:PW@ */
        size_t k = 0;
        for (const char *p = target; *p;) {
            const char *pw = strstr(p, "password");
            const char *at = strchr(p, '@');
            const char *colon = at ? memchr(p, ':', (size_t)(at - p)) : NULL;
            while (colon && colon[1] == '/') /* the scheme's ':' of "scheme:/" */
                colon = memchr(colon + 1, ':', (size_t)(at - colon - 1));
            if (colon && (!pw || colon < pw)) {
                put(out, n, &k, p, (size_t)(colon - p));
                put(out, n, &k, ":***", 4);
                p = at;
                continue;
            }
            if (!pw) {
                put(out, n, &k, p, strlen(p));
                break;
            }
            const char *eq = pw + 8 + strspn(pw + 8, " \t");
            if (*eq != '=') {
                put(out, n, &k, p, (size_t)(pw + 8 - p));
                p = pw + 8;
                continue;
            }
            put(out, n, &k, p, (size_t)(eq + 1 - p));
            put(out, n, &k, "***", 3);
            const char *v = eq + 1 + strspn(eq + 1, " \t");
            if (*v == '\'') {
                const char *end = strchr(v + 1, '\'');
                p = end ? end + 1 : v + strlen(v);
            } else {
                p = v + strcspn(v, " \t");
            }
        }
        return;
    }
    if (!cf_db_is_postgresql(target)) {
        snprintf(out, n, "%s", target ? target : "");
        return;
    }
    url_without_password(target, out, n, "***");
}

void cf_db_shareable(const char *target, char *out, size_t n)
{
    if (n == 0)
        return;
    if (target && cf_db_is_postgresql(target)) {
        out[0] = '\0';
        url_without_password(target, out, n, NULL);
    } else {
        cf_db_redact(target, out, n);
    }
}

static void url_without_password(const char *target, char *out, size_t n, const char *mask)
{
    size_t k = 0;
    const char *p = strstr(target, "://") + 3;
    put(out, n, &k, target, (size_t)(p - target));
    /* user:password@ — libpq reads credentials up to the first '@' before
     * the first '/' (its URI parser does the same look-ahead). */
    const char *q = p;
    while (*q && *q != '@' && *q != '/')
        q++;
    if (*q == '@') {
        const char *colon = memchr(p, ':', (size_t)(q - p));
        if (colon) {
            put(out, n, &k, p, (size_t)(colon - p));
            if (mask) {
                put(out, n, &k, ":", 1);
                put(out, n, &k, mask, strlen(mask));
            }
        } else {
            put(out, n, &k, p, (size_t)(q - p));
        }
        p = q; /* from the '@' on */
    }
    /* host, port, path, then the parameters with any password= value hidden */
    const char *query = strchr(p, '?');
    put(out, n, &k, p, query ? (size_t)(query - p) : strlen(p));
    if (!query)
        return;
    p = query;
    int first = 1; /* no parameter written yet: the next one opens with '?' */
    while (*p) {
        const char *end = strchr(p + 1, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (eq && cf_db_url_is_password_key(p + 1, (size_t)(eq - p - 1))) {
            if (mask) {
                put(out, n, &k, first ? "?" : "&", 1);
                put(out, n, &k, p + 1, (size_t)(eq - p));
                put(out, n, &k, mask, strlen(mask));
                first = 0;
            }
        } else {
            put(out, n, &k, first ? "?" : "&", 1);
            put(out, n, &k, p + 1, len - 1);
            first = 0;
        }
        p += len;
    }
}

cf_status cf_db_open(const char *target, cf_db **out)
{
    return cf_db_is_postgresql(target) ? cf_db_postgres_open(target, 0, out) : cf_db_sqlite_open(target, 0, out);
}

static _Thread_local int older_schema, failed_version = -1;

int cf_db_open_failed_on_older_schema(void) { return older_schema; }

int cf_db_open_failed_schema_version(void) { return failed_version; }

cf_status cf_db_open_readonly(const char *target, cf_db **out)
{
    older_schema = 0;
    failed_version = -1;
    return cf_db_is_postgresql(target) ? cf_db_postgres_open(target, 1, out) : cf_db_sqlite_open(target, 1, out);
}

void cf_db_close(cf_db *db)
{
    if (!db)
        return;
    if (db->held) /* a hold never released: nothing of it is kept */
        cf_db_release(db, 0);
    /* after a commit, SQLite's close checkpoints the log into the file (a
     * large history: tens of seconds): the run is stored, so the stop
     * signals' grace alarm waits for it as for the commit (common/proc.h) */
    int stored = !db->readonly && cf_proc_run_stored();
    if (stored)
        cf_proc_commit_begin();
    db->driver->close(db);
    if (stored)
        cf_proc_commit_end(1);
    for (size_t i = 0; i < sizeof db->pg_secret / sizeof *db->pg_secret; i++)
        free(db->pg_secret[i]);
    free(db);
}

void cf_db_close_discard_new(cf_db *db)
{
    char path[sizeof db->path], made[sizeof db->made_dir], dir[sizeof db->path];
    int created = db && db->created;
    if (created) {
        snprintf(path, sizeof path, "%s", db->path);
        snprintf(made, sizeof made, "%s", db->made_dir);
    }
    cf_db_close(db);
    if (created) {
        cf_db_remove_unused(path);
        /* the folders made for it: "$XDG_DATA_HOME/cloudfit/" stayed, empty */
        cf_dirname(path, dir, sizeof dir);
        if (made[0])
            cf_rmdir_made(dir, made);
    }
}

cf_status cf_db_open_in_folder(const char *target, const char *folder, cf_db **out)
{
    char made[sizeof ((cf_db *)0)->made_dir];
    *out = NULL;
    cf_status st;
    /* Another first command that failed removes the folders it made once
     * they are empty: between this one's mkdir (they were there) and its
     * file, or in the middle of the mkdir. Then they are made again. */
    for (int tries = 0;; tries++) {
        struct stat sb;
        st = cf_mkdir_private_made(folder, made, sizeof made);
        if (st == CF_OK)
            st = cf_db_open(target, out);
        if (st == CF_OK)
            break;
        if (made[0])
            cf_rmdir_made(folder, made);
        if (tries == 8 || stat(folder, &sb) == 0 || errno != ENOENT)
            return st;
        cf_error_clear();
    }
    if ((*out)->created)
        snprintf((*out)->made_dir, sizeof (*out)->made_dir, "%s", made);
    return CF_OK;
}

int cf_db_schema_version(cf_db *db) { return db->driver->schema_version(db); }

const char *cf_db_name(const cf_db *db) { return db->path; }

const char *cf_db_backend(const cf_db *db) { return db->driver->name; }

cf_status cf_db_new_uid(char out[33])
{
    unsigned char bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t r = getrandom(bytes + got, sizeof bytes - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return cf_error_set(CF_ERR_INTERNAL, "cannot read the system's random source for a row id");
        got += (size_t)r;
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    return CF_OK;
}

cf_status cf_db_schema_newer(cf_db *db, int version)
{
    cf_error_set(CF_ERR_DB, "database '%s' has schema version %d, newer than this cloudfit knows (%d)", db->path,
                 version, cf_db_migration_count);
    cf_error_hint("upgrade cloudfit, or use another database with --db");
    return CF_ERR_DB;
}

cf_status cf_db_schema_unreadable(cf_db *db, int version)
{
    older_schema = version >= 0 && version < cf_db_migration_count;
    failed_version = version;
    if (version == 0) { /* an SQLite file cloudfit never wrote, or an empty one: the path given is not a
                           * history (bad input, exit 3, as record and prune refuse it; not a failing database) */
        cf_error_set(CF_ERR_INVALID, "database '%s' holds no cloudfit history (schema version 0)", db->path);
        cf_error_hint("a read-only command never changes the database: give the history's own path with --db, or "
                      "start one there with a command that writes (e.g. cloudfit recommend)");
        return CF_ERR_INVALID;
    }
    cf_error_set(CF_ERR_DB, "database '%s' has schema version %d; this cloudfit reads version %d", db->path, version,
                 cf_db_migration_count);
    if (version < cf_db_migration_count)
        cf_error_hint("a read-only command never changes the database: upgrade it once with a command that "
                      "writes (e.g. cloudfit recommend, or prices update)");
    else
        cf_error_hint("upgrade cloudfit, or use another database with --db");
    return CF_ERR_DB;
}
