/* Showing text that came from input (a CSV field, a probe's device name or
 * error message, a URL) without letting it act on a terminal: control
 * characters (C0, DEL and the C1 range U+0080-U+009F) become visible
 * escapes (\n, \t, \r, \e, \xNN, \u0085), and so does every byte that is
 * not part of well-formed UTF-8 (\xNN), so an escape sequence in a file can
 * never retitle a window, move the cursor or fake a line of output, and
 * what is shown is always valid UTF-8. The one sanitiser: messages
 * (cli/log.c), table cells (cf_buf_pad) and every result written to
 * standard output or --out-file (cli/term/output.c) go through it. */
#ifndef CLOUDFIT_COMMON_ESCAPE_H
#define CLOUDFIT_COMMON_ESCAPE_H
#include <stddef.h>

#include "cloudfit/common/buf.h"

/* The offset of the first byte of `text` that is not part of well-formed
 * UTF-8 (RFC 3629), or -1 when it all is: for input that is stored or
 * written as text (a YAML launch spec, a PostgreSQL row) and cannot be
 * escaped on the way. */
long cf_utf8_invalid_at(const char *text);
/* The length of the well-formed UTF-8 sequence at p (1 to 4; a NUL is 1),
 * 0 when p does not start one; `avail` bytes may be read. */
size_t cf_utf8_sequence_length(const char *p, size_t avail);
/* The code point of the n-byte sequence at p when it is one of the
 * invisible characters that reorder the text around them (bidirectional
 * overrides and isolates, LRM, RLM, ALM, line and paragraph separators),
 * else 0: for sinks with their own escaping (SVG, HTML). */
unsigned cf_utf8_reordering(const char *p, size_t n);
/* `text` into out[n] as text that can be stored and shown anywhere:
 * escaped as cf_escape_into when it is not all UTF-8 or holds a control or
 * reordering character (a line end in it must not make a line of a
 * table), then at most `max_bytes` bytes
 * (and n - 1) cut at a character boundary (a cut inside 'é' made
 * PostgreSQL refuse the row). */
void cf_text_fit(const char *text, size_t max_bytes, char *out, size_t n);
/* The length of the longest start of `text` of at most `max_bytes` bytes
 * that ends at a character boundary (a byte that is not part of UTF-8
 * counts as one character): the one way text from input is cut at a byte
 * count, as "%.*s" with this length. "%.40s" could end inside a character,
 * and the half character was shown as "\xc3" or refused by PostgreSQL. */
size_t cf_utf8_prefix(const char *text, size_t max_bytes);
/* `text` into out[n] whole when it has at most `max_bytes` bytes (and
 * n - 1), else cut at a character boundary and ended with "…" (counted in
 * max_bytes): a name shortened for a message or a note. Not escaped. */
void cf_text_clip(const char *text, size_t max_bytes, char *out, size_t n);
/* cf_text_fit, but a cut ends in "…" as cf_text_clip's does: a name from
 * outside shown in a table cell or a note (a baseline document's instance
 * type, a CI branch), which must say it was cut. */
void cf_text_fit_clip(const char *text, size_t max_bytes, char *out, size_t n);
/* 1 when `text` has a character that cf_escape_controls would change. */
int cf_has_controls(const char *text);
/* Terminal columns of the character at p (avail bytes readable; *len its
 * bytes): as shown, so a control character counts its escape ("\\e" 2,
 * "\\u202e" 6), a CJK character 2, a combining mark 0. */
int cf_char_columns(const char *p, size_t avail, size_t *len);
/* Columns of text[0..n) (up to a NUL) as shown: what table columns are
 * padded by (code points counted, a CJK name or an escaped branch pushed
 * the columns after it out of line). */
int cf_text_columns(const char *text, size_t n);
/* Appends `text` to `out` with control characters and bytes that are not
 * UTF-8 escaped. */
void cf_escape_controls(const char *text, cf_buf *out);
/* The same into a fixed buffer (truncated, always NUL-terminated). */
void cf_escape_into(const char *text, char *out, size_t n);

typedef enum {
    CF_ESCAPE_ALL,    /* a string: every control character escaped (\n too) */
    CF_ESCAPE_TEXT,   /* a whole text (a table, markdown): its line breaks (\n, \r\n) and tabs kept */
    CF_ESCAPE_CSV,    /* CSV: \r kept too (RFC 4180 quotes it inside a field; the data stays exact) */
    CF_ESCAPE_JSON    /* a JSON document: whitespace kept, C1 and DEL as \u00XX, a byte that
                       * is not UTF-8 as \ufffd (still valid JSON, now valid UTF-8) */
} cf_escape_mode;
/* Appends text[0..len) to `out` escaped as `mode` says; the sequences in
 * `keep` (NULL-terminated, may be NULL: e.g. the SGR colour codes the
 * table renderer itself writes) are copied as they are. */
void cf_escape_output(const char *text, size_t len, cf_escape_mode mode, const char *const *keep, cf_buf *out);

#endif
