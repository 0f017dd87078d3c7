/* Every JSON input of cloudfit is read here (cloudfit/common/json.h): text
 * → cJSON tree, with syntax errors reported as
 * "FILE:LINE:COLUMN: invalid JSON: WHAT", and duplicate keys refused with
 * their key path.
 *
 * cJSON only says where it stopped (the error pointer). To say *what* is
 * wrong, a small scanner re-reads the text up to that point, tracking which
 * token the grammar expects next. Where cJSON's pointer lands one character
 * past the culprit (a bad key, a trailing comma), the scanner finds the
 * culprit itself first, so the reported position is the earlier of the two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/common/json.h"

#include "cloudfit/common/escape.h"
#include "cloudfit/common/number.h"
#include "cloudfit/common/proc.h"

#define JSON_MAX_DEPTH (CJSON_NESTING_LIMIT + 1)
#define KEYPATH_MAX 512

typedef enum {
    EXPECT_VALUE,            /* after ':' or ',' in an array, or at the start */
    EXPECT_VALUE_OR_CLOSE,   /* just after '[' */
    EXPECT_KEY,              /* after ',' in an object */
    EXPECT_KEY_OR_CLOSE,     /* just after '{' */
    EXPECT_COLON,            /* after a key */
    EXPECT_COMMA_OR_CLOSE,   /* after a value inside a container */
    EXPECT_END               /* after the top-level value */
} json_expect;

typedef struct {
    const char *text;
    size_t len;
    size_t pos;                        /* where the scan stopped: the error position */
    json_expect expect;
    int depth;
    char open[JSON_MAX_DEPTH];         /* '{' or '[' per open container */
    size_t open_pos[JSON_MAX_DEPTH];   /* where each one was opened */
    char last;                         /* last punctuation seen (',', ':', '{', '[') or 0 */
    size_t token_end;                  /* offset just after the last complete token */
    long first_line;                   /* the text's first line in the whole it is part of */
    char what[160];                    /* the diagnosis */
    char hint[160];
} json_scan;

/* ---- positions ----------------------------------------------------------------- */

/* Line and column (in characters, not bytes; both from 1) of byte `offset`;
 * the text's first line is line `first_line` (a line of a stream: its
 * number there, so the line is not named twice). */
static void locate(const char *text, size_t offset, long first_line, long *line, int *column)
{
    size_t i = offset >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;   /* a BOM is no column */
    *line = first_line;
    *column = 1;
    for (; i < offset; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            (*column)++;
        }
    }
}

/* ---- the scanner --------------------------------------------------------------- */

static int is_word_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '+' || ch == '-' || ch == '.';
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

/* The grammar state after a complete value. */
static json_expect after_value(const json_scan *s)
{
    return s->depth == 0 ? EXPECT_END : EXPECT_COMMA_OR_CLOSE;
}

static const char *expect_text(const json_scan *s)
{
    switch (s->expect) {
    case EXPECT_VALUE: return "a value";
    case EXPECT_VALUE_OR_CLOSE: return "a value or ']'";
    case EXPECT_KEY: return "a key in double quotes";
    case EXPECT_KEY_OR_CLOSE: return "a key in double quotes or '}'";
    case EXPECT_COLON: return "':' after the key";
    case EXPECT_COMMA_OR_CLOSE: return s->open[s->depth - 1] == '{' ? "',' or '}'" : "',' or ']'";
    case EXPECT_END: return "the end of the input";
    }
    return "?";
}

/* Describes the character at s->pos as "'c'", "end of input" or "byte 0xNN". */
static void describe_here(const json_scan *s, char *out, size_t n)
{
    if (s->pos >= s->len) {
        snprintf(out, n, "end of input");
        return;
    }
    unsigned char ch = (unsigned char)s->text[s->pos];
    if (ch >= 0x20 && ch < 0x7f)
        snprintf(out, n, "'%c'", ch);
    else
        snprintf(out, n, "byte 0x%02x", ch);
}

