#include "curl_api.h"

#include <dlfcn.h>
#include <stdio.h>

/* The soname of the libcurl this was built against (CMake), else the ABI
 * every libcurl since 7.16 keeps. */
#ifndef CF_CURL_SONAME
#define CF_CURL_SONAME "libcurl.so.4"
#endif

static int resolve(void *lib, const char *name, void **slot, const char **missing)
{
    *slot = dlsym(lib, name);
    if (!*slot && !*missing)
        *missing = name;
    return *slot != NULL;
}

const cf_curl_api *cf_curl(void)
{
    static cf_curl_api api;
    static int loaded;
    if (loaded)
        return &api;
    void *lib = dlopen(CF_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cf_error_set(CF_ERR_UNAVAILABLE, "cannot load libcurl (%s): %s", CF_CURL_SONAME, dlerror());
        cf_error_hint("install Debian's libcurl4 package (prices update needs it; nothing else does)");
        return NULL;
    }
    const char *missing = NULL;
    resolve(lib, "curl_global_init", (void **)&api.global_init, &missing);
    resolve(lib, "curl_easy_init", (void **)&api.easy_init, &missing);
    resolve(lib, "curl_easy_setopt", (void **)&api.easy_setopt, &missing);
    resolve(lib, "curl_easy_perform", (void **)&api.easy_perform, &missing);
    resolve(lib, "curl_easy_getinfo", (void **)&api.easy_getinfo, &missing);
    resolve(lib, "curl_easy_cleanup", (void **)&api.easy_cleanup, &missing);
    resolve(lib, "curl_easy_strerror", (void **)&api.easy_strerror, &missing);
    resolve(lib, "curl_free", (void **)&api.free, &missing);
    resolve(lib, "curl_url", (void **)&api.url, &missing);
    resolve(lib, "curl_url_cleanup", (void **)&api.url_cleanup, &missing);
    resolve(lib, "curl_url_get", (void **)&api.url_get, &missing);
    resolve(lib, "curl_url_set", (void **)&api.url_set, &missing);
    if (missing) {
        cf_error_set(CF_ERR_UNAVAILABLE, "%s has no %s: libcurl 7.78 or newer is needed", CF_CURL_SONAME, missing);
        dlclose(lib);
        return NULL;
    }
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        cf_error_set(CF_ERR_UNAVAILABLE, "libcurl could not initialise");
        dlclose(lib);
        return NULL;
    }
    loaded = 1; /* kept for the life of the process */
    return &api;
}
