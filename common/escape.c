#include "cloudfit/common/escape.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 when p does not start
 * one. `avail` bytes may be read. */
static size_t utf8_length(const unsigned char *p, size_t avail)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (avail < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    return n;
}

size_t cf_utf8_sequence_length(const char *p, size_t avail)
{
    return avail ? utf8_length((const unsigned char *)p, avail) : 0;
}

long cf_utf8_invalid_at(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t avail = strlen(text);
    for (size_t i = 0; i < avail;) {
        size_t n = utf8_length(p + i, avail - i);
        if (n == 0)
            return (long)i;
        i += n;
    }
    return -1;
}

void cf_text_fit(const char *text, size_t max_bytes, char *out, size_t n)
{
    if (n == 0)
        return;
    char escaped[1024];
    /* a control or reordering character too: a CI branch or a note with a
     * line end printed a forged line into `history show` and the
     * explanation, which keep the line ends of the text they print */
    if (cf_has_controls(text)) {
        cf_escape_into(text, escaped, sizeof escaped); /* ASCII escapes and whole characters */
        text = escaped;
    }
    size_t len = cf_utf8_prefix(text, max_bytes < n - 1 ? max_bytes : n - 1);
    memcpy(out, text, len);
    out[len] = '\0';
}

size_t cf_utf8_prefix(const char *text, size_t max_bytes)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t reach = max_bytes < SIZE_MAX - 4 ? max_bytes + 4 : SIZE_MAX;
    size_t avail = 0; /* what utf8_length may read: never past the NUL, nor far past max_bytes */
    while (avail < reach && p[avail])
        avail++;
    size_t len = 0;
    while (len < avail) {
        size_t k = utf8_length(p + len, avail - len);
        if (k == 0)
            k = 1; /* a byte that is not UTF-8: a character of its own (escaped where it is shown) */
        if (len + k > max_bytes)
            break;
        len += k;
    }
    return len;
}

void cf_text_clip(const char *text, size_t max_bytes, char *out, size_t n)
{
    static const char mark[] = "…";
    const size_t mark_len = sizeof mark - 1;
    if (n == 0)
        return;
    size_t limit = max_bytes < n - 1 ? max_bytes : n - 1;
    size_t len = cf_utf8_prefix(text, limit);
    if (text[len] != '\0' && limit >= mark_len) { /* cut: room for the mark */
        len = cf_utf8_prefix(text, limit - mark_len);
        memcpy(out, text, len);
        memcpy(out + len, mark, mark_len);
        out[len + mark_len] = '\0';
        return;
    }
    memcpy(out, text, len);
    out[len] = '\0';
}

void cf_text_fit_clip(const char *text, size_t max_bytes, char *out, size_t n)
{
    char escaped[1024];
    if (cf_has_controls(text)) { /* as cf_text_fit: escaped, then cut */
        cf_escape_into(text, escaped, sizeof escaped);
        text = escaped;
    }
    cf_text_clip(text, max_bytes, out, n);
}

/* The code point of the well-formed n-byte sequence at p (n 1 to 4). */
static unsigned code_point(const unsigned char *p, size_t n)
{
    static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    unsigned cp = p[0] & lead_mask[n];
    for (size_t k = 1; k < n; k++)
        cp = cp << 6 | (p[k] & 0x3f);
    return cp;
}

/* The invisible characters that reorder the text around them
 * (Trojan Source): the bidirectional embeddings, overrides and isolates,
 * the marks LRM, RLM and ALM, and the line and paragraph separators. */
static int reorders(unsigned cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
           cp == 0x061c || cp == 0x2028 || cp == 0x2029;
}

unsigned cf_utf8_reordering(const char *p, size_t n)
{
    const unsigned char *u = (const unsigned char *)p;
    if ((n != 2 && n != 3) || utf8_length(u, n) != n)
        return 0;
    unsigned cp = code_point(u, n);
    return reorders(cp) ? cp : 0;
}

/* What is at p: 0 for a character shown as it is (*len its bytes), else
 * a control character, a character that reorders the text around it, or
 * a byte that is not UTF-8 (*len bytes to escape: 1 for C0, DEL or a
 * stray byte, 2 for a UTF-8 encoded C1, 2 or 3 for a reordering one). */
static int unsafe_at(const unsigned char *p, size_t avail, size_t *len)
{
    if (*p < 0x20 || *p == 0x7f) {
        *len = 1;
        return 1;
    }
    size_t n = utf8_length(p, avail);
    if (n == 0) {
        *len = 1;
        return 1;
    }
    *len = n;
    return (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f) || ((n == 2 || n == 3) && reorders(code_point(p, n)));
}

int cf_has_controls(const char *text)
{
    size_t avail = strlen(text), n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p += n, avail -= n)
        if (unsafe_at(p, avail, &n))
            return 1;
    return 0;
}

