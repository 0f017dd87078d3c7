/* Showing text that came from input (a CSV field, a probe's error message,
 * a URL) without letting it act on a terminal: control characters (C0,
 * DEL and the C1 range U+0080-U+009F) become visible escapes (\n, \t, \r,
 * \e, \xNN, \u0085), so an escape sequence in a file can never retitle a
 * window, move the cursor or fake a line of output. */
#ifndef CLOUDFIT_COMMON_ESCAPE_H
#define CLOUDFIT_COMMON_ESCAPE_H
#include <stddef.h>

#include "cloudfit/common/buf.h"

/* 1 when `text` has a character that cf_escape_controls would change. */
int cf_has_controls(const char *text);
/* Appends `text` to `out` with control characters escaped. */
void cf_escape_controls(const char *text, cf_buf *out);
/* The same into a fixed buffer (truncated, always NUL-terminated). */
void cf_escape_into(const char *text, char *out, size_t n);

#endif