/* Sets the diagnosis "expected X, got Y" with a hint for the common slips. */
static void diagnose_unexpected(json_scan *s)
{
    char got[32];
    describe_here(s, got, sizeof got);
    snprintf(s->what, sizeof s->what, "expected %s, got %s", expect_text(s), got);
    char ch = s->pos < s->len ? s->text[s->pos] : '\0';
    if (s->pos >= s->len && s->depth > 0) {
        long line;
        int column;
        locate(s->text, s->open_pos[s->depth - 1], s->first_line, &line, &column);
        snprintf(s->hint, sizeof s->hint, "the '%c' opened at line %ld, column %d is not closed",
                 s->open[s->depth - 1], line, column);
    } else if (s->pos >= s->len && s->expect == EXPECT_VALUE && s->depth == 0) {
        snprintf(s->hint, sizeof s->hint, "the input is empty: it should hold one JSON object");
    } else if (ch == '/' || ch == '#') {
        snprintf(s->hint, sizeof s->hint, "JSON has no comments: use a \"description\" string instead");
    } else if (ch == '\'') {
        snprintf(s->hint, sizeof s->hint, "JSON strings and keys take double quotes");
    } else if ((ch == '}' || ch == ']') && s->last == ',') {
        snprintf(s->hint, sizeof s->hint, "remove the trailing ',' before the '%c'", ch);
    } else if (s->expect == EXPECT_COMMA_OR_CLOSE && (ch == '"' || ch == '{' || ch == '[' || is_word_char(ch))) {
        long line;
        int column;
        locate(s->text, s->token_end, s->first_line, &line, &column);
        snprintf(s->hint, sizeof s->hint, "a ',' is probably missing at line %ld, column %d", line, column);
    } else if ((s->expect == EXPECT_KEY || s->expect == EXPECT_KEY_OR_CLOSE) && is_word_char(ch)) {
        snprintf(s->hint, sizeof s->hint, "JSON keys take double quotes");
    } else if (s->expect == EXPECT_END) {
        snprintf(s->hint, sizeof s->hint, "the input should hold one JSON object: remove what follows it");
    }
}

/* Length of the bare word (number or literal) at s->pos. */
static size_t word_length(const json_scan *s)
{
    size_t n = 0;
    while (s->pos + n < s->len && is_word_char(s->text[s->pos + n]))
        n++;
    return n;
}

/* 1 when the word is true, false, null or a number that strtod reads whole. */
static int word_is_valid(const char *word)
{
    if (strcmp(word, "true") == 0 || strcmp(word, "false") == 0 || strcmp(word, "null") == 0)
        return 1;
    if (!(word[0] == '-' || (word[0] >= '0' && word[0] <= '9')))
        return 0;
    char *end = NULL;
    strtod(word, &end);
    return end && *end == '\0';
}

/* Scans the bare word at s->pos. Returns 0 with a diagnosis when it is
 * invalid or when `limit` (cJSON's error position) falls inside it. */
static int scan_word(json_scan *s, size_t limit)
{
    char word[40];
    size_t n = word_length(s);
    snprintf(word, sizeof word, "%.*s%s", (int)cf_utf8_prefix(s->text + s->pos, n < 32 ? n : 32), s->text + s->pos,
             n > 32 ? "..." : "");
    if (n > 32 || !word_is_valid(word) || limit < s->pos + n) {
        int numeric = word[0] == '-' || (word[0] >= '0' && word[0] <= '9');
        snprintf(s->what, sizeof s->what, "invalid %s '%s'", numeric ? "number" : "value", word);
        if (!numeric)
            snprintf(s->hint, sizeof s->hint,
                     "the JSON literals are true, false and null; strings take double quotes");
        return 0;
    }
    s->pos += n;
    return 1;
}

static int is_hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* 1 when the escape sequence at text[i] (a backslash) is well formed. */
static int escape_is_valid(const json_scan *s, size_t i)
{
    char esc = i + 1 < s->len ? s->text[i + 1] : '\0';
    if (esc == '\0' || !strchr("\"\\/bfnrtu", esc))
        return 0;
    if (esc != 'u')
        return 1;
    for (size_t k = i + 2; k < i + 6; k++)
        if (k >= s->len || !is_hex(s->text[k]))
            return 0;
    return 1;
}

/* The code unit of the valid \uXXXX escape at text[i] (a backslash). */
static unsigned escape_code(const char *text, size_t i)
{
    return (unsigned)strtoul((char[5]){text[i + 2], text[i + 3], text[i + 4], text[i + 5], '\0'}, NULL, 16);
}

