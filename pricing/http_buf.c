/* cf_http_get_buf: a response into memory, with a size limit, over
 * whatever cf_http_get is linked (libcurl in pricing/http.c, the fuzz
 * targets' fake transport in fuzz/fake_http.c). */
#include "http.h"

#include <stdlib.h>

typedef struct {
    cf_buf *buf;
    size_t max_bytes;
    const char *what;
    const char *url;
} buf_sink;

static int buf_write(void *data, const char *bytes, size_t len)
{
    buf_sink *s = data;
    if (s->buf->len + len > s->max_bytes) {
        /* The server's answer, not the user's input: a failed fetch (exit
         * 1), whether the body was that large or inflated to it (gzip). */
        char shown[2048];
        cf_http_redact(s->url, shown, sizeof shown);
        cf_error_set(CF_ERR_NETWORK, "%s: response larger than %zu bytes (decompressed) from %s; refusing it", s->what,
                     s->max_bytes, shown);
        return 1;
    }
    cf_buf_append(s->buf, bytes, len);
    if (cf_buf_failed(s->buf)) {
        cf_error_set(CF_ERR_NOMEM, "%s: out of memory reading the response", s->what);
        return 1;
    }
    return 0;
}

static void buf_reset(void *data)
{
    buf_sink *s = data;
    s->buf->len = 0;
    if (s->buf->data)
        s->buf->data[0] = '\0';
}

cf_status cf_http_get_buf(const cf_http_config *cfg, const char *url, const char *what, size_t max_bytes,
                          cf_buf *out)
{
    cf_error_clear();
    buf_sink s = {out, max_bytes, what, url};
    cf_http_sink sink = {buf_write, buf_reset, &s};
    cf_status st = cf_http_get(cfg, url, what, &sink, NULL);
    if (st == CF_OK && !out->data)
        cf_buf_puts(out, ""); /* an empty body is still a string */
    return st;
}
