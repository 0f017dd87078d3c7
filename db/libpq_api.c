#include "libpq_api.h"

#include <dlfcn.h>

#include "cloudfit/status.h"

/* The soname of the libpq this was built against: the ABI libpq has kept
 * since PostgreSQL 8.0. */
#ifndef CF_LIBPQ_SONAME
#define CF_LIBPQ_SONAME "libpq.so.5"
#endif

#define RESOLVE(member, symbol)                                          \
    do {                                                                 \
        *(void **)&api.member = dlsym(lib, #symbol);                     \
        if (!api.member && !missing)                                     \
            missing = #symbol;                                           \
    } while (0)

const cf_libpq_api *cf_libpq(void)
{
    static cf_libpq_api api;
    static int loaded;
    if (loaded)
        return &api;
    void *lib = dlopen(CF_LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cf_error_set(CF_ERR_UNAVAILABLE, "cannot load libpq (%s): %s", CF_LIBPQ_SONAME, dlerror());
        cf_error_hint("install Debian's libpq5 package (a postgresql:// history needs it; nothing else does)");
        return NULL;
    }
    const char *missing = NULL;
    RESOLVE(connectdbParams, PQconnectdbParams);
    RESOLVE(conninfoParse, PQconninfoParse);
    RESOLVE(conninfoFree, PQconninfoFree);
    RESOLVE(status, PQstatus);
    RESOLVE(errorMessage, PQerrorMessage);
    RESOLVE(pass, PQpass);
    RESOLVE(socket, PQsocket);
    RESOLVE(setNoticeProcessor, PQsetNoticeProcessor);
    RESOLVE(finish, PQfinish);
    RESOLVE(sendQuery, PQsendQuery);
    RESOLVE(sendQueryParams, PQsendQueryParams);
    RESOLVE(consumeInput, PQconsumeInput);
    RESOLVE(isBusy, PQisBusy);
    RESOLVE(getResult, PQgetResult);
    RESOLVE(getCancel, PQgetCancel);
    RESOLVE(cancel, PQcancel);
    RESOLVE(freeCancel, PQfreeCancel);
    RESOLVE(resultStatus, PQresultStatus);
    RESOLVE(resultErrorField, PQresultErrorField);
    RESOLVE(ntuples, PQntuples);
    RESOLVE(nfields, PQnfields);
    RESOLVE(getvalue, PQgetvalue);
    RESOLVE(getlength, PQgetlength);
    RESOLVE(getisnull, PQgetisnull);
    RESOLVE(cmdTuples, PQcmdTuples);
    RESOLVE(cmdStatus, PQcmdStatus);
    RESOLVE(clear, PQclear);
    if (missing) {
        cf_error_set(CF_ERR_UNAVAILABLE, "%s has no %s: libpq 10 or newer is needed", CF_LIBPQ_SONAME, missing);
        dlclose(lib);
        return NULL;
    }
    loaded = 1; /* kept for the life of the process */
    return &api;
}
