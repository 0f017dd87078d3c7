/* Fitting text to a terminal's width: lines broken at spaces, with the
 * continuation indented. Widths count UTF-8 characters (one column each:
 * the symbols cloudfit prints, × – ✔ µ, are narrow) and skip ANSI colour
 * escapes (ESC [ ... letter). */
#ifndef CLOUDFIT_COMMON_TEXT_WRAP_H
#define CLOUDFIT_COMMON_TEXT_WRAP_H
#include <stddef.h>

#include "cloudfit/common/buf.h"

/* Columns the n bytes of `s` take on a terminal. */
int cf_text_width(const char *s, size_t n);

/* Appends one line (n bytes, no newline) to `out`, broken at spaces into
 * lines of at most `width` columns, each continuation starting with
 * `indent` spaces; a word wider than a line is cut. Every piece ends with
 * "\n". width <= 0: the line as it is. */
void cf_text_wrap_line(const char *line, size_t n, int width, int indent, cf_buf *out);

/* Every line of `text` through cf_text_wrap_line, the continuation indented
 * like the line ("  - item" continues under "item"). width <= 0: copied.
 * A text without a final newline gets none. */
void cf_text_wrap(const char *text, int width, cf_buf *out);

/* The first `max_width` columns of `s` as a new cell in `out` (size n),
 * ending in "…" when it had to be cut. */
void cf_text_cut(const char *s, int max_width, char *out, size_t n);

#endif
