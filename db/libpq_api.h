/* libpq, loaded on first use (db/libpq_api.c; private to db/). Only a
 * postgresql:// history needs it, so only such a run pays for loading
 * libpq and the 20 libraries it brings (Kerberos, LDAP, TLS): linked, they
 * cost every command about 5 ms of process start-up (`recommend --help`
 * 7.0 against 1.9 ms, measured). Built against the Debian libpq headers;
 * resolved at run time from its soname. The members are the libpq
 * functions of the same name without the PQ prefix. */
#ifndef CF_DB_LIBPQ_API_H
#define CF_DB_LIBPQ_API_H
#include <libpq-fe.h>

typedef struct {
    __typeof__(PQconnectStartParams) *connectStartParams;
    __typeof__(PQconnectPoll) *connectPoll;
    __typeof__(PQconninfo) *conninfo;
    __typeof__(PQconninfoParse) *conninfoParse;
    __typeof__(PQconninfoFree) *conninfoFree;
    __typeof__(PQstatus) *status;
    __typeof__(PQerrorMessage) *errorMessage;
    __typeof__(PQpass) *pass;
    __typeof__(PQsocket) *socket;
    __typeof__(PQsetNoticeProcessor) *setNoticeProcessor;
    __typeof__(PQfinish) *finish;
    __typeof__(PQsendQuery) *sendQuery;
    __typeof__(PQsendQueryParams) *sendQueryParams;
    __typeof__(PQsetSingleRowMode) *setSingleRowMode;
    __typeof__(PQconsumeInput) *consumeInput;
    __typeof__(PQisBusy) *isBusy;
    __typeof__(PQgetResult) *getResult;
    __typeof__(PQgetCancel) *getCancel;
    __typeof__(PQcancel) *cancel;
    __typeof__(PQfreeCancel) *freeCancel;
    __typeof__(PQresultStatus) *resultStatus;
    __typeof__(PQresultErrorField) *resultErrorField;
    __typeof__(PQntuples) *ntuples;
    __typeof__(PQnfields) *nfields;
    __typeof__(PQgetvalue) *getvalue;
    __typeof__(PQgetlength) *getlength;
    __typeof__(PQgetisnull) *getisnull;
    __typeof__(PQcmdTuples) *cmdTuples;
    __typeof__(PQcmdStatus) *cmdStatus;
    __typeof__(PQclear) *clear;
} cf_libpq_api;

/* The loaded library, or NULL with the reason as the last error
 * (CF_ERR_UNAVAILABLE) and a hint naming the package. */
const cf_libpq_api *cf_libpq(void);

#endif
