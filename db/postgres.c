/* The PostgreSQL backend of the storage interface (db/db_internal.h),
 * through libpq: a team's shared history, chosen by a postgresql:// URL.
 *
 * The same migrations as SQLite (their types mapped, db/postgres_sql.c),
 * applied in one transaction under an advisory lock so two machines
 * opening a new database at once cannot both apply one; the schema
 * version lives in the table cloudfit_schema. Writers do not wait for each
 * other (row locks, MVCC); each write is one transaction, so a writer
 * killed halfway leaves nothing (the server rolls it back). Waiting for a
 * lock is bounded by CLOUDFIT_DB_LOCK_TIMEOUT_S (lock_timeout), a
 * connection by PGCONNECT_TIMEOUT or 10 s; a stop signal ends a connection
 * attempt at once and cancels the query in flight, giving the server
 * CANCEL_GRACE_S to answer before the connection is given up. A query
 * asked to stream (cf_db_stream: history list) hands its rows over as they
 * arrive (libpq's single-row mode), not as one result held whole. The
 * password — from the URL, PGPASSFILE or a PGSERVICE entry — never reaches
 * a message: the URL is shown redacted and every server or libpq message
 * is scrubbed of it. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cloudfit/common/proc.h"
#include "db_internal.h"
#include "libpq_api.h"
#include "postgres_sql.h"

/* pg_advisory_xact_lock key of the migrations ("cloudfit" in ASCII). */
#define MIGRATION_LOCK_KEY "7164066432489808244"
#define INT8_OID 20u
#define FLOAT8_OID 701u
/* Seconds the server gets to answer after a stop signal cancelled its
 * query, before the connection is given up (the server rolls the
 * transaction back when it notices): a frozen server or a partitioned
 * network answers never, and a stop must still end the command. */
#define CANCEL_GRACE_S 2.0
/* libpq, loaded by cf_db_postgres_open before any other function here runs. */
static const cf_libpq_api *pq;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define N_SECRETS (sizeof ((cf_db *)0)->pg_secret / sizeof *((cf_db *)0)->pg_secret)

/* ---- secrets and errors ---------------------------------------------------- */

static void add_secret(cf_db *db, const char *text, size_t len)
{
    if (!text || len == 0)
        return;
    for (size_t i = 0; i < N_SECRETS; i++) {
        if (db->pg_secret[i] && strlen(db->pg_secret[i]) == len && memcmp(db->pg_secret[i], text, len) == 0)
            return;
        if (!db->pg_secret[i]) {
            db->pg_secret[i] = strndup(text, len);
            return;
        }
    }
}

/* The password as written in the URL (user:PASSWORD@ or password=...),
 * before libpq decodes it: what a message quoting the URL would show. */
static void add_url_secrets(cf_db *db, const char *url)
{
    const char *p = strstr(url, "://") + 3, *q = p;
    while (*q && *q != '@' && *q != '/')
        q++;
    if (*q == '@') {
        const char *colon = memchr(p, ':', (size_t)(q - p));
        if (colon)
            add_secret(db, colon + 1, (size_t)(q - colon - 1));
    }
    /* every password parameter, however its name is percent-encoded */
    const char *query = strchr(url, '?');
    for (const char *param = query; param && *param; param = strchr(param + 1, '&')) {
        size_t len = strcspn(param + 1, "&");
        const char *eq = memchr(param + 1, '=', len);
        if (eq && cf_db_url_is_password_key(param + 1, (size_t)(eq - param - 1)))
            add_secret(db, eq + 1, len - (size_t)(eq - param));
    }
}

/* Copies `in` to out with every secret replaced by "***", on one line
 * (libpq's lines joined by "; ", its trailing newline removed). */
static void scrub(const cf_db *db, const char *in, char *out, size_t n)
{
    size_t k = 0;
    while (*in && k + 1 < n) {
        size_t hit = 0;
        for (size_t i = 0; i < N_SECRETS && !hit; i++)
            if (db->pg_secret[i] && strncmp(in, db->pg_secret[i], strlen(db->pg_secret[i])) == 0)
                hit = strlen(db->pg_secret[i]);
        if (hit) {
            for (const char *r = "***"; *r && k + 1 < n; r++)
                out[k++] = *r;
            in += hit;
        } else if (*in == '\n') {
            in++;
            while (*in == ' ' || *in == '\t' || *in == '\n')
                in++;
            for (const char *r = "; "; *in && *r && k + 1 < n; r++)
                out[k++] = *r;
        } else {
            out[k++] = *in++;
        }
    }
    while (k > 0 && (out[k - 1] == '\n' || out[k - 1] == ' '))
        k--;
    out[k] = '\0';
}

