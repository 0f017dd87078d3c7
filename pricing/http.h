/* A small HTTP GET client over libcurl for the price fetchers (private to
 * pricing/).
 *
 * Contract:
 *  - HTTPS only, except plain HTTP to loopback hosts (127.0.0.0/8, ::1,
 *    localhost), which is what the tests use. Redirects stay on HTTPS.
 *  - A connect timeout and a low-speed limit (libcurl LOW_SPEED_LIMIT /
 *    LOW_SPEED_TIME: fewer than N bytes/s over a window of T s aborts), not
 *    a whole-transfer timeout: a real offer file takes minutes, a stalled
 *    one is given up after T s. An overall cap is optional. Retries with
 *    exponential backoff and full jitter on 429, 5xx, connection resets,
 *    truncated transfers, stalls and timeouts, bounded by a number of
 *    attempts; a Retry-After header (seconds) is honoured up to a cap.
 *  - gzip/deflate accepted; User-Agent "cloudfit/VERSION".
 *  - The body goes to a sink; on a retry the sink is reset first, so a
 *    streaming consumer never sees two partial copies.
 * Tunables come from the environment so tests can make them fast:
 *   CLOUDFIT_HTTP_LOW_SPEED_BPS (1024), CLOUDFIT_HTTP_LOW_SPEED_TIME_S (60),
 *   CLOUDFIT_HTTP_TIMEOUT_S (0 = no overall cap), CLOUDFIT_HTTP_CONNECT_TIMEOUT_S (10),
 *   CLOUDFIT_HTTP_RETRIES (4 retries after the first try),
 *   CLOUDFIT_HTTP_RETRY_BASE_MS (500), CLOUDFIT_HTTP_RETRY_AFTER_MAX_S (120). */
#ifndef CLOUDFIT_PRICING_HTTP_H
#define CLOUDFIT_PRICING_HTTP_H
#include <stddef.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/pricing/update.h"

typedef struct {
    double timeout_s;            /* whole transfer; 0 = no cap */
    double low_speed_bps;        /* a transfer slower than this ... */
    double low_speed_time_s;     /* ... for this long is given up */
    double connect_timeout_s;
    int retries;
    double retry_base_ms;
    double retry_after_max_s;
    cf_progress_fn progress;     /* may be NULL */
    void *progress_data;
    cf_progress_count_fn transfer; /* bytes of each response as they arrive; may be NULL */
    void *transfer_data;
    const char *basic_auth_user; /* HTTP Basic user name (an API key), empty password; NULL = none; never shown */
    long long *last_modified;    /* when set: the response's Last-Modified as Unix time, -1 without one */
} cf_http_config;

/* Where a response body goes. write returns 0 to continue, non-zero to abort
 * (the sink then sets the error). reset is called before every retry. */
typedef struct {
    int (*write)(void *data, const char *bytes, size_t len);
    void (*reset)(void *data);
    void *data;
} cf_http_sink;

/* Defaults overridden by the environment variables above. */
void cf_http_config_from_env(cf_http_config *cfg);
/* Whether `url` may be fetched: https://, or http:// to a loopback host.
 * Sets an error naming the URL when not. */
cf_status cf_http_check_url(const char *url);
/* GET `url` into `sink`. `what` names the request in messages and progress
 * ("azure eastus page 2"). Non-2xx after retries is CF_ERR_NETWORK with the
 * status and URL; 401/403 are not retried. *out_http_status may be NULL. */
cf_status cf_http_get(const cf_http_config *cfg, const char *url, const char *what, const cf_http_sink *sink,
                      long *out_http_status);
/* GET into a buffer, refusing bodies larger than max_bytes. */
cf_status cf_http_get_buf(const cf_http_config *cfg, const char *url, const char *what, size_t max_bytes,
                          cf_buf *out);
/* Copies `url` with its user:password@ and the values of secret query
 * parameters (key, api_key, token, signature, password, X-Amz-Signature,
 * X-Amz-Credential, ...) replaced by "***", so credentials never reach
 * messages, progress lines, logs or the database (pricing/url_text.c). */
void cf_http_redact(const char *url, char *out, size_t cap);
/* Percent-encodes characters that are not allowed raw in a URL query
 * (space, quotes, and non-ASCII); keeps reserved delimiters such as & = ? $. */
void cf_url_encode_query(const char *url, cf_buf *out);
/* One query value or path segment from an answer (a page token, a service
 * id), every byte but RFC 3986's unreserved ones percent-encoded: a token
 * holding ' ', '&' or '#' must not break or change the URL. */
void cf_url_encode_value(const char *value, cf_buf *out);

#endif
