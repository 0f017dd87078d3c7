#include "cloudfit/common/dynlib.h"

#include <dlfcn.h>

#include "cloudfit/status.h"

void *cf_dynlib_open(const char *soname, const char *what, const char *install_hint, const char *needed,
                     const cf_dynlib_symbol *symbols, size_t n_symbols)
{
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cf_error_set(CF_ERR_UNAVAILABLE, "cannot load %s (%s): %s", what, soname, dlerror());
        if (install_hint)
            cf_error_hint("%s", install_hint);
        return NULL;
    }
    for (size_t i = 0; i < n_symbols; i++) {
        *symbols[i].slot = dlsym(lib, symbols[i].name);
        if (!*symbols[i].slot) {
            cf_error_set(CF_ERR_UNAVAILABLE, "%s has no %s: %s is needed", soname, symbols[i].name, needed);
            dlclose(lib);
            return NULL;
        }
    }
    return lib;
}

void cf_dynlib_close(void *lib)
{
    if (lib)
        dlclose(lib);
}