/* Keeps the failure of `res` (or of the connection when res is NULL). */
static void remember(cf_db *db, const PGresult *res)
{
    /* the server's primary message alone: its context (LINE 1: …) quotes our SQL */
    const char *msg = res ? pq->resultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (!msg || !*msg)
        msg = db->pg ? pq->errorMessage(db->pg) : "out of memory";
    scrub(db, msg && *msg ? msg : "the server closed the connection", db->pg_error, sizeof db->pg_error);
    const char *state = res ? pq->resultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    snprintf(db->pg_sqlstate, sizeof db->pg_sqlstate, "%s", state ? state : "");
}

static int state_is(const cf_db *db, const char *prefix)
{
    return strncmp(db->pg_sqlstate, prefix, strlen(prefix)) == 0;
}

static cf_status pg_error(cf_db *db, const char *what)
{
    if (cf_interrupted())
        return cf_interrupt_check(); /* the query was cancelled by a stop signal */
    if (state_is(db, "55P03")) {
        cf_error_set(CF_ERR_DB, "%s '%s': the database is locked: another session has held a lock for more than %g s",
                     what, db->path, cf_db_lock_timeout_s());
        cf_error_hint("another cloudfit is writing to it; try again when it is done, or raise "
                      "CLOUDFIT_DB_LOCK_TIMEOUT_S");
        return CF_ERR_DB;
    }
    cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, db->pg_error);
    if (!db->pg || pq->status(db->pg) != CONNECTION_OK || state_is(db, "08"))
        cf_error_hint("check that the server runs and the URL's host, port, user and database, and where the password "
                      "comes from (PGPASSFILE, ~/.pgpass or a PGSERVICE entry; never a committed file); nothing was "
                      "written");
    else if (state_is(db, "28"))
        cf_error_hint("check the user and its password (PGPASSFILE, ~/.pgpass, a PGSERVICE entry or the URL)");
    else if (state_is(db, "3D000"))
        cf_error_hint("create the database first (createdb NAME); cloudfit creates its own tables in it");
    else if (state_is(db, "42501"))
        cf_error_hint("the user needs the right to create tables in the schema (PostgreSQL 15 and later: GRANT CREATE "
                      "ON SCHEMA public TO the user) and to read and write cloudfit's tables");
    else if (state_is(db, "25006"))
        cf_error_hint("a read-only command never writes; the server or the user is read-only for the others");
    else if (state_is(db, "53"))
        cf_error_hint("the server is out of disk or memory: nothing was written; the history is as it was");
    return CF_ERR_DB;
}

/* ---- running a query --------------------------------------------------------- */

/* Sends the cancel request on its own thread: PQcancel connects to the
 * server and waits for it (libpq 15 has no asynchronous cancel), which
 * over a partitioned network takes minutes; the caller waits
 * CANCEL_GRACE_S for the answer either way, and the process may exit
 * with the thread still waiting. The thread owns `arg`. */
static void *send_cancel(void *arg)
{
    char why[256];
    pq->cancel(arg, why, sizeof why);
    pq->freeCancel(arg);
    return NULL;
}

/* Waits for the query in flight. A stop signal cancels it on the server
 * (the result then is an error, and pg_error reports the interruption);
 * a server that has not answered CANCEL_GRACE_S later is given up: -1,
 * and the connection is left busy, so nothing else is sent on it (a
 * ROLLBACK is refused at once; closing it makes the server roll back). */