/* 1 when the valid escape at text[i] is a UTF-16 surrogate without its
 * other half (a high one not followed by a low \uXXXX, or a low one
 * alone): no character, and cJSON refuses it. *pair: 1 when it starts a
 * well-formed pair (the low half is skipped with it). */
static int lone_surrogate(const json_scan *s, size_t i, int *pair)
{
    *pair = 0;
    if (s->text[i + 1] != 'u')
        return 0;
    unsigned code = escape_code(s->text, i);
    if (code >= 0xDC00 && code <= 0xDFFF)
        return 1;
    if (code < 0xD800 || code > 0xDBFF)
        return 0;
    size_t j = i + 6;
    if (j + 1 < s->len && s->text[j] == '\\' && s->text[j + 1] == 'u' && escape_is_valid(s, j)) {
        unsigned low = escape_code(s->text, j);
        *pair = low >= 0xDC00 && low <= 0xDFFF;
    }
    return !*pair;
}

/* Stops the scan at s->pos = at with a diagnosis; returns 0. */
static int scan_error(json_scan *s, size_t at, const char *what, const char *hint)
{
    s->pos = at;
    snprintf(s->what, sizeof s->what, "%s", what);
    snprintf(s->hint, sizeof s->hint, "%s", hint);
    return 0;
}

