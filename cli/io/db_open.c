#include "io/db_open.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"
#include "commands.h"
#include "log.h"

cf_status cf_cli_db_path(const cf_cli_options *o, char *path, size_t n)
{
    if (o->db_path && cf_db_check_target(o->db_path, "db") != CF_OK)
        return CF_ERR_USAGE;
    if (o->db_path) {
        if ((size_t)snprintf(path, n, "%s", o->db_path) >= n)
            return cf_error_set(CF_ERR_DB, "history database path is too long");
        return CF_OK;
    }
    return cf_db_default_path(path, n);
}

/* The database's target (path or URL) and what may be shown of it. */
static cf_status locate(const cf_cli_options *o, char *target, size_t tn, char *shown, size_t sn)
{
    cf_status st = cf_cli_db_path(o, target, tn);
    if (st == CF_OK)
        cf_db_redact(target, shown, sn);
    return st;
}

static cf_status missing(const char *shown, const char *why)
{
    cf_error_set(CF_ERR_INVALID, "no history database at '%s': %s", shown, why);
    cf_error_hint("run 'cloudfit recommend' first, or pass the database with --db PATH (or a postgresql:// URL)");
    return CF_ERR_INVALID;
}

/* A command that does not create a history (history prune, record) given a
 * file without one: bad input, as on PostgreSQL (exit 3), never given
 * cloudfit's tables. */
static cf_status no_history(const char *shown)
{
    cf_error_clear();
    cf_error_set(CF_ERR_INVALID, "database '%s' holds no cloudfit history (schema version 0)", shown);
    cf_error_hint("this command works on an existing history and creates none: give the history's own path with "
                  "--db");
    return CF_ERR_INVALID;
}

cf_status cf_cli_db_open_readonly(const cf_cli_options *o, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    char target[2048];
    cf_status st = locate(o, target, sizeof target, path, n);
    if (st != CF_OK)
        return st;
    const char *why = cf_db_absent(target);
    if (why)
        return missing(path, why);
    return cf_db_open_readonly(target, out);
}

cf_status cf_cli_db_open_existing(const cf_cli_options *o, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    char target[2048], older[1024];
    cf_status st = locate(o, target, sizeof target, path, n);
    if (st != CF_OK) {
        if (o->db_path)
            return st;
        cf_error_clear(); /* no HOME: nothing stored anywhere */
        path[0] = '\0';
        return CF_OK;
    }
    if ((st = cf_db_open_existing(target, out, older, sizeof older)) != CF_OK || !older[0])
        return st;
    /* what it holds is only consulted here: go on without it, say so (once) */
    static int said;
    if (!said++) {
        cf_log_warning("%s; its cached profiles and price snapshots are not used", older);
        cf_log_hint("upgrade it once with a command that writes (e.g. cloudfit recommend without --no-history, "
                    "or prices update)");
    }
    return CF_OK;
}

static void said_private(void *ctx, const char *path, unsigned before, unsigned after)
{
    (void)ctx;
    cf_log_warning("made '%s' private: mode %04o, was %04o (others could read the history)", path, after, before);
}

cf_status cf_cli_db_open(const cf_cli_options *o, int create, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    char target[2048];
    cf_status st = locate(o, target, sizeof target, path, n);
    if (st != CF_OK)
        return st;
    if (!create) {
        /* a database that holds no cloudfit history is refused, not given
         * cloudfit's tables (history prune on a PostgreSQL database without
         * them created all twelve and exited 0) */
        cf_db *probe = NULL;
        const char *why = cf_db_absent(target);
        if (why)
            return missing(path, why);
        if ((st = cf_db_open_readonly(target, &probe)) != CF_OK && cf_db_open_failed_schema_version() == 0)
            return no_history(path); /* an SQLite file cloudfit never wrote: version 0 is not an older history */
        if (st != CF_OK && !cf_db_open_failed_on_older_schema())
            return st;
        cf_db_close(probe);
        cf_error_clear();
    }
    if (cf_db_is_postgresql(target))
        return cf_db_open(target, out); /* the server's database must exist; its tables are created */
    /* the default location's folder is cloudfit's; a --db folder is the user's */
    cf_db_make_private(target, !o->db_path, said_private, NULL);
    if (create && !o->db_path) {
        char dir[1024];
        cf_dirname(target, dir, sizeof dir);
        return cf_db_open_in_folder(target, dir, out); /* made on first use, removed with a history left empty */
    }
    return cf_db_open(target, out);
}

/* Whether the SQLite database `target` can be opened for writing or made
 * where it is: CF_OK, or CF_ERR_DB with the message its open would give. */
