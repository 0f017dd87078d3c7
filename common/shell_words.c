/* POSIX shell word splitting and quoting (cloudfit/common/shell_words.h). */
#include "cloudfit/common/shell_words.h"

#include <stdlib.h>
#include <string.h>

/* Takes `word` into the list. */
static cf_status push_word(cf_shell_words *w, cf_buf *word)
{
    cf_buf_append(word, "", 0); /* an empty word ('') is a word */
    char **grown = cf_buf_failed(word) ? NULL : realloc(w->words, (w->n + 1) * sizeof *grown);
    if (!grown) {
        cf_buf_free(word);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    w->words = grown;
    w->words[w->n++] = word->data;
    *word = (cf_buf)CF_BUF_INIT;
    return CF_OK;
}

static cf_status refuse(const char *text, const char *p, const char *what)
{
    return cf_error_set(CF_ERR_USAGE, "%s at character %zu of '%s'", what, (size_t)(p - text) + 1, text);
}

cf_status cf_shell_split_words(const char *text, cf_shell_words *out)
{
    memset(out, 0, sizeof *out);
    cf_buf word = CF_BUF_INIT;
    int in_word = 0;
    cf_status st = CF_OK;
    const char *p = text;
    while (st == CF_OK) {
        char ch = *p;
        if (ch == '\0' || ch == ' ' || ch == '\t') {
            if (in_word) {
                st = push_word(out, &word);
                in_word = 0;
            }
            if (ch == '\0')
                break;
            p++;
            continue;
        }
        if (ch == '\n')
            st = refuse(text, p, "a newline outside quotes (it would end a shell command)");
        else if (strchr("|&;<>(){}", ch))
            st = refuse(text, p, "an unquoted shell operator");
        else if (ch == '$' || ch == '`')
            st = refuse(text, p, "an unquoted '$' or '`' (a shell would expand it)");
        else if (strchr("*?[", ch))
            st = refuse(text, p, "an unquoted glob character (a shell would expand it)");
        else if (!in_word && (ch == '~' || ch == '#'))
            st = refuse(text, p, ch == '~' ? "a word starting with an unquoted '~' (a shell would expand it)"
                                           : "a word starting with an unquoted '#' (a shell comment)");
        if (st != CF_OK)
            break;
        in_word = 1;
        if (ch == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (!end) {
                st = refuse(text, p, "an unterminated single quote");
                break;
            }
            cf_buf_append(&word, p + 1, (size_t)(end - p - 1));
            p = end + 1;
        } else if (ch == '"') {
            const char *q = p + 1;
            for (; *q && *q != '"'; q++) {
                if (*q == '\\' && q[1] && strchr("$`\"\\\n", q[1])) {
                    if (q[1] != '\n') /* backslash-newline is a line continuation */
                        cf_buf_append(&word, q + 1, 1);
                    q++;
                } else if (*q == '$' || *q == '`') {
                    st = refuse(text, q, "a '$' or '`' in double quotes (a shell would expand it)");
                    break;
                } else {
                    cf_buf_append(&word, q, 1);
                }
            }
            if (st != CF_OK)
                break;
            if (*q != '"') {
                st = refuse(text, p, "an unterminated double quote");
                break;
            }
            p = q + 1;
        } else if (ch == '\\') {
            if (p[1] == '\0') {
                st = refuse(text, p, "a backslash at the end");
                break;
            }
            if (p[1] != '\n')
                cf_buf_append(&word, p + 1, 1);
            else if (!word.len && !(p > text && (p[-1] == '\'' || p[-1] == '"')))
                in_word = 0; /* a line continuation between words is no word */
            p += 2;
        } else {
            cf_buf_append(&word, p, 1);
            p++;
        }
    }
    cf_buf_free(&word);
    if (st != CF_OK)
        cf_shell_words_free(out);
    return st;
}

void cf_shell_words_free(cf_shell_words *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->words[i]);
    free(w->words);
    memset(w, 0, sizeof *w);
}

void cf_shell_quote(cf_buf *out, const char *word)
{
    cf_buf_puts(out, "'");
    for (const char *p = word; *p; p++) {
        if (*p == '\'')
            cf_buf_puts(out, "'\\''");
        else
            cf_buf_append(out, p, 1);
    }
    cf_buf_puts(out, "'");
}

/* The length of an invisible format character at p (zero-width and
 * bidirectional controls, the byte-order mark: U+200B–U+200F, U+202A–U+202E,
 * U+2060–U+2064, U+2066–U+2069, U+FEFF), else 0. Such a character in a
 * command to copy shows as nothing, or reorders what is shown. */
static size_t format_char(const unsigned char *p, unsigned *cp)
{
    if (p[0] == 0xe2 && (p[1] == 0x80 || p[1] == 0x81) && (p[2] & 0xc0) == 0x80) {
        unsigned c = 0x2000u | ((unsigned)(p[1] & 0x3f) << 6) | (unsigned)(p[2] & 0x3f);
        if ((c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x2064) ||
            (c >= 0x2066 && c <= 0x2069)) {
            *cp = c;
            return 3;
        }
    }
    if (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) {
        *cp = 0xfeff;
        return 3;
    }
    return 0;
}

/* Whether `word` holds a control character or an invisible format
 * character: inside '…' a newline is kept, but a table, markdown or a
 * terminal shows it as something else (a space, an escape), so what a
 * user copies names another file. */
static int needs_ansi_c(const char *word)
{
    unsigned cp;
    for (const unsigned char *p = (const unsigned char *)word; *p; p++)
        if (*p < 0x20 || *p == 0x7f || format_char(p, &cp))
            return 1;
    return 0;
}

/* $'…' (bash, zsh, ksh; POSIX.1-2024 sh): every control byte and format
 * character as an escape, the rest as it is. */
static void ansi_c_quote(cf_buf *out, const char *word)
{
    cf_buf_puts(out, "$'");
    for (const unsigned char *p = (const unsigned char *)word; *p; p++) {
        unsigned cp;
        size_t n = format_char(p, &cp);
        if (n) {
            cf_buf_printf(out, "\\u%04x", cp);
            p += n - 1;
        } else if (*p == '\\' || *p == '\'') {
            cf_buf_printf(out, "\\%c", *p);
        } else if (*p == '\n') {
            cf_buf_puts(out, "\\n");
        } else if (*p == '\t') {
            cf_buf_puts(out, "\\t");
        } else if (*p == '\r') {
            cf_buf_puts(out, "\\r");
        } else if (*p < 0x20 || *p == 0x7f) {
            cf_buf_printf(out, "\\x%02x", *p);
        } else {
            cf_buf_append(out, (const char *)p, 1);
        }
    }
    cf_buf_puts(out, "'");
}

void cf_shell_word(cf_buf *out, const char *word)
{
    if (needs_ansi_c(word)) {
        ansi_c_quote(out, word);
        return;
    }
    if (word[0] && word[0] != '-' &&
        word[strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/+-=")] == '\0')
        cf_buf_puts(out, word);
    else
        cf_shell_quote(out, word);
}
