/* Finding and opening the history database for a command: --db (or
 * CLOUDFIT_DB, or the configuration file) naming an SQLite file or a
 * postgresql:// URL, else the default file. The `path` each function
 * fills is what may be shown: a URL's password is redacted there. */
#ifndef CLOUDFIT_CLI_DB_OPEN_H
#define CLOUDFIT_CLI_DB_OPEN_H
#include <stddef.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/db/history.h"
#include "cloudfit/spec.h"
#include "options.h"

/* The target (--db or the default), password included: never print it.
 * CF_ERR_DB when there is no default; CF_ERR_USAGE as cf_db_check_target. */
cf_status cf_cli_db_path(const cf_cli_options *o, char *path, size_t n);
/* Opens it. With `create`, missing folders and the file are created;
 * without, a missing database file is CF_ERR_INVALID ("no history database
 * at ...") and *out stays NULL. A PostgreSQL database must exist; its
 * tables are created (migrated) either way. An existing SQLite database
 * (and its -wal, -shm) readable by others is made 0600, and the default
 * location's folder 0700, with a warning (earlier versions made them 0644
 * and 0755). */
cf_status cf_cli_db_open(const cf_cli_options *o, int create, cf_db **out, char *path, size_t n);
/* Before a long run that is paid for (a profile's sweep, a search's
 * probes), what the end would find out: whether the history the run will
 * be stored in can be written or created, and each output file's folder
 * (a temporary file staged there and removed, as the end stages it).
 * Nothing is created: a missing SQLite file needs a writable folder (for
 * --db) or a first existing one that is (the default location, whose
 * folders the command makes); a PostgreSQL server is not reached. 0, or
 * the exit code with the message printed (naming the path). */
int cf_cli_check_before_run(const cf_cli_options *o, int store_history, const char *const *outputs, size_t n_outputs);
/* 0, or the usage error printed (exit 2) when an output option (--out-file,
 * --report, --plot, --csv, --rows) names an input: the history database, a
 * positional file (the spec, a CSV), --price-overrides, --compare-to,
 * the file of --runner trace:FILE, --trace, --calibrate or --fit. */
int cf_cli_check_outputs(const cf_cli_options *o, char **positional, int n_positional);
/* The same once the command has read its spec (may be NULL): the files it
 * names (cf_spec_input_files: its measurements CSVs, its data) are inputs
 * too; and with `more` outputs (at most CF_CLI_MORE_OUTPUTS_MAX) known
 * only then: recommend's launch specs, whose file names come from the
 * spec's name. A clash of one of them (with an input, or with an output
 * option) is reported with `more_hint` when it is not NULL: their names
 * are fixed, so "write the result to another file" cannot be followed. */
#define CF_CLI_MORE_OUTPUTS_MAX 8
int cf_cli_check_more_outputs(const cf_cli_options *o, char **positional, int n_positional, const cf_spec *spec,
                              const cf_path_role *more, size_t n_more, const char *more_hint);
/* Opens an existing database read-only (cf_db_open_readonly): for the
 * commands that only read (history list/show/diff). */
cf_status cf_cli_db_open_readonly(const cf_cli_options *o, cf_db **out, char *path, size_t n);
/* Opens the database read-only when there is one (the file exists, or the
 * PostgreSQL database has cloudfit's tables); CF_OK with *out NULL when
 * there is none yet (nothing stored: recommend reads no snapshot, profile
 * or baseline from it). */
cf_status cf_cli_db_open_existing(const cf_cli_options *o, cf_db **out, char *path, size_t n);

#endif
