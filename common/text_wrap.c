#include "cloudfit/common/text_wrap.h"
#include "cloudfit/common/escape.h"

#include <stdio.h>
#include <string.h>

/* Length of an ANSI escape at p (ESC '[' params final-letter), else 0. */
static size_t escape_len(const char *p, size_t n)
{
    if (n < 2 || p[0] != '\033' || p[1] != '[')
        return 0;
    size_t i = 2;
    while (i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == ';' || p[i] == '?'))
        i++;
    return i < n ? i + 1 : n;
}

int cf_text_width(const char *s, size_t n)
{
    int width = 0;
    for (size_t i = 0; i < n;) {
        size_t esc = escape_len(s + i, n - i);
        if (esc) {
            i += esc;
            continue;
        }
        size_t len;
        width += cf_char_columns(s + i, n - i, &len); /* a CJK character 2, a combining mark 0 */
        i += len ? len : 1;
    }
    return width;
}

/* Bytes of `s` (n bytes) that fill at most `cols` columns, at a character boundary. */
static size_t prefix_for(const char *s, size_t n, int cols)
{
    size_t i = 0;
    int used = 0;
    while (i < n) {
        size_t esc = escape_len(s + i, n - i);
        if (esc) {
            i += esc;
            continue;
        }
        size_t len;
        int w = cf_char_columns(s + i, n - i, &len);
        if (used + w > cols)
            break;
        i += len ? len : 1;
        used += w;
    }
    return i;
}

static void spaces(cf_buf *out, int n)
{
    for (int i = 0; i < n; i++)
        cf_buf_append(out, " ", 1);
}

void cf_text_wrap_line(const char *line, size_t n, int width, int indent, cf_buf *out)
{
    if (width <= 0 || cf_text_width(line, n) <= width) {
        cf_buf_append(out, line, n);
        cf_buf_puts(out, "\n");
        return;
    }
    if (indent > width / 2)
        indent = width / 2 < 2 ? 0 : 2;
    size_t lead = 0; /* the line's own leading blanks stay on its first piece */
    while (lead < n && line[lead] == ' ')
        lead++;
    cf_buf_append(out, line, lead);
    int col = (int)lead, empty = 1;
    size_t i = lead, gap = 0; /* the blanks before the next word, kept when it stays on the line */
    while (i < n) {
        size_t word_end = i;
        while (word_end < n && line[word_end] != ' ')
            word_end++;
        const char *word = line + i;
        size_t word_len = word_end - i;
        int w = cf_text_width(word, word_len);
        if (!empty && col + (int)gap + w > width) { /* next line: the blanks go */
            cf_buf_puts(out, "\n");
            spaces(out, indent);
            col = indent;
            empty = 1;
        }
        if (!empty) {
            spaces(out, (int)gap);
            col += (int)gap;
        }
        while (col + w > width && width - col > 0) { /* a word wider than the line: cut it */
            size_t take = prefix_for(word, word_len, width - col);
            cf_buf_append(out, word, take);
            word += take;
            word_len -= take;
            w = cf_text_width(word, word_len);
            cf_buf_puts(out, "\n");
            spaces(out, indent);
            col = indent;
        }
        cf_buf_append(out, word, word_len);
        col += w;
        empty = 0;
        i = word_end;
        gap = 0;
        while (i < n && line[i] == ' ') {
            i++;
            gap++;
        }
    }
    cf_buf_puts(out, "\n");
}

/* The continuation indent of a line: its own, and past a "- " or "* " bullet. */
static int indent_of(const char *line, size_t n)
{
    size_t i = 0;
    while (i < n && line[i] == ' ')
        i++;
    if (i + 1 < n && (line[i] == '-' || line[i] == '*') && line[i + 1] == ' ')
        i += 2;
    return (int)i + (i == 0 ? 2 : 0);
}

void cf_text_wrap(const char *text, int width, cf_buf *out)
{
    size_t len = strlen(text);
    if (width <= 0) {
        cf_buf_append(out, text, len);
        return;
    }
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        cf_text_wrap_line(p, n, width, indent_of(p, n), out);
        if (!nl) { /* no final newline in the input: none in the output */
            if (out->len && out->data[out->len - 1] == '\n')
                out->data[--out->len] = '\0';
            break;
        }
        p = nl + 1;
    }
}

void cf_text_cut(const char *s, int max_width, char *out, size_t n)
{
    size_t len = strlen(s);
    if (n == 0)
        return;
    if (cf_text_width(s, len) <= max_width || max_width < 1) {
        snprintf(out, n, "%s", s);
        return;
    }
    size_t take = prefix_for(s, len, max_width - 1);
    snprintf(out, n, "%.*s…", (int)take, s);
}
