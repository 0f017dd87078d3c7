/* JSON (common/json.c): the one reader every JSON input of cloudfit
 * goes through (the job spec, price overrides, --compare-to documents,
 * stored profiles, the exec protocol's lines, price API responses), and
 * the rounding of numbers written into documents. */
#ifndef CLOUDFIT_COMMON_JSON_H
#define CLOUDFIT_COMMON_JSON_H
#include <cjson/cJSON.h>
#include <stddef.h>
#include "cloudfit/status.h"

/* Parses `len` bytes (a leading UTF-8 BOM is skipped). A syntax error is
 * CF_ERR_INVALID "NAME:LINE:COLUMN: invalid JSON: WHAT" (1-based line and
 * column, the column in characters), a NUL byte or a byte that is not
 * UTF-8 (RFC 8259) in the text likewise. The
 * caller deletes *out. Duplicate keys are kept (see below). */
cf_status cf_json_parse(const char *text, size_t len, const char *name, cJSON **out);
/* cf_json_parse for text from a program (a probe's output lines): each
 * byte that is not UTF-8 (a driver's device name) becomes the text \xNN
 * inside its string, as it is shown, instead of an error. */
cf_status cf_json_parse_program_output(const char *text, size_t len, const char *name, cJSON **out);
/* CF_ERR_INVALID "NAME: KEY.PATH: duplicate key" for the first key that
 * appears twice in one object, anywhere in the tree. */
cf_status cf_json_check_unique_keys(const cJSON *doc, const char *name);
/* cf_json_parse, then duplicate keys refused. */
cf_status cf_json_read(const char *text, size_t len, const char *name, cJSON **out);
/* cf_json_read for a piece of a larger text that starts at a line's start
 * (one line of a JSON-lines stream): positions are "NAME:LINE:COLUMN"
 * with LINE counted from `first_line`, the piece's first line in the
 * whole ("stdin:7:27", not "stdin:7:1:27"); a message without a position
 * (a duplicate key) names "NAME:FIRST_LINE". */
cf_status cf_json_read_at(const char *text, size_t len, const char *name, long first_line, cJSON **out);
/* A file read with cf_json_read, named by its path. */
cf_status cf_json_load_file(const char *path, cJSON **out);

/* Writing: v rounded to `digits` significant digits, so documents are
 * stable and readable (0, ±inf and NaN unchanged). */
double cf_json_round(double v, int digits);
/* o[key] = v rounded to `digits` significant digits, or null when v is not
 * finite (e.g. a plan that does not finish within the replay limit). */
void cf_json_add_rounded(cJSON *o, const char *key, double v, int digits);

#endif