static int wait_idle(cf_db *db)
{
    double cancelled_at = -1;
    while (pq->isBusy(db->pg)) {
        int stop_fd = cancelled_at < 0 ? cf_interrupt_fd() : -1;
        struct pollfd fds[2] = {{pq->socket(db->pg), POLLIN, 0}, {stop_fd, POLLIN, 0}};
        if (poll(fds, stop_fd >= 0 ? 2 : 1, cancelled_at < 0 ? 1000 : 100) < 0 && errno != EINTR)
            return -1;
        if (cancelled_at < 0 && cf_interrupted()) {
            PGcancel *cancel = pq->getCancel(db->pg);
            pthread_t thread;
            if (cancel && pthread_create(&thread, NULL, send_cancel, cancel) == 0)
                pthread_detach(thread);
            else if (cancel)
                send_cancel(cancel);
            cancelled_at = mono_s();
        } else if (cancelled_at >= 0 && mono_s() - cancelled_at > CANCEL_GRACE_S) {
            return -1; /* pg_error reports the interruption */
        }
        if (!pq->consumeInput(db->pg))
            return -1;
    }
    return 0;
}

/* All results of the query sent: the first failed one, else the last.
 * NULL when the connection was lost (remember(db, NULL) explains). */
static PGresult *collect(cf_db *db)
{
    PGresult *keep = NULL;
    for (;;) {
        if (wait_idle(db) < 0)
            break;
        PGresult *r = pq->getResult(db->pg);
        if (!r)
            break;
        ExecStatusType kept = keep ? pq->resultStatus(keep) : PGRES_COMMAND_OK;
        if (keep && kept != PGRES_COMMAND_OK && kept != PGRES_TUPLES_OK) {
            pq->clear(r);
        } else {
            pq->clear(keep);
            keep = r;
        }
    }
    return keep;
}

static int result_ok(const PGresult *r)
{
    ExecStatusType s = r ? pq->resultStatus(r) : PGRES_FATAL_ERROR;
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

/* One or more statements without parameters; *out gets the last result
 * when asked for (caller clears). */
static cf_status run_simple(cf_db *db, const char *sql, const char *what, PGresult **out)
{
    PGresult *r = pq->sendQuery(db->pg, sql) ? collect(db) : NULL;
    if (!result_ok(r)) {
        remember(db, r);
        pq->clear(r);
        return pg_error(db, what);
    }
    if (out)
        *out = r;
    else
        pq->clear(r);
    return CF_OK;
}

static cf_status pg_exec(cf_db *db, const char *sql, const char *what) { return run_simple(db, sql, what, NULL); }

static cf_status pg_begin(cf_db *db) { return pg_exec(db, "BEGIN", "cannot start a transaction on"); }

static cf_status pg_commit(cf_db *db)
{
    PGresult *r = NULL;
    cf_status st = run_simple(db, "COMMIT", "cannot commit to", &r);
    /* COMMIT of a transaction that failed answers ROLLBACK, not an error. */
    if (st == CF_OK && strcmp(pq->cmdStatus(r), "COMMIT") != 0) {
        snprintf(db->pg_error, sizeof db->pg_error, "the server rolled the transaction back");
        db->pg_sqlstate[0] = '\0';
        st = pg_error(db, "cannot commit to");
    }
    pq->clear(r);
    return st;
}

static void pg_rollback(cf_db *db)
{
    if (pq->status(db->pg) == CONNECTION_OK)
        pq->clear(pq->sendQuery(db->pg, "ROLLBACK") ? collect(db) : NULL);
}

/* ---- statements -------------------------------------------------------------- */

static cf_status pg_prepare(cf_db *db, const char *sql, cf_db_stmt **out)
{
    *out = NULL;
    cf_db_stmt *s = calloc(1, sizeof *s);
    if (!s)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    s->db = db;
    s->pg_sql = cf_pg_translate_query(sql, &s->n_params);
    if (s->pg_sql && s->n_params > 0) {
        s->pg_values = calloc((size_t)s->n_params, sizeof *s->pg_values);
        s->pg_types = calloc((size_t)s->n_params, sizeof *s->pg_types);
    }
    if (!s->pg_sql || (s->n_params > 0 && (!s->pg_values || !s->pg_types))) {
        free(s->pg_sql);
        free(s->pg_values);
        free(s->pg_types);
        free(s);
        snprintf(db->pg_error, sizeof db->pg_error, "out of memory");
        return CF_ERR_NOMEM;
    }
    *out = s;
    return CF_OK;
}

static void set_param(cf_db_stmt *s, int index, char *value, unsigned int type)
{
    if (index < 1 || index > s->n_params) {
        free(value);
        return;
    }
    free(s->pg_values[index - 1]);
    s->pg_values[index - 1] = value;
    s->pg_types[index - 1] = type;
}

/* Text parameters go untyped: the server infers the column's type, as
 * SQLite's affinity does. */
static void pg_bind_text(cf_db_stmt *s, int i, const char *text, size_t len) { set_param(s, i, strndup(text, len), 0); }

static void pg_bind_int64(cf_db_stmt *s, int i, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    set_param(s, i, strdup(buf), INT8_OID);
}

static void pg_bind_double(cf_db_stmt *s, int i, double v)
{
    char buf[40];
    if (v == v && v - v != 0) /* infinite */
        snprintf(buf, sizeof buf, "%s", v > 0 ? "Infinity" : "-Infinity");
    else
        snprintf(buf, sizeof buf, "%.17g", v);
    set_param(s, i, strdup(buf), FLOAT8_OID);
}

/* A NULL number is typed: in INSERT … SELECT ?3 an untyped NULL would be
 * read as text and refused by a double precision column. */
static void pg_bind_null(cf_db_stmt *s, int i, int is_number) { set_param(s, i, NULL, is_number ? FLOAT8_OID : 0); }

/* The results left of a streamed query, read and dropped (one row at a
 * time: memory stays flat), so the connection serves the next query; a
 * stop signal cancels the query as any wait does. */
static void drain(cf_db_stmt *s)
{
    PGresult *r;
    s->pg_streaming = 0;
    while (wait_idle(s->db) == 0 && (r = pq->getResult(s->db->pg)) != NULL)
        pq->clear(r);
}

/* The next row of a streamed query (libpq's single-row mode): each comes
 * as a result of its own, then one without rows that ends the query, or
 * an error (after the rows already handed over: the caller has them). */
static int next_streamed(cf_db_stmt *s)
{
    cf_db *db = s->db;
    pq->clear(s->pg_result);
    s->pg_result = NULL;
    s->pg_rows = 0;
    s->pg_row = 0;
    PGresult *r = wait_idle(db) == 0 ? pq->getResult(db->pg) : NULL;
    ExecStatusType status = r ? pq->resultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_SINGLE_TUPLE) {
        s->pg_result = r;
        s->pg_rows = 1;
        return CF_DB_ROW;
    }
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)
        s->pg_changes = atoll(pq->cmdTuples(r));
    else
        remember(db, r);
    pq->clear(r);
    if (r)
        drain(s); /* the end of the query after its last result */
    s->pg_streaming = 0; /* without a result the connection is lost, or left busy (wait_idle gave up) */
    return status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK ? CF_DB_DONE : CF_DB_FAILED;
}

