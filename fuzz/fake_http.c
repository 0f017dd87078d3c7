#include "fake_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

static const char *g_data;
static size_t g_size, g_pos;

void cf_fake_http_serve(const char *data, size_t size)
{
    g_data = data;
    g_size = size;
    g_pos = 0;
}

/* The next document: [start, end) of the input. */
static int next_document(const char **start, size_t *len)
{
    static const char sep[] = "\n--cloudfit-fuzz--\n";
    if (g_pos > g_size || !g_data)
        return 0;
    const char *from = g_data + g_pos;
    size_t left = g_size - g_pos;
    const char *hit = NULL;
    for (size_t i = 0; i + sizeof sep - 1 <= left; i++)
        if (memcmp(from + i, sep, sizeof sep - 1) == 0) {
            hit = from + i;
            break;
        }
    *start = from;
    *len = hit ? (size_t)(hit - from) : left;
    g_pos = hit ? (size_t)(hit - g_data) + sizeof sep - 1 : g_size + 1;
    return 1;
}

void cf_http_config_from_env(cf_http_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
}

cf_status cf_http_check_url(const char *url)
{
    (void)url;
    return CF_OK;
}

cf_status cf_http_get(const cf_http_config *cfg, const char *url, const char *what, const cf_http_sink *sink,
                      long *out_http_status)
{
    (void)cfg;
    (void)url;
    const char *doc = NULL;
    size_t len = 0;
    if (!next_document(&doc, &len)) {
        if (out_http_status)
            *out_http_status = 404;
        return cf_error_set(CF_ERR_NETWORK, "%s: GET failed: HTTP 404", what);
    }
    if (out_http_status)
        *out_http_status = 200;
    if (sink->reset)
        sink->reset(sink->data);
    /* In pieces of varying size, as a network delivers them. */
    size_t piece = 1 + len % 4093;
    for (size_t off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        if (sink->write(sink->data, doc + off, n) != 0)
            return cf_error_status() != CF_OK ? cf_error_status()
                                              : cf_error_set(CF_ERR_INVALID, "%s: response rejected", what);
    }
    return CF_OK;
}