/* Index of the quote that closes the string opening at `start`, or s->len. */
static size_t string_end(const char *text, size_t len, size_t start)
{
    size_t i = start + 1;
    while (i < len && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
    return i < len ? i : len;
}

/* Scans the string at s->pos (on its opening quote). Returns 0 with a
 * diagnosis (and s->pos on the culprit) when it is invalid or when `limit`
 * (cJSON's error position) falls inside it. */
static int scan_string(json_scan *s, size_t limit)
{
    size_t start = s->pos, end = string_end(s->text, s->len, start);
    if (end >= s->len)
        return scan_error(s, start, "unterminated string", "add the closing '\"'");
    for (size_t i = start + 1; i < end; i++) {
        unsigned char ch = (unsigned char)s->text[i];
        if (ch < 0x20)
            return scan_error(s, i, "control character in a string",
                              "write a newline as \\n and a tab as \\t");
        int pair = 0;
        if (ch == '\\' && escape_is_valid(s, i) && lone_surrogate(s, i, &pair)) {
            char what[64];
            snprintf(what, sizeof what, "lone surrogate %.6s in a string", s->text + i);
            return scan_error(s, i, what,
                              "a character above U+FFFF is a pair of escapes, high then low (\\ud83d\\ude00), "
                              "or the character itself in UTF-8");
        }
        if (ch == '\\' && (i == limit || !escape_is_valid(s, i)))
            return scan_error(s, i, "invalid escape sequence in a string",
                              "valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX "
                              "(surrogates in pairs)");
        if (pair)
            i += 6; /* the low half, checked with the high one */
        if (i == limit)
            return scan_error(s, i, "invalid string", "");
        if (ch == '\\')
            i++;
    }
    s->pos = end + 1;
    return 1;
}

/* Checks the token at s->pos against the expected grammar and consumes it.
 * Returns 0 with a diagnosis at the error. */
static int scan_token(json_scan *s, size_t limit)
{
    char ch = s->text[s->pos];
    int want_value = s->expect == EXPECT_VALUE || s->expect == EXPECT_VALUE_OR_CLOSE;
    int want_key = s->expect == EXPECT_KEY || s->expect == EXPECT_KEY_OR_CLOSE;
    int closes = (ch == '}' && (s->expect == EXPECT_KEY_OR_CLOSE ||
                                (s->expect == EXPECT_COMMA_OR_CLOSE && s->open[s->depth - 1] == '{'))) ||
                 (ch == ']' && (s->expect == EXPECT_VALUE_OR_CLOSE ||
                                (s->expect == EXPECT_COMMA_OR_CLOSE && s->open[s->depth - 1] == '[')));
    if (ch == '"' && (want_value || want_key)) {
        if (!scan_string(s, limit))
            return 0;
        s->expect = want_key ? EXPECT_COLON : after_value(s);
        s->last = 0;
        return 1;
    }
    if ((ch == '{' || ch == '[') && want_value) {
        if (s->depth >= CJSON_NESTING_LIMIT)
            return scan_error(s, s->pos, "nested too deeply", "");
        s->open[s->depth] = ch;
        s->open_pos[s->depth++] = s->pos++;
        s->expect = ch == '{' ? EXPECT_KEY_OR_CLOSE : EXPECT_VALUE_OR_CLOSE;
        s->last = ch;
        return 1;
    }
    if (closes) {
        s->depth--;
        s->pos++;
        s->expect = after_value(s);
        s->last = 0;
        return 1;
    }
    if ((ch == ':' && s->expect == EXPECT_COLON) || (ch == ',' && s->expect == EXPECT_COMMA_OR_CLOSE)) {
        s->expect = ch == ':' ? EXPECT_VALUE : s->open[s->depth - 1] == '{' ? EXPECT_KEY : EXPECT_VALUE;
        s->last = ch;
        s->pos++;
        return 1;
    }
    if (want_value && is_word_char(ch)) {
        if (!scan_word(s, limit))
            return 0;
        s->expect = after_value(s);
        s->last = 0;
        return 1;
    }
    diagnose_unexpected(s);
    return 0;
}

/* Scans from the start through the token at `limit` (cJSON's error offset)
 * and leaves the earliest error it can name in s->pos / s->what / s->hint. */
static void scan_to_error(json_scan *s, size_t limit)
{
    if (s->len >= 3 && memcmp(s->text, "\xEF\xBB\xBF", 3) == 0)
        s->pos = 3;
    for (;;) {
        while (s->pos < s->len && is_space(s->text[s->pos]))
            s->pos++;
        if (s->pos >= s->len || s->pos > limit)
            break;
        if (!scan_token(s, limit))
            return;
        s->token_end = s->pos;
    }
    if (s->pos > limit) {
        /* cJSON rejected something this scanner accepts: name the place only. */
        char got[32];
        s->pos = limit;
        describe_here(s, got, sizeof got);
        snprintf(s->what, sizeof s->what, "unexpected %s", got);
        return;
    }
    diagnose_unexpected(s);
}

/* ---- entry point --------------------------------------------------------------- */

static cf_status report_syntax(const char *text, size_t len, size_t cjson_offset, const char *file, long first_line)
{
    json_scan *s = calloc(1, sizeof *s);
    if (!s)
        return cf_error_set(CF_ERR_NOMEM, "%s: out of memory", file);
    s->text = text;
    s->len = len;
    s->expect = EXPECT_VALUE;
    s->first_line = first_line;
    scan_to_error(s, cjson_offset);
    long line;
    int column;
    locate(text, s->pos, first_line, &line, &column);
    cf_status st = cf_error_set(CF_ERR_INVALID, "%s:%ld:%d: invalid JSON: %s", file, line, column, s->what);
    if (s->hint[0])
        cf_error_hint("%s", s->hint);
    free(s);
    return st;
}

/* What the token pass below knows about one open container: enough to
 * name a key path ("a.b[2]") without building it for every token. */
typedef struct {
    char open;                 /* '{' or '[' */
    long index;                /* the current element of an array */
    size_t key, key_len;       /* the current key of an object: its text between the quotes */
} json_level;

/* The key path of the innermost `depth` levels, keys as written in the text
 * (escapes left as they are, long keys cut). */
static void level_path(const char *text, const json_level *levels, int depth, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = 0; d < depth && len + 1 < n; d++) {
        if (levels[d].open == '[') {
            len += (size_t)snprintf(out + len, n - len, "[%ld]", levels[d].index);
        } else if (levels[d].key_len) {
            size_t shown = levels[d].key_len < 64 ? levels[d].key_len : 64;
            len += (size_t)snprintf(out + len, n - len, "%s%.*s%s", len ? "." : "", (int)shown,
                                    text + levels[d].key, shown < levels[d].key_len ? "..." : "");
        }
        if (len >= n)
            len = n - 1;
    }
}

/* Offset of the first \u0000 escape in the string token text[start..end)
 * (its opening quote excluded), or `end` when there is none. */