static int pg_step(cf_db_stmt *s)
{
    cf_db *db = s->db;
    if (!s->pg_done) {
        int ok = pq->sendQueryParams(db->pg, s->pg_sql, s->n_params, s->pg_types, (const char *const *)s->pg_values,
                                   NULL, NULL, 0);
        /* single-row mode is set right after the query is sent; refused
         * (it is not, then), the result comes whole below */
        if (ok && s->stream && pq->setSingleRowMode(db->pg)) {
            s->pg_done = 1;
            s->pg_changes = 0;
            s->pg_streaming = 1;
            return next_streamed(s);
        }
        PGresult *r = ok ? collect(db) : NULL;
        if (!result_ok(r)) {
            remember(db, r);
            pq->clear(r);
            return CF_DB_FAILED;
        }
        s->pg_result = r;
        s->pg_done = 1;
        s->pg_rows = pq->ntuples(r);
        s->pg_row = -1;
        s->pg_changes = atoll(pq->cmdTuples(r));
    }
    if (s->pg_streaming)
        return next_streamed(s);
    if (s->pg_row < s->pg_rows)
        s->pg_row++;
    return s->pg_row < s->pg_rows ? CF_DB_ROW : CF_DB_DONE;
}

static void pg_reset(cf_db_stmt *s)
{
    if (s->pg_streaming)
        drain(s);
    pq->clear(s->pg_result);
    s->pg_result = NULL;
    s->pg_done = 0;
    for (int i = 0; i < s->n_params; i++) {
        free(s->pg_values[i]);
        s->pg_values[i] = NULL;
        s->pg_types[i] = 0;
    }
}

