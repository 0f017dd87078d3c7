/* A growable text buffer. Allocation failure is sticky: later appends are
 * ignored and cf_buf_failed() reports it, so callers check once at the end. */
#ifndef CLOUDFIT_COMMON_BUF_H
#define CLOUDFIT_COMMON_BUF_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct {
    char *data;   /* always NUL-terminated once anything was appended */
    size_t len;
    size_t cap;
    int failed;
} cf_buf;

#define CF_BUF_INIT {0, 0, 0, 0}

void cf_buf_append(cf_buf *buf, const char *text, size_t len);
void cf_buf_puts(cf_buf *buf, const char *text);
void cf_buf_printf(cf_buf *buf, const char *fmt, ...) CF_PRINTF(2, 3);
/* Appends `text` padded with spaces to `width` display columns (UTF-8 aware);
 * right-aligned when `right` is non-zero. */
void cf_buf_pad(cf_buf *buf, const char *text, int width, int right);
const char *cf_buf_cstr(const cf_buf *buf);
int cf_buf_failed(const cf_buf *buf);
void cf_buf_free(cf_buf *buf);
/* Terminal columns of a string as shown (cf_text_columns: a CJK character
 * 2, a combining mark 0, a control character its escape). */
int cf_utf8_width(const char *text);

#endif