static size_t string_nul_escape(const char *text, size_t start, size_t end)
{
    for (size_t i = start; i + 1 < end; i++) {
        if (text[i] != '\\')
            continue;
        if (text[i + 1] == 'u' && i + 5 < end && memcmp(text + i + 2, "0000", 4) == 0)
            return i;
        i++; /* the escaped character */
    }
    return end;
}

/* After cJSON accepted the text, one pass over its tokens (linear, the
 * grammar already known to be valid) checks what cJSON lets through:
 *  - numbers: cJSON reads them with strtod, which takes what JSON does not
 *    (0128) and turns what no double holds into inf or a denormal (1e400,
 *    1e-320, later printed as null): each number token is checked against
 *    the JSON grammar and for range;
 *  - strings: cJSON decodes \u0000 into a C string, which ends there, so
 *    "ab\u0000cd" would silently load as "ab" (and two keys that differ
 *    after it as one): refused, with the key path. */
static cf_status check_tokens(const char *text, size_t len, const char *file, long first_line)
{
    json_level *levels = calloc(JSON_MAX_DEPTH, sizeof *levels);
    if (!levels)
        return cf_error_set(CF_ERR_NOMEM, "%s: out of memory", file);
    int depth = 0, want_key = 0;
    cf_status st = CF_OK;
    for (size_t i = 0; i < len && st == CF_OK; i++) {
        char ch = text[i];
        if (ch == '{' || ch == '[') {
            if (depth < JSON_MAX_DEPTH)
                levels[depth++] = (json_level){.open = ch};
            want_key = ch == '{';
            continue;
        }
        if (ch == '}' || ch == ']') {
            if (depth > 0)
                depth--;
            want_key = 0;
            continue;
        }
        if (ch == ',') {
            if (depth > 0 && levels[depth - 1].open == '[')
                levels[depth - 1].index++;
            want_key = depth > 0 && levels[depth - 1].open == '{';
            continue;
        }
        if (ch == '"') {
            size_t start = i + 1, end = string_end(text, len, i);
            if (want_key && depth > 0) {
                levels[depth - 1].key = start;
                levels[depth - 1].key_len = end - start;
            }
            size_t nul = string_nul_escape(text, start, end);
            if (nul < end) {
                char path[KEYPATH_MAX];
                level_path(text, levels, depth, path, sizeof path);
                long line;
                int column;
                locate(text, nul, first_line, &line, &column);
                st = cf_error_set(CF_ERR_INVALID, "%s:%ld:%d: invalid JSON: NUL character (\\u0000) in the %s %s", file,
                                  line, column, want_key ? "key" : "string at", path[0] ? path : "(top level)");
                cf_error_hint("strings cannot hold NUL: remove the \\u0000");
            }
            want_key = 0;
            i = end;
            continue;
        }
        if (!(ch == '-' || (ch >= '0' && ch <= '9')))
            continue;
        size_t start = i;
        while (i < len && (text[i] == '-' || text[i] == '+' || text[i] == '.' || text[i] == 'e' || text[i] == 'E' ||
                           (text[i] >= '0' && text[i] <= '9')))
            i++;
        size_t n = i - start;
        char word[48];
        snprintf(word, sizeof word, "%.*s%s", (int)(n < 40 ? n : 40), text + start, n > 40 ? "..." : "");
        const char *why = NULL, *hint = NULL;
        if (!cf_number_syntax_ok(text + start, n, 1)) {
            why = "invalid number";
            hint = "JSON numbers are decimal, without leading zeros (write 128, not 0128)";
        } else {
            char buf[400];
            if (n < sizeof buf) {
                memcpy(buf, text + start, n);
                buf[n] = '\0';
                double v = 0;
                if (cf_number_double(buf, -HUGE_VAL, HUGE_VAL, &v) == CF_NUMBER_RANGE) {
                    why = "number out of range";
                    hint = "a number must fit a double: magnitude between 2.2e-308 and 1.8e308, or 0";
                }
            }
        }
        if (why) {
            long line;
            int column;
            locate(text, start, first_line, &line, &column);
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld:%d: invalid JSON: %s '%s'", file, line, column, why, word);
            cf_error_hint("%s", hint);
        }
        i--; /* the loop's i++ */
    }
    free(levels);
    return st;
}

