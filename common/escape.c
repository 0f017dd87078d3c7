#include "cloudfit/common/escape.h"

#include <stdio.h>
#include <string.h>

/* Length of the control character at p (1 for C0/DEL, 2 for a UTF-8
 * encoded C1), 0 when p is not one. */
static size_t control_at(const unsigned char *p)
{
    if (*p < 0x20 || *p == 0x7f)
        return 1;
    if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return 2;
    return 0;
}

int cf_has_controls(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (control_at(p))
            return 1;
    return 0;
}

static void escape_one(const unsigned char *p, size_t n, char out[8])
{
    if (n == 2) {
        snprintf(out, 8, "\\u%04x", (unsigned)p[1]);
        return;
    }
    switch (*p) {
    case '\n': snprintf(out, 8, "\\n"); break;
    case '\t': snprintf(out, 8, "\\t"); break;
    case '\r': snprintf(out, 8, "\\r"); break;
    case 0x1b: snprintf(out, 8, "\\e"); break;
    default: snprintf(out, 8, "\\x%02x", (unsigned)*p); break;
    }
}

void cf_escape_controls(const char *text, cf_buf *out)
{
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        const unsigned char *start = p;
        size_t n = 0;
        while (*p && !(n = control_at(p)))
            p++;
        if (p > start)
            cf_buf_append(out, (const char *)start, (size_t)(p - start));
        if (!*p)
            break;
        char esc[8];
        escape_one(p, n, esc);
        cf_buf_puts(out, esc);
        p += n;
    }
}

void cf_escape_into(const char *text, char *out, size_t n)
{
    if (n == 0)
        return;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        size_t c = control_at(p);
        char esc[8];
        const char *piece = (const char *)p;
        size_t len = 1;
        if (c) {
            escape_one(p, c, esc);
            piece = esc;
            len = strlen(esc);
        }
        if (o + len >= n)
            break;
        memcpy(out + o, piece, len);
        o += len;
        p += c ? c : 1;
    }
    out[o] = '\0';
}
