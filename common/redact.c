#include "cloudfit/common/redact.h"

#include <string.h>

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static int hex_digit(char c)
{
    return is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A character of a URL scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )). */
static int scheme_char(char c) { return is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.'; }

/* A character of a key=value key: libpq's keywords, environment names, a
 * URL parameter's name with its percent escapes. */
static int key_char(char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '-' || c == '%'; }

/* Ends a URL's authority inside free text: the path, query or fragment,
 * white space, or a quote the message put around the word. */
static int authority_end(char c)
{
    return c == '\0' || c == '/' || c == '?' || c == '#' || is_space(c) || c == '\'' || c == '"' || c == '`' ||
           c == '<' || c == '>';
}

/* A span of `text` to replace by "***": [start, end). */
typedef struct {
    size_t start, end;
} span;

/* The password of a URL whose scheme's ':' is at text[colon]: the span
 * between the user's ':' and the last '@' of the authority; 0 when none. */
static int url_password(const char *text, size_t colon, span *out)
{
    size_t s = colon;
    while (s > 0 && scheme_char(text[s - 1]))
        s--;
    /* a scheme: two characters or more (not a drive letter "C:/"), starting with a letter */
    if (colon - s < 2 || !is_alpha(text[s]) || text[colon + 1] != '/')
        return 0;
    size_t a = colon + 1;
    while (text[a] == '/')
        a++;
    size_t at = 0, e = a;
    for (; !authority_end(text[e]); e++)
        if (text[e] == '@')
            at = e;
    if (!at)
        return 0;
    const char *user_colon = memchr(text + a, ':', at - a);
    if (!user_colon)
        return 0;
    out->start = (size_t)(user_colon - text) + 1;
    out->end = at;
    return 1;
}

/* Whether text[0..len) names a password: ends in "password" in any case,
 * percent escapes decoded (pass%77ord, %70assword). */
static int password_key(const char *key, size_t len)
{
    char decoded[64];
    size_t k = 0;
    for (size_t i = 0; i < len && k < sizeof decoded; i++, k++) {
        char c = key[i];
        if (c == '%' && i + 2 < len && hex_digit(key[i + 1]) >= 0 && hex_digit(key[i + 2]) >= 0) {
            c = (char)(hex_digit(key[i + 1]) * 16 + hex_digit(key[i + 2]));
            i += 2;
        }
        decoded[k] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    static const char want[] = "password";
    return k >= sizeof want - 1 && memcmp(decoded + k - (sizeof want - 1), want, sizeof want - 1) == 0;
}

/* The value of a password key whose '=' is at text[eq]; 0 when the key
 * before it is not one. */
static int keyword_password(const char *text, size_t eq, span *out)
{
    size_t k = eq;
    while (k > 0 && is_space(text[k - 1]))
        k--;
    size_t key_end = k;
    while (k > 0 && key_char(text[k - 1]))
        k--;
    if (k == key_end || !password_key(text + k, key_end - k))
        return 0;
    size_t v = eq + 1;
    while (text[v] == ' ' || text[v] == '\t')
        v++;
    size_t e = v;
    if (text[v] == '\'') { /* libpq's quoted value: \' and \\ escaped */
        for (e = v + 1; text[e] && text[e] != '\''; e++)
            if (text[e] == '\\' && text[e + 1])
                e++;
        if (text[e] == '\'')
            e++;
    } else {
        while (text[e] && !is_space(text[e]) && text[e] != '&')
            e++;
        /* the message's own closing quote ("got 'password=x'") is not the value's */
        if (e > v + 1 && (text[e - 1] == '\'' || text[e - 1] == '"' || text[e - 1] == '`'))
            e--;
    }
    if (e == v)
        return 0; /* nothing to hide: "password=" */
    out->start = v;
    out->end = e;
    return 1;
}

/* Whether the span is "***" already: a message naming a redacted URL. */
static int hidden(const char *text, const span *s)
{
    return s->end - s->start == 3 && memcmp(text + s->start, "***", 3) == 0;
}

/* The next span to hide at or after `from`; 0 when there is none. */
static int next_secret(const char *text, size_t from, span *out)
{
    for (size_t i = from; text[i]; i++) {
        if (((text[i] == ':' && url_password(text, i, out)) || (text[i] == '=' && keyword_password(text, i, out))) &&
            out->start >= from && !hidden(text, out))
            return 1;
    }
    return 0;
}

int cf_has_secrets(const char *text)
{
    span s;
    return text && next_secret(text, 0, &s);
}

/* Appends src[0..len) to out[n] at *k (counted past the end, written up to n - 1). */
static void put(char *out, size_t n, size_t *k, const char *src, size_t len)
{
    for (size_t i = 0; i < len; i++, (*k)++)
        if (*k + 1 < n)
            out[*k] = src[i];
}

size_t cf_redact_secrets(const char *text, char *out, size_t n)
{
    size_t k = 0, done = 0;
    span s;
    while (text && next_secret(text, done, &s)) {
        put(out, n, &k, text + done, s.start - done);
        put(out, n, &k, "***", 3);
        done = s.end;
    }
    if (text)
        put(out, n, &k, text + done, strlen(text + done));
    if (n > 0)
        out[k < n ? k : n - 1] = '\0';
    return k;
}