static cf_status json_parse(const char *text, size_t len, const char *file, long first_line, cJSON **out_doc)
{
    *out_doc = NULL;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 BOM, as some editors write */
        text += 3;
        len -= 3;
    }
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        long line;
        int column;
        locate(text, (size_t)(nul - text), first_line, &line, &column);
        cf_status st = cf_error_set(CF_ERR_INVALID, "%s:%ld:%d: invalid JSON: NUL byte in the text", file,
                                    line, column);
        cf_error_hint("is this a binary file? JSON is UTF-8 text");
        return st;
    }
    /* cJSON wants the terminating NUL inside the length to check that
     * nothing follows the value. */
    char *copy = malloc(len + 1);
    if (!copy)
        return cf_error_set(CF_ERR_NOMEM, "%s: out of memory", file);
    memcpy(copy, text, len);
    copy[len] = '\0';
    /* JSON text is UTF-8 (RFC 8259): another byte was taken as it was, and
     * a spec's name or path holding it was stored raw by SQLite and refused
     * by PostgreSQL after the whole recommendation */
    long bad = cf_utf8_invalid_at(copy);
    if (bad >= 0) {
        long line;
        int column;
        locate(copy, (size_t)bad, first_line, &line, &column);
        cf_status st = cf_error_set(CF_ERR_INVALID, "%s:%ld:%d: invalid JSON: byte 0x%02x is not UTF-8", file, line,
                                    column, (unsigned char)copy[bad]);
        cf_error_hint("JSON text is UTF-8: save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)");
        free(copy);
        return st;
    }
    const char *error_at = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(copy, len + 1, &error_at, 1);
    if (!doc) {
        size_t offset = error_at && error_at >= copy ? (size_t)(error_at - copy) : 0;
        cf_status st = report_syntax(copy, len, offset > len ? len : offset, file, first_line);
        free(copy);
        return st;
    }
    free(copy);
    cf_status st = check_tokens(text, len, file, first_line);
    if (st != CF_OK) {
        cJSON_Delete(doc);
        return st;
    }
    *out_doc = doc;
    return CF_OK;
}

static cf_status parse_at(const char *text, size_t len, const char *file, long first_line, cJSON **out_doc)
{
    *out_doc = NULL;
    cf_proc_abortable_begin(); /* a stop never waits for a parse */
    cf_status st = cf_interrupt_check(); /* one that came while the input was read */
    if (st == CF_OK)
        st = json_parse(text, len, file, first_line, out_doc);
    cf_proc_abortable_end();
    return st;
}

cf_status cf_json_parse(const char *text, size_t len, const char *file, cJSON **out_doc)
{
    return parse_at(text, len, file, 1, out_doc);
}

cf_status cf_json_parse_program_output(const char *text, size_t len, const char *file, cJSON **out_doc)
{
    cf_buf fixed = CF_BUF_INIT;
    for (size_t i = 0; i < len;) {
        size_t n = cf_utf8_sequence_length(text + i, len - i);
        if (n == 0) { /* in JSON source \\xNN: the text \xNN, as an escaped byte is shown */
            cf_buf_printf(&fixed, "\\\\x%02x", (unsigned char)text[i]);
            n = 1;
        } else {
            cf_buf_append(&fixed, text + i, n);
        }
        i += n;
    }
    cf_status st = cf_buf_failed(&fixed) ? cf_error_set(CF_ERR_NOMEM, "out of memory")
                                         : cf_json_parse(fixed.data ? fixed.data : "", fixed.len, file, out_doc);
    cf_buf_free(&fixed);
    return st;
}

/* ---- duplicate keys ---------------------------------------------------------------- */

/* Objects with up to this many members are checked pairwise; larger ones
 * through a hash set, so the check stays linear in the input (a 200,000-
 * member object took ~24 s pairwise). */
#define PAIRWISE_MAX 16

static uint64_t key_hash(const char *key)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

/* The first member of `object` whose key an earlier member has, or NULL;
 * *failed on out of memory. */
