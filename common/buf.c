#include "cloudfit/common/buf.h"
#include "cloudfit/common/escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int buf_reserve(cf_buf *buf, size_t extra)
{
    if (buf->failed)
        return 0;
    if (buf->len + extra + 1 <= buf->cap)
        return 1;
    size_t cap = buf->cap ? buf->cap : 256;
    while (cap < buf->len + extra + 1)
        cap *= 2;
    char *grown = realloc(buf->data, cap);
    if (!grown) {
        buf->failed = 1;
        return 0;
    }
    buf->data = grown;
    buf->cap = cap;
    return 1;
}

void cf_buf_append(cf_buf *buf, const char *text, size_t len)
{
    if (!buf_reserve(buf, len))
        return;
    memcpy(buf->data + buf->len, text, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
}

void cf_buf_puts(cf_buf *buf, const char *text) { cf_buf_append(buf, text, strlen(text)); }

void cf_buf_printf(cf_buf *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int needed = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (needed < 0 || !buf_reserve(buf, (size_t)needed))
        return;
    va_start(ap, fmt);
    vsnprintf(buf->data + buf->len, (size_t)needed + 1, fmt, ap);
    va_end(ap);
    buf->len += (size_t)needed;
}

int cf_utf8_width(const char *text) { return cf_text_columns(text, strlen(text)); }

void cf_buf_pad(cf_buf *buf, const char *text, int width, int right)
{
    /* Table cells often hold text from input (a CSV model name): control
     * characters are shown escaped, never sent to the terminal. */
    if (cf_has_controls(text)) {
        cf_buf shown = CF_BUF_INIT;
        cf_escape_controls(text, &shown);
        if (cf_buf_failed(&shown))
            buf->failed = 1;
        else
            cf_buf_pad(buf, cf_buf_cstr(&shown), width, right);
        cf_buf_free(&shown);
        return;
    }
    int fill = width - cf_utf8_width(text);
    if (right)
        for (int i = 0; i < fill; i++)
            cf_buf_append(buf, " ", 1);
    cf_buf_puts(buf, text);
    if (!right)
        for (int i = 0; i < fill; i++)
            cf_buf_append(buf, " ", 1);
}

const char *cf_buf_cstr(const cf_buf *buf) { return buf->data ? buf->data : ""; }
int cf_buf_failed(const cf_buf *buf) { return buf->failed; }

void cf_buf_free(cf_buf *buf)
{
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
    buf->failed = 0;
}
