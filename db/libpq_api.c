#include "libpq_api.h"

#include "cloudfit/common/dynlib.h"

/* The soname of the libpq this was built against: the ABI libpq has kept
 * since PostgreSQL 8.0. */
#ifndef CF_LIBPQ_SONAME
#define CF_LIBPQ_SONAME "libpq.so.5"
#endif

const cf_libpq_api *cf_libpq(void)
{
    static cf_libpq_api api;
    static int loaded;
    if (loaded)
        return &api;
    const cf_dynlib_symbol symbols[] = {
        {"PQconnectStartParams", (void **)&api.connectStartParams},
        {"PQconnectPoll", (void **)&api.connectPoll},
        {"PQconninfo", (void **)&api.conninfo},
        {"PQconninfoParse", (void **)&api.conninfoParse},
        {"PQconninfoFree", (void **)&api.conninfoFree},
        {"PQstatus", (void **)&api.status},
        {"PQerrorMessage", (void **)&api.errorMessage},
        {"PQpass", (void **)&api.pass},
        {"PQsocket", (void **)&api.socket},
        {"PQsetNoticeProcessor", (void **)&api.setNoticeProcessor},
        {"PQfinish", (void **)&api.finish},
        {"PQsendQuery", (void **)&api.sendQuery},
        {"PQsendQueryParams", (void **)&api.sendQueryParams},
        {"PQsetSingleRowMode", (void **)&api.setSingleRowMode},
        {"PQconsumeInput", (void **)&api.consumeInput},
        {"PQisBusy", (void **)&api.isBusy},
        {"PQgetResult", (void **)&api.getResult},
        {"PQgetCancel", (void **)&api.getCancel},
        {"PQcancel", (void **)&api.cancel},
        {"PQfreeCancel", (void **)&api.freeCancel},
        {"PQresultStatus", (void **)&api.resultStatus},
        {"PQresultErrorField", (void **)&api.resultErrorField},
        {"PQntuples", (void **)&api.ntuples},
        {"PQnfields", (void **)&api.nfields},
        {"PQgetvalue", (void **)&api.getvalue},
        {"PQgetlength", (void **)&api.getlength},
        {"PQgetisnull", (void **)&api.getisnull},
        {"PQcmdTuples", (void **)&api.cmdTuples},
        {"PQcmdStatus", (void **)&api.cmdStatus},
        {"PQclear", (void **)&api.clear},
    };
    if (!cf_dynlib_open(CF_LIBPQ_SONAME, "libpq",
                        "install Debian's libpq5 package (a postgresql:// history needs it; nothing else does)",
                        "libpq 10 or newer", symbols, sizeof symbols / sizeof symbols[0]))
        return NULL;
    loaded = 1; /* kept for the life of the process */
    return &api;
}
