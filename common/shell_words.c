/* POSIX shell word splitting and quoting (cloudfit/common/shell_words.h). */
#include "cloudfit/common/shell_words.h"

#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/escape.h"

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

/* $'…' (bash, zsh, ksh; POSIX.1-2024 sh) with every character that
 * cf_has_controls finds (C0, DEL, C1, the characters that reorder the text
 * around them, bytes that are not UTF-8) as an escape, the rest as it is. */
static void ansi_c_quote(cf_buf *out, const char *word)
{
    cf_buf_puts(out, "$'");
    size_t avail = strlen(word);
    for (const char *p = word; *p;) {
        const unsigned char c = (unsigned char)*p;
        size_t n = cf_utf8_sequence_length(p, avail);
        unsigned cp = n >= 2 ? cf_utf8_reordering(p, n) : 0;
        if (n == 2 && c == 0xc2 && (unsigned char)p[1] <= 0x9f)
            cp = (unsigned char)p[1]; /* C1 */
        if (cp) {
            cf_buf_printf(out, "\\u%04x", cp);
        } else if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
            n = 1;
            if (c == '\n' || c == '\t' || c == '\r')
                cf_buf_printf(out, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
            else
                cf_buf_printf(out, "\\x%02x", c);
        } else if (c == '\\' || c == '\'') {
            cf_buf_printf(out, "\\%c", c);
        } else {
            cf_buf_append(out, p, n);
        }
        p += n;
        avail -= n;
    }
    cf_buf_puts(out, "'");
}

void cf_shell_word(cf_buf *out, const char *word)
{
    /* inside '…' a newline is kept, but a table, markdown or a terminal
     * shows it as something else (a space, an escape): what a user copies
     * named another file */
    if (cf_has_controls(word)) {
        ansi_c_quote(out, word);
        return;
    }
    if (word[0] && word[0] != '-' &&
        word[strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/+-=")] == '\0')
        cf_buf_puts(out, word);
    else
        cf_shell_quote(out, word);
}