static cf_status check_db_writable(const cf_cli_options *o, const char *target, const char *shown)
{
    struct stat st;
    if (stat(target, &st) == 0) {
        if (S_ISREG(st.st_mode) && access(target, W_OK) != 0) {
            int e = errno;
            cf_error_set(CF_ERR_DB, "cannot write '%s': %s", shown, strerror(e));
            cf_error_hint("the database file is not writable by this user; nothing was run (use --db PATH for a "
                          "writable place)");
            return CF_ERR_DB;
        }
        return CF_OK; /* not a file: the open says what it is */
    }
    int e = errno;
    char dir[2048];
    cf_dirname(target, dir, sizeof dir);
    /* the default location's missing folders are made: the first one there must take them */
    while (e == ENOENT && !o->db_path && stat(dir, &st) != 0 && errno == ENOENT && strcmp(dir, "/") != 0 &&
           strcmp(dir, ".") != 0) {
        char up[2048];
        cf_dirname(dir, up, sizeof up);
        snprintf(dir, sizeof dir, "%s", up);
    }
    if (e == ENOENT && stat(dir, &st) != 0)
        e = errno;
    else if (e == ENOENT && !S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if (e == ENOENT && access(dir, W_OK | X_OK) != 0)
        e = errno;
    else if (e == ENOENT)
        return CF_OK;
    cf_error_set(CF_ERR_DB, "cannot create database '%s': %s%s%s%s", shown, strerror(e), strcmp(dir, ".") ? " ('" : "",
                 strcmp(dir, ".") ? dir : "", strcmp(dir, ".") ? "')" : "");
    cf_error_hint("the history's folder cannot be made or written; nothing was run (use --db PATH for a writable "
                  "place)");
    return CF_ERR_DB;
}

int cf_cli_check_before_run(const cf_cli_options *o, int store_history, const char *const *outputs, size_t n_outputs)
{
    for (size_t i = 0; i < n_outputs; i++) {
        if (!outputs[i] || strcmp(outputs[i], "-") == 0)
            continue;
        cf_staged_file probe;
        if (cf_file_stage(outputs[i], "", 0, &probe) != CF_OK)
            return cf_report_error();
        cf_file_discard(&probe);
    }
    if (!store_history)
        return 0;
    char target[2048], shown[1024];
    if (locate(o, target, sizeof target, shown, sizeof shown) != CF_OK)
        return cf_report_error();
    if (!cf_db_is_postgresql(target) && check_db_writable(o, target, shown) != CF_OK)
        return cf_report_error();
    return 0;
}

int cf_cli_check_more_outputs(const cf_cli_options *o, char **positional, int n_positional, const cf_spec *spec,
                              const cf_path_role *more, size_t n_more, const char *more_hint)
{
    cf_path_role inputs[16 + CF_SPEC_MAX_INPUT_FILES] = {
        {"the history database", NULL, NULL}, {"--price-overrides", o->price_overrides, NULL},
        {"--compare-to", o->compare_to, NULL}, {"--calibrate", o->calibrate_dir, NULL}, {"--fit", o->fit_dir, NULL}};
    size_t n_in = 5;
    if (o->runner && strncmp(o->runner, "trace:", 6) == 0) /* search's and profile's measured step times */
        inputs[n_in++] = (cf_path_role){"the --runner trace", o->runner + 6, NULL};
    /* the files the spec names (its measurements CSVs, its data) */
    cf_spec_input_file named[CF_SPEC_MAX_INPUT_FILES];
    char labels[CF_SPEC_MAX_INPUT_FILES][sizeof named[0].key + 16];
    size_t n_named = spec ? cf_spec_input_files(spec, named, CF_SPEC_MAX_INPUT_FILES) : 0;
    for (size_t i = 0; i < n_named; i++) {
        snprintf(labels[i], sizeof labels[i], "the spec's %.*s", (int)sizeof named[i].key, named[i].key);
        inputs[n_in++] = (cf_path_role){labels[i], named[i].path, NULL};
    }
    char index[2][2048]; /* simulate reads the index.csv beside a trace whole */
    for (int i = 0; i < o->traces.n && i < 2; i++) {
        cf_dirname(o->traces.items[i], index[i], sizeof index[i] - 10);
        strcat(index[i], "/index.csv");
        inputs[n_in++] = (cf_path_role){"--trace", o->traces.items[i], NULL};
        inputs[n_in++] = (cf_path_role){"the index.csv beside --trace", index[i], o->traces.items[i]};
    }
    char db[2048];
    struct stat st;
    if (cf_cli_db_path(o, db, sizeof db) == CF_OK && !cf_db_is_postgresql(db))
        inputs[0].path = db;
    cf_error_clear();
    for (int i = 0; i < n_positional && n_in < sizeof inputs / sizeof *inputs; i++)
        if (stat(positional[i], &st) == 0 && S_ISREG(st.st_mode)) /* the spec, the measurements CSV */
            inputs[n_in++] = (cf_path_role){"the input", positional[i], NULL};
    cf_path_role outputs[5 + CF_CLI_MORE_OUTPUTS_MAX] = {
        {"option '--out-file'", o->out_file, NULL}, {"option '--report'", o->report_path, NULL},
        {"option '--plot'", o->plot_path, NULL}, {"option '--csv'", o->csv_path, NULL},
        {"option '--rows'", o->rows_path, NULL}};
    size_t n_out = 5;
    if (cf_outputs_spare_inputs(outputs, n_out, inputs, n_in) != CF_OK)
        return cf_report_error();
    /* the options' own clashes are found first: one found now is a `more` output's */
    for (size_t i = 0; i < n_more && n_out < sizeof outputs / sizeof *outputs; i++)
        outputs[n_out++] = more[i];
    if (cf_outputs_spare_inputs(outputs, n_out, inputs, n_in) != CF_OK) {
        if (more_hint)
            cf_error_hint("%s", more_hint);
        return cf_report_error();
    }
    return 0;
}

int cf_cli_check_outputs(const cf_cli_options *o, char **positional, int n_positional)
{
    return cf_cli_check_more_outputs(o, positional, n_positional, NULL, NULL, 0, NULL);
}
