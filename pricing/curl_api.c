#include "curl_api.h"

#include "cloudfit/common/dynlib.h"

/* The soname of the libcurl this was built against (CMake), else the ABI
 * every libcurl since 7.16 keeps. */
#ifndef CF_CURL_SONAME
#define CF_CURL_SONAME "libcurl.so.4"
#endif

const cf_curl_api *cf_curl(void)
{
    static cf_curl_api api;
    static int loaded;
    if (loaded)
        return &api;
    const cf_dynlib_symbol symbols[] = {
        {"curl_global_init", (void **)&api.global_init},
        {"curl_easy_init", (void **)&api.easy_init},
        {"curl_easy_setopt", (void **)&api.easy_setopt},
        {"curl_easy_perform", (void **)&api.easy_perform},
        {"curl_easy_getinfo", (void **)&api.easy_getinfo},
        {"curl_easy_cleanup", (void **)&api.easy_cleanup},
        {"curl_easy_strerror", (void **)&api.easy_strerror},
        {"curl_free", (void **)&api.free},
        {"curl_url", (void **)&api.url},
        {"curl_url_cleanup", (void **)&api.url_cleanup},
        {"curl_url_get", (void **)&api.url_get},
        {"curl_url_set", (void **)&api.url_set},
    };
    void *lib = cf_dynlib_open(CF_CURL_SONAME, "libcurl",
                               "install Debian's libcurl4 package (prices update needs it; nothing else does)",
                               "libcurl 7.78 or newer", symbols, sizeof symbols / sizeof symbols[0]);
    if (!lib)
        return NULL;
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        cf_error_set(CF_ERR_UNAVAILABLE, "libcurl could not initialise");
        cf_dynlib_close(lib);
        return NULL;
    }
    loaded = 1; /* kept for the life of the process */
    return &api;
}
