/* Where a command's result goes: the one output path of every command.
 * Standard output, or --out-file written atomically (temporary file, then
 * rename). A result that cannot be written is CF_ERR_WRITE, exit 1, for
 * every command (docs/exit-codes.md), and a command that stores something
 * (the history, a profile, a snapshot) stores it only when its result was
 * written: it holds the database (cf_db_hold), stores, delivers the result
 * and releases with the delivery's outcome (cf_cli_result_release). */
#ifndef CLOUDFIT_CLI_OUTPUT_H
#define CLOUDFIT_CLI_OUTPUT_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/db.h"
#include "options.h"
#include "term/terminal.h"

/* A result on its way out: staged (sanitised; --out-file: written to a
 * temporary file), delivered (standard output written and flushed), then
 * published (--out-file renamed into place). */
typedef struct {
    cf_buf text;          /* standard output: the sanitised bytes */
    cf_staged_file file;  /* --out-file: the temporary file until published */
    int to_file;
    int delivered;
} cf_cli_result;

/* Every result passes the one sanitiser (common/escape.h) on its way out,
 * whatever the format: names, notes and messages in it may come from
 * input (a probe's device name, a CSV field, an API's region). JSON stays
 * JSON (C1 and DEL escaped, bytes that are not UTF-8 as U+FFFD); other
 * formats keep their line breaks and tabs (CSV its quoted \r too). The
 * sequences in `keep` (e.g. the table's colour codes) are copied as they
 * are. `out_file` NULL: standard output. 0 or the exit code (error printed). */
int cf_cli_result_stage_as(cf_escape_mode mode, const char *out_file, const char *text, size_t len,
                           const char *const *keep, cf_cli_result *r);
/* The same in the escape mode of --format (json, csv, else text) and to
 * --out-file when given; `o` NULL: text to standard output. */
int cf_cli_result_stage(const cf_cli_options *o, const char *text, size_t len, const char *const *keep,
                        cf_cli_result *r);
/* The same for a text built in a buffer (a failed buffer is out of memory). */
int cf_cli_result_stage_buf(const cf_cli_options *o, const cf_buf *text, cf_cli_result *r);
/* Writes a staged result to standard output (nothing for --out-file): do
 * it before committing what the command stores. 0 or the exit code. */
int cf_cli_result_deliver(cf_cli_result *r);
/* Commits (rc == 0) or rolls back what was stored on `db` since
 * cf_db_hold; returns rc, or the commit's exit code. `db` may be NULL. */
int cf_cli_result_release(cf_db *db, int rc);
/* Delivers (when not yet) and renames --out-file into place: after the
 * commit. 0 or the exit code. */
int cf_cli_result_publish(cf_cli_result *r);
void cf_cli_result_discard(cf_cli_result *r);
/* The text of a change held on `db` (cf_db_hold), when rc is 0: staged,
 * delivered, then the hold released with whether it was (rolled back
 * when rc is not 0). Frees `text`; returns rc or the exit code. */
int cf_cli_deliver_held(const cf_cli_options *o, cf_db *db, int rc, cf_buf *text);

/* A result written as it is made (history list: a history too long to
 * hold), through the same sanitiser as a staged one and, for the table on a
 * terminal, wrapped to `width` (text comes in whole lines). Standard output
 * gets each piece as it comes; --out-file is staged at the first piece and
 * published by cf_cli_stream_finish (rc 0) or removed (rc not 0), so the
 * file is all or nothing. */
typedef struct {
    const char *out_file;  /* NULL: standard output */
    cf_escape_mode mode;
    int width;
    int staged;
    cf_staged_file file;
    cf_buf text;           /* the current piece, sanitised */
} cf_cli_stream;
void cf_cli_stream_init(cf_cli_stream *s, const cf_cli_options *o, int width);
/* A piece of the result (a cf_history_sink): CF_OK, or the write's error
 * (last error set; the staged file is removed). */
cf_status cf_cli_stream_write(void *ctx, const char *text, size_t len);
/* Ends the result: rc 0, flushed and published (an empty result too);
 * else the staged file is removed. Returns rc, or the exit code of a
 * failed publish (error printed). */
int cf_cli_stream_finish(cf_cli_stream *s, int rc);

/* Stage, deliver and publish a text built in a buffer at once: for
 * commands that store nothing (a failed buffer is out of memory). 0 or the
 * exit code (error printed). */
int cf_cli_write_buf(const cf_cli_options *o, const cf_buf *text);
/* The result in the format asked for: `doc` pretty-printed for --format
 * json, else `table` (already rendered). `table` may be NULL when the
 * format is json. 0 or the exit code. */
int cf_cli_emit(const cf_cli_options *o, const cJSON *doc, const cf_buf *table);
/* `doc` as --format json prints it (pretty, one newline after) appended to
 * `out`; CF_ERR_NOMEM when it cannot be. */
cf_status cf_cli_json_text(const cJSON *doc, cf_buf *out);
/* Whether --format json was asked for. */
int cf_cli_format_is(const cf_cli_options *o, const char *format);

/* Columns the table output may take (docs/output.md "Width"): --wide: no
 * limit (0); --width N: N; a result that goes to a file or a pipe: no limit,
 * so what scripts and files get does not depend on a terminal; on a
 * terminal: its width. */
int cf_cli_output_width(const cf_cli_options *o);
/* Wraps the lines of `text` wider than `width` at spaces (width 0: as it is). */
void cf_cli_fit_text(int width, cf_buf *text);

#endif