static const cJSON *first_duplicate(const cJSON *object, int *failed)
{
    size_t n = 0;
    for (const cJSON *a = object->child; a; a = a->next)
        n++;
    if (n <= PAIRWISE_MAX) {
        for (const cJSON *a = object->child; a; a = a->next)
            for (const cJSON *b = object->child; b != a; b = b->next)
                if (a->string && b->string && strcmp(a->string, b->string) == 0)
                    return a;
        return NULL;
    }
    size_t slots = 64;
    while (slots < 2 * n)
        slots *= 2;
    const cJSON **table = calloc(slots, sizeof *table);
    if (!table) {
        *failed = 1;
        return NULL;
    }
    const cJSON *found = NULL;
    for (const cJSON *a = object->child; a && !found; a = a->next) {
        if (!a->string)
            continue;
        size_t slot = (size_t)key_hash(a->string) & (slots - 1);
        while (table[slot] && strcmp(table[slot]->string, a->string) != 0)
            slot = (slot + 1) & (slots - 1);
        if (table[slot])
            found = a;
        table[slot] = a;
    }
    free(table);
    return found;
}

static cf_status unique_keys(const cJSON *item, const char *file, char *path, size_t path_len)
{
    if (cJSON_IsObject(item)) {
        int failed = 0;
        const cJSON *dup = first_duplicate(item, &failed);
        if (failed)
            return cf_error_set(CF_ERR_NOMEM, "%s: out of memory", file);
        if (dup)
            return cf_error_set(CF_ERR_INVALID, "%s: %s%s%s: duplicate key (each key may appear once)", file, path,
                                path_len ? "." : "", dup->string);
    }
    long index = 0;
    for (const cJSON *a = item ? item->child : NULL; a; a = a->next, index++) {
        if (!a->child)
            continue; /* a scalar holds no keys */
        size_t len = path_len;
        if (cJSON_IsObject(item))
            len += (size_t)snprintf(path + path_len, KEYPATH_MAX - path_len, "%s%s", path_len ? "." : "",
                                    a->string ? a->string : "");
        else
            len += (size_t)snprintf(path + path_len, KEYPATH_MAX - path_len, "[%ld]", index);
        if (len >= KEYPATH_MAX)
            len = KEYPATH_MAX - 1;
        cf_status st = unique_keys(a, file, path, len);
        path[path_len] = '\0';
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

cf_status cf_json_check_unique_keys(const cJSON *doc, const char *file)
{
    char path[KEYPATH_MAX] = "";
    cf_proc_abortable_begin();
    cf_status st = unique_keys(doc, file, path, 0);
    cf_proc_abortable_end();
    return st;
}

cf_status cf_json_read(const char *text, size_t len, const char *file, cJSON **out_doc)
{
    cf_status st = cf_json_parse(text, len, file, out_doc);
    if (st == CF_OK && (st = cf_json_check_unique_keys(*out_doc, file)) != CF_OK) {
        cJSON_Delete(*out_doc);
        *out_doc = NULL;
    }
    return st;
}

cf_status cf_json_read_at(const char *text, size_t len, const char *name, long first_line, cJSON **out_doc)
{
    cf_status st = parse_at(text, len, name, first_line, out_doc);
    if (st == CF_OK) {
        char where[300]; /* a message without a column names the piece by its first line */
        snprintf(where, sizeof where, "%.280s:%ld", name, first_line);
        if ((st = cf_json_check_unique_keys(*out_doc, where)) != CF_OK) {
            cJSON_Delete(*out_doc);
            *out_doc = NULL;
        }
    }
    return st;
}

cf_status cf_json_load_file(const char *path, cJSON **out_doc)
{
    *out_doc = NULL;
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    st = cf_json_read(text, len, path, out_doc);
    free(text);
    return st;
}

double cf_json_round(double v, int digits)
{
    if (v == 0 || !isfinite(v))
        return v;
    double scale = pow(10, digits - 1 - (int)floor(log10(fabs(v))));
    double r = round(v * scale) / scale;
    if (isfinite(r) && isfinite(scale) && scale > 0)
        return r;
    /* near the ends of the range the scale overflows (2.2e-308: 10^313) or
     * underflows: the decimal conversion rounds the same way, without one */
    char text[40];
    snprintf(text, sizeof text, "%.*g", digits, v);
    return strtod(text, NULL);
}

void cf_json_add_rounded(cJSON *o, const char *key, double v, int digits)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, cf_json_round(v, digits));
    else
        cJSON_AddNullToObject(o, key);
}
