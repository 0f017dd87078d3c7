/* Where a command's rendered result goes: stdout, or --out-file written
 * atomically (temporary file, then rename). */
#ifndef CLOUDFIT_CLI_OUTPUT_H
#define CLOUDFIT_CLI_OUTPUT_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "options.h"
#include "term/terminal.h"

/* Every result passes the one sanitiser (common/escape.h) on its way out,
 * whatever the format: names, notes and messages in it may come from
 * input (a probe's device name, a CSV field, an API's region). JSON stays
 * JSON (C1 and DEL escaped, bytes that are not UTF-8 as U+FFFD); other
 * formats keep their line breaks and tabs (CSV its quoted \r too). cf_cli_safe_result appends the
 * sanitised text to `out` (the sequences in `keep`, e.g. the table's
 * colour codes, copied as they are); 0 or the exit code. */
int cf_cli_safe_result(const cf_cli_options *o, const char *text, size_t len, const char *const *keep, cf_buf *out);
/* Writes `len` bytes of text, sanitised. 0 or the exit code (error printed). */
int cf_cli_write_result(const cf_cli_options *o, const char *text, size_t len);
/* The result in the format asked for: `doc` pretty-printed for --format
 * json, else `table` (already rendered). `table` may be NULL when the
 * format is json. 0 or the exit code. */
int cf_cli_emit(const cf_cli_options *o, const cJSON *doc, const cf_buf *table);
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