static void pg_finalize(cf_db_stmt *s)
{
    pg_reset(s);
    free(s->pg_values);
    free(s->pg_types);
    free(s->pg_sql);
    free(s);
}

static int in_row(const cf_db_stmt *s, int col)
{
    return s->pg_result && s->pg_row >= 0 && s->pg_row < s->pg_rows && col >= 0 && col < pq->nfields(s->pg_result);
}

static int pg_column_is_null(cf_db_stmt *s, int col)
{
    return !in_row(s, col) || pq->getisnull(s->pg_result, s->pg_row, col);
}

static const char *pg_column_text(cf_db_stmt *s, int col, size_t *len)
{
    if (pg_column_is_null(s, col)) {
        *len = 0;
        return "";
    }
    *len = (size_t)pq->getlength(s->pg_result, s->pg_row, col);
    return pq->getvalue(s->pg_result, s->pg_row, col);
}

static long long pg_column_int64(cf_db_stmt *s, int col)
{
    size_t len;
    return strtoll(pg_column_text(s, col, &len), NULL, 10);
}

static double pg_column_double(cf_db_stmt *s, int col)
{
    size_t len;
    return strtod(pg_column_text(s, col, &len), NULL);
}

static long long pg_changes(cf_db_stmt *s) { return s->pg_changes; }

/* ---- schema ------------------------------------------------------------------ */

/* The version in cloudfit_schema; 0 for a database without cloudfit's
 * tables; -1 on error (remembered). */
static int pg_schema_version(cf_db *db)
{
    PGresult *r = pq->sendQuery(db->pg, "SELECT version FROM cloudfit_schema") ? collect(db) : NULL;
    int version = -1;
    if (result_ok(r) && pq->ntuples(r) > 0) {
        /* -1 is this function's error: a stored -1 (or text) is a damaged
         * table, said as such (it printed an empty reason) */
        const char *text = pq->getvalue(r, 0, 0);
        char *end = NULL;
        errno = 0;
        long v = strtol(text, &end, 10);
        if (end != text && !*end && errno == 0 && v >= 0 && v <= INT_MAX) {
            version = (int)v;
        } else {
            snprintf(db->pg_error, sizeof db->pg_error,
                     "its table cloudfit_schema holds version '%.32s', not a schema version (a damaged database)", text);
            db->pg_sqlstate[0] = '\0';
        }
    } else if (result_ok(r))
        version = 0;
    else if (r && strcmp(pq->resultErrorField(r, PG_DIAG_SQLSTATE) ? pq->resultErrorField(r, PG_DIAG_SQLSTATE) : "",
                         "42P01") == 0)
        version = 0; /* undefined_table: nothing of cloudfit's yet */
    else
        remember(db, r);
    pq->clear(r);
    return version;
}

/* Applies the pending migrations in one transaction (PostgreSQL's DDL is
 * transactional) under an advisory lock: a second migrator waits, then
 * finds nothing left to do. An up-to-date database takes no lock. */
static cf_status pg_migrate(cf_db *db)
{
    int version = pg_schema_version(db);
    if (version < 0)
        return pg_error(db, "cannot read the schema version of");
    if (version == cf_db_migration_count)
        return CF_OK;
    if (version > cf_db_migration_count)
        return cf_db_schema_newer(db, version);
    cf_status st = pg_exec(db,
                           "BEGIN; SELECT pg_advisory_xact_lock(" MIGRATION_LOCK_KEY ");"
                           " CREATE TABLE IF NOT EXISTS cloudfit_schema (version INTEGER NOT NULL);"
                           " INSERT INTO cloudfit_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM cloudfit_schema);",
                           "cannot lock database");
    if (st == CF_OK && (version = pg_schema_version(db)) < 0)
        st = pg_error(db, "cannot read the schema version of");
    if (st == CF_OK && version > cf_db_migration_count)
        st = cf_db_schema_newer(db, version);
    for (; st == CF_OK && version < cf_db_migration_count; version++) {
        char *sql = cf_pg_translate_schema(cf_db_migrations[version]);
        st = sql ? pg_exec(db, sql, "cannot migrate database") : cf_error_set(CF_ERR_NOMEM, "out of memory");
        free(sql);
    }
    if (st == CF_OK) {
        char bump[80];
        snprintf(bump, sizeof bump, "UPDATE cloudfit_schema SET version = %d", cf_db_migration_count);
        st = pg_exec(db, bump, "cannot migrate database");
    }
    if (st == CF_OK)
        st = pg_commit(db);
    if (st != CF_OK)
        pg_rollback(db);
    return st;
}