static void escape_one(const unsigned char *p, size_t n, char out[8])
{
    if (n >= 2) { /* C1 or a reordering character */
        snprintf(out, 8, "\\u%04x", code_point(p, n));
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

/* Columns a terminal gives code point cp: 0 for a combining mark or a
 * zero-width character, 2 for an East Asian wide or fullwidth one and
 * emoji (Unicode's EastAsianWidth W/F), else 1 (Markus Kuhn's wcwidth
 * ranges, locale-free). */
static int columns_of(unsigned cp)
{
    static const unsigned zero[][2] = {{0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd}, {0x0610, 0x061a},
                                       {0x064b, 0x065f}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x200b, 0x200d},
                                       {0x20d0, 0x20ff}, {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0xfeff, 0xfeff}};
    static const unsigned wide[][2] = {{0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec},
                                       {0x2614, 0x2615}, {0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf},
                                       {0x4e00, 0x9fff}, {0xa000, 0xa4cf}, {0xa960, 0xa97f}, {0xac00, 0xd7a3},
                                       {0xf900, 0xfaff}, {0xfe10, 0xfe19}, {0xfe30, 0xfe6f}, {0xff00, 0xff60},
                                       {0xffe0, 0xffe6}, {0x1f300, 0x1f64f}, {0x1f900, 0x1f9ff}, {0x20000, 0x3fffd}};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
        if (cp >= zero[i][0] && cp <= zero[i][1])
            return 0;
    for (size_t i = 0; i < sizeof wide / sizeof *wide; i++)
        if (cp >= wide[i][0] && cp <= wide[i][1])
            return 2;
    return 1;
}

int cf_char_columns(const char *p, size_t avail, size_t *len)
{
    const unsigned char *u = (const unsigned char *)p;
    size_t n = 0;
    if (unsafe_at(u, avail, &n)) { /* shown as its escape */
        char esc[8];
        escape_one(u, n, esc);
        *len = n;
        return (int)strlen(esc);
    }
    *len = n;
    return columns_of(code_point(u, n));
}

int cf_text_columns(const char *text, size_t n)
{
    int cols = 0;
    for (size_t i = 0, len = 0; i < n && text[i]; i += len)
        cols += cf_char_columns(text + i, n - i, &len);
    return cols;
}

void cf_escape_controls(const char *text, cf_buf *out)
{
    cf_escape_output(text, strlen(text), CF_ESCAPE_ALL, NULL, out);
}

void cf_escape_into(const char *text, char *out, size_t n)
{
    if (n == 0)
        return;
    size_t o = 0, avail = strlen(text), c = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p += c, avail -= c) {
        char esc[8];
        const char *piece = (const char *)p;
        size_t len;
        if (unsafe_at(p, avail, &c)) {
            escape_one(p, c, esc);
            piece = esc;
            len = strlen(esc);
        } else {
            len = c;
        }
        if (o + len >= n)
            break;
        memcpy(out + o, piece, len);
        o += len;
    }
    out[o] = '\0';
}

/* The entry of `keep` that text[0..avail) starts with, or NULL. */
static const char *kept_at(const char *text, size_t avail, const char *const *keep)
{
    for (const char *const *k = keep; k && *k; k++) {
        size_t n = strlen(*k);
        if (n <= avail && memcmp(text, *k, n) == 0)
            return *k;
    }
    return NULL;
}

void cf_escape_output(const char *text, size_t len, cf_escape_mode mode, const char *const *keep, cf_buf *out)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    while (p < end) {
        const unsigned char *start = p;
        size_t n = 0;
        while (p < end && !unsafe_at(p, (size_t)(end - p), &n))
            p += n;
        if (p > start)
            cf_buf_append(out, (const char *)start, (size_t)(p - start));
        if (p >= end)
            break;
        const char *k = *p == 0x1b ? kept_at((const char *)p, (size_t)(end - p), keep) : NULL;
        if (k) {
            cf_buf_puts(out, k);
            p += strlen(k);
            continue;
        }
        if (mode != CF_ESCAPE_ALL && *p == '\r' && p + 1 < end && p[1] == '\n') {
            cf_buf_append(out, "\r\n", 2); /* a CSV line end */
            n = 2;
        } else if (mode != CF_ESCAPE_ALL && (*p == '\n' || *p == '\t' || (*p == '\r' && mode == CF_ESCAPE_CSV))) {
            cf_buf_append(out, (const char *)p, 1);
        } else if (mode == CF_ESCAPE_JSON) {
            /* Inside a string (the only place JSON text holds these): the
             * same character as an escape, or U+FFFD for a byte that is
             * not UTF-8 (JSON text is UTF-8). */
            if (n >= 2 || *p < 0x80)
                cf_buf_printf(out, "\\u%04x", n >= 2 ? code_point(p, n) : (unsigned)*p);
            else
                cf_buf_puts(out, "\\ufffd");
        } else {
            char esc[8];
            escape_one(p, n, esc);
            cf_buf_puts(out, esc);
        }
        p += n;
    }
}
