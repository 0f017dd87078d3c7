#include "cloudfit/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/redact.h"

#define CF_ERROR_MAX 2048

static _Thread_local char error_message[CF_ERROR_MAX];
static _Thread_local char error_hint[CF_ERROR_MAX];
static _Thread_local cf_status error_status = CF_OK;

/* Formats into out[CF_ERROR_MAX] with every password hidden
 * (cloudfit/common/redact.h): a message quotes what the user typed, and a
 * database URL typed where another word was expected carries one. The
 * whole text is formatted before it is redacted and cut: a URL cut before
 * its '@' would no longer be recognised. */
static void format_redacted(char *out, const char *fmt, va_list ap) CF_PRINTF(2, 0);
static void format_redacted(char *out, const char *fmt, va_list ap)
{
    char small[CF_ERROR_MAX];
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    char *whole = n >= CF_ERROR_MAX ? malloc((size_t)n + 1) : NULL;
    if (whole)
        vsnprintf(whole, (size_t)n + 1, fmt, ap);
    cf_redact_secrets(whole ? whole : small, out, CF_ERROR_MAX);
    free(whole);
}

cf_status cf_error_set(cf_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format_redacted(error_message, fmt, ap);
    va_end(ap);
    error_hint[0] = '\0';
    error_status = status;
    return status;
}

void cf_error_hint(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format_redacted(error_hint, fmt, ap);
    va_end(ap);
}

void cf_error_prefix(const char *fmt, ...)
{
    char prefix[CF_ERROR_MAX];
    char joined[CF_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    format_redacted(prefix, fmt, ap);
    va_end(ap);
    /* Build "prefix: message" by hand: both parts fit the buffer and the
     * result is cut at its end, which snprintf would warn about. */
    size_t used = 0;
    for (const char *parts[] = {prefix, ": ", error_message}, **p = parts; p < parts + 3; p++) {
        size_t len = strlen(*p);
        if (len > sizeof joined - 1 - used)
            len = sizeof joined - 1 - used;
        memcpy(joined + used, *p, len);
        used += len;
    }
    joined[used] = '\0';
    memcpy(error_message, joined, used + 1);
}

const char *cf_error_message(void) { return error_message; }
const char *cf_error_hint_text(void) { return error_hint; }
cf_status cf_error_status(void) { return error_status; }

void cf_error_clear(void)
{
    error_message[0] = '\0';
    error_hint[0] = '\0';
    error_status = CF_OK;
}

const char *cf_status_name(cf_status status)
{
    switch (status) {
    case CF_OK: return "ok";
    case CF_ERR_USAGE: return "usage";
    case CF_ERR_IO: return "io";
    case CF_ERR_INVALID: return "invalid";
    case CF_ERR_NOMEM: return "nomem";
    case CF_ERR_INFEASIBLE: return "infeasible";
    case CF_ERR_DB: return "db";
    case CF_ERR_UNAVAILABLE: return "unavailable";
    case CF_ERR_NETWORK: return "network";
    case CF_ERR_INTERNAL: return "internal";
    case CF_ERR_WRITE: return "write";
    case CF_ERR_INTERRUPTED: return "interrupted";
    case CF_ERR_DOES_NOT_FIT: return "does-not-fit";
    case CF_ERR_SYSTEM: return "system";
    }
    return "unknown";
}