static cf_status check_readable(cf_db *db)
{
    int version = pg_schema_version(db);
    if (version < 0)
        return pg_error(db, "cannot read");
    if (version == 0) {
        cf_error_set(CF_ERR_INVALID, "no cloudfit history in '%s' yet", db->path);
        cf_error_hint("a command that writes (cloudfit recommend, or history migrate --to) creates its tables");
        return CF_ERR_INVALID;
    }
    return version == cf_db_migration_count ? CF_OK : cf_db_schema_unreadable(db, version);
}

/* ---- connecting -------------------------------------------------------------- */

static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* "relation … already exists, skipping" and the like: not the user's business */
}

static void pg_close(cf_db *db)
{
    pq->finish(db->pg);
    db->pg = NULL;
}

/* The connection's connect_timeout as libpq reads it (the URL's, a
 * service entry's, else the default given: PGCONNECT_TIMEOUT or 10):
 * seconds; 0 for none (0 or less), at least 2, as libpq applies it. */
static double connect_timeout_s(PGconn *conn)
{
    double limit = 10;
    PQconninfoOption *opts = pq->conninfo(conn);
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
        if (strcmp(o->keyword, "connect_timeout") == 0 && o->val && *o->val) {
            long v = strtol(o->val, NULL, 10);
            limit = v <= 0 ? 0 : v < 2 ? 2 : (double)v;
        }
    }
    pq->conninfoFree(opts);
    return limit;
}

/* Connects without blocking (PQconnectStartParams, then PQconnectPoll
 * whenever the socket is ready), watching for a stop signal: libpq's
 * blocking connect heard none until it gave up (PGCONNECT_TIMEOUT later;
 * never with PGCONNECT_TIMEOUT=0) against a server that accepts and never
 * answers (a hung server, a half-open firewall). The timeout runs from
 * each new socket (libpq tries the URL's hosts and addresses in turn) and
 * ends the whole attempt. */
static cf_status pg_connect(cf_db *db, const char *const *keys, const char *const *values)
{
    db->pg = pq->connectStartParams(keys, values, 1);
    if (!db->pg)
        return cf_error_set(CF_ERR_NOMEM, "out of memory connecting to '%s'", db->path);
    double limit = connect_timeout_s(db->pg), started = mono_s();
    int sock = -1;
    PostgresPollingStatusType state = PGRES_POLLING_WRITING; /* as libpq's own loop starts */
    if (pq->status(db->pg) == CONNECTION_BAD)
        state = PGRES_POLLING_FAILED;
    while (state != PGRES_POLLING_OK) {
        if (state == PGRES_POLLING_FAILED) {
            remember(db, NULL);
            return pg_error(db, "cannot connect to database");
        }
        if (pq->socket(db->pg) < 0) { /* none yet to wait on */
            state = pq->connectPoll(db->pg);
            continue;
        }
        if (pq->socket(db->pg) != sock) { /* another host or address: its own time */
            sock = pq->socket(db->pg);
            started = mono_s();
        }
        int wait_ms = 1000;
        if (limit > 0) {
            double left = started + limit - mono_s();
            if (left <= 0) {
                snprintf(db->pg_error, sizeof db->pg_error, "timeout expired: no answer in %g s (PGCONNECT_TIMEOUT)",
                         limit);
                db->pg_sqlstate[0] = '\0';
                return pg_error(db, "cannot connect to database");
            }
            if (left * 1000 < wait_ms)
                wait_ms = (int)(left * 1000) + 1;
        }
        struct pollfd fds[2] = {{sock, state == PGRES_POLLING_READING ? POLLIN : POLLOUT, 0},
                                {cf_interrupt_fd(), POLLIN, 0}};
        int ready = poll(fds, fds[1].fd >= 0 ? 2 : 1, wait_ms);
        if (ready < 0 && errno != EINTR) {
            snprintf(db->pg_error, sizeof db->pg_error, "cannot wait for the server: %s", strerror(errno));
            db->pg_sqlstate[0] = '\0';
            return pg_error(db, "cannot connect to database");
        }
        if (cf_interrupted())
            return cf_interrupt_check();
        if (ready > 0 && fds[0].revents)
            state = pq->connectPoll(db->pg);
    }
    return CF_OK;
}

