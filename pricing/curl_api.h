/* libcurl, loaded on first use (pricing/curl_api.c; private to pricing/).
 * Only `prices update` talks to the network, so only it pays for loading
 * libcurl and its TLS and protocol libraries (a third of the process
 * start-up of every other command, measured). Built against the Debian
 * libcurl headers; resolved at run time from its soname. */
#ifndef CF_PRICING_CURL_API_H
#define CF_PRICING_CURL_API_H
#include <curl/curl.h>

#include "cloudfit/status.h"

typedef struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_perform)(CURL *curl);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *curl);
    const char *(*easy_strerror)(CURLcode code);
    void (*free)(void *p);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *handle);
    CURLUcode (*url_get)(const CURLU *handle, CURLUPart what, char **part, unsigned int flags);
    CURLUcode (*url_set)(CURLU *handle, CURLUPart what, const char *part, unsigned int flags);
} cf_curl_api;

/* The loaded library (curl_global_init done), or NULL with the reason as
 * the last error (CF_ERR_UNAVAILABLE). */
const cf_curl_api *cf_curl(void);

#endif
