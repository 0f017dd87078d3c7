/* URL text helpers shared by the fetchers (see http.h): redaction for
 * messages and percent-encoding of queries. No libcurl here, so the fuzz
 * targets link them with a fake transport. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http.h"

void cf_url_encode_query(const char *url, cf_buf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
        if (*p <= ' ' || *p >= 0x7f || *p == '\'' || *p == '"' || *p == '<' || *p == '>' || *p == '`' ||
            *p == '{' || *p == '}' || *p == '|' || *p == '\\' || *p == '^') {
            char esc[4] = {'%', hex[*p >> 4], hex[*p & 15], 0};
            cf_buf_puts(out, esc);
        } else {
            cf_buf_append(out, (const char *)p, 1);
        }
    }
}

void cf_url_encode_value(const char *value, cf_buf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
            *p == '.' || *p == '_' || *p == '~') {
            cf_buf_append(out, (const char *)p, 1);
        } else {
            char esc[4] = {'%', hex[*p >> 4], hex[*p & 15], 0};
            cf_buf_puts(out, esc);
        }
    }
}

/* Query parameters whose value is a secret (compared without case; a name
 * ending in one of these counts too: X-Amz-Signature, access_token). */
static int secret_param(const char *name, size_t len)
{
    static const char *const secrets[] = {"key", "apikey", "api_key", "token", "signature", "sig", "password",
                                          "passwd", "secret", "credential", "auth", "authorization", "code"};
    for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++) {
        size_t n = strlen(secrets[i]);
        if (len >= n && strncasecmp(name + len - n, secrets[i], n) == 0 &&
            (len == n || name[len - n - 1] == '_' || name[len - n - 1] == '-' || name[len - n - 1] == '.' ||
             strncasecmp(secrets[i], "signature", 9) == 0 || strncasecmp(secrets[i], "token", 5) == 0 ||
             strncasecmp(secrets[i], "credential", 10) == 0))
            return 1;
    }
    return 0;
}

static void put(char *out, size_t cap, size_t *o, const char *text, size_t len)
{
    for (size_t i = 0; i < len && *o + 1 < cap; i++)
        out[(*o)++] = text[i];
}

void cf_http_redact(const char *url, char *out, size_t cap)
{
    if (cap == 0)
        return;
    size_t o = 0;
    const char *p = url;
    /* scheme://user:password@host: the userinfo goes. */
    const char *scheme_end = strstr(p, "://");
    if (scheme_end) {
        const char *auth = scheme_end + 3;
        size_t auth_len = strcspn(auth, "/?#");
        const char *at = NULL;
        for (size_t i = 0; i < auth_len; i++)
            if (auth[i] == '@')
                at = auth + i;
        put(out, cap, &o, p, (size_t)(auth - p));
        if (at) {
            put(out, cap, &o, "***@", 4);
            p = at + 1;
        } else {
            p = auth;
        }
    }
    /* The path as it is; in the query and fragment, secret values go. */
    size_t path_len = strcspn(p, "?#");
    put(out, cap, &o, p, path_len);
    p += path_len;
    while (*p) {
        put(out, cap, &o, p, 1); /* '?', '&', ';' or '#' */
        p++;
        size_t len = strcspn(p, "&;#");
        const char *eq = memchr(p, '=', len);
        if (eq && secret_param(p, (size_t)(eq - p))) {
            put(out, cap, &o, p, (size_t)(eq - p) + 1);
            put(out, cap, &o, "***", 3);
        } else {
            put(out, cap, &o, p, len);
        }
        p += len;
    }
    out[o] = '\0';
}