cf_status cf_db_postgres_open(const char *url, int readonly, cf_db **out)
{
    *out = NULL;
    if (!pq && !(pq = cf_libpq()))
        return cf_error_status();
    cf_db *db = calloc(1, sizeof *db);
    if (!db)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    db->driver = &cf_db_postgres_driver;
    db->readonly = readonly;
    cf_db_redact(url, db->path, sizeof db->path);
    add_url_secrets(db, url);
    PQconninfoOption *opts = pq->conninfoParse(url, NULL);
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val)
            add_secret(db, o->val, strlen(o->val));
    pq->conninfoFree(opts);
    /* Earlier keywords are defaults the URL (expanded from dbname)
     * overrides; later ones override the URL. The client encoding is
     * pinned: every text cloudfit handles is UTF-8, and under another one
     * (PGCLIENTENCODING, a role's or database's default) the server
     * converted what was written (a branch 'résumé' stored as
     * 'rÃ©sumÃ©', so another runner found no baseline on it) and refused
     * to send what the encoding lacks ('模型': the history unreadable). */
    const char *timeout = getenv("PGCONNECT_TIMEOUT");
    const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", "client_encoding", NULL};
    const char *values[] = {timeout && *timeout ? timeout : "10", "cloudfit", url, "UTF8", NULL};
    cf_status st = pg_connect(db, keys, values);
    if (st == CF_OK) {
        const char *used = pq->pass(db->pg); /* perhaps from PGPASSFILE or a service entry */
        add_secret(db, used, used ? strlen(used) : 0);
        pq->setNoticeProcessor(db->pg, ignore_notice, NULL);
        char session[320];
        double wait_ms = cf_db_lock_timeout_s() * 1000;
        /* lock_timeout 0 would mean "wait for ever": the shortest wait
         * instead. The session's settings that change what is read and
         * written are set here, whatever PGOPTIONS, a role or a database
         * says: client_encoding again (the keyword above covers the
         * startup), extra_float_digits = 3 (exact doubles on every
         * server version: with 0 every double came back with 15 digits,
         * so the same history read differently from SQLite and between
         * runners), and read committed as the default isolation: each
         * statement sees what committed before it, which the migrations
         * (the version read again once the advisory lock is held) and the
         * writers rely on. Under a database's 'repeatable read' the second
         * of two first writers read the version from before the first's
         * commit and applied its migrations again ("column already
         * exists", exit 1). Reads that need one snapshot ask for it. */
        snprintf(session, sizeof session,
                 "SET lock_timeout = %.0f; SET client_encoding = 'UTF8'; SET extra_float_digits = 3;"
                 " SET default_transaction_isolation = 'read committed';%s",
                 wait_ms < 1 ? 1 : wait_ms, readonly ? " SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY;" : "");
        st = pg_exec(db, session, "cannot configure database");
    }
    if (st == CF_OK)
        st = readonly ? check_readable(db) : pg_migrate(db);
    if (st != CF_OK) {
        cf_db_close(db);
        return st;
    }
    *out = db;
    return CF_OK;
}

const cf_db_driver cf_db_postgres_driver = {
    .name = "postgresql",
    .close = pg_close,
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .schema_version = pg_schema_version,
    .prepare = pg_prepare,
    .bind_text = pg_bind_text,
    .bind_int64 = pg_bind_int64,
    .bind_double = pg_bind_double,
    .bind_null = pg_bind_null,
    .step = pg_step,
    .reset = pg_reset,
    .finalize = pg_finalize,
    .column_is_null = pg_column_is_null,
    .column_text = pg_column_text,
    .column_int64 = pg_column_int64,
    .column_double = pg_column_double,
    .changes = pg_changes,
    .error = pg_error,
};
