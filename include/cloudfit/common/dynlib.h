/* A shared library loaded on first use (common/dynlib.c): what only one
 * command needs (libcurl for `prices update`, libpq for a postgresql://
 * history) is not linked, so no other command pays for loading it and the
 * libraries it brings at process start. The caller keeps the handle for
 * the life of the process. */
#ifndef CLOUDFIT_COMMON_DYNLIB_H
#define CLOUDFIT_COMMON_DYNLIB_H
#include <stddef.h>

typedef struct {
    const char *name; /* the symbol, e.g. "PQfinish" */
    void **slot;      /* where its address goes (a function pointer's storage) */
} cf_dynlib_symbol;

/* dlopen(`soname`) and resolve every symbol into its slot. NULL with the
 * last error set (CF_ERR_UNAVAILABLE) when the library cannot be loaded
 * (hint `install_hint`) or lacks a symbol (the message names the first
 * missing one and `needed`, e.g. "libpq 10 or newer"); the library is
 * closed again then and the slots must not be used. */
void *cf_dynlib_open(const char *soname, const char *what, const char *install_hint, const char *needed,
                     const cf_dynlib_symbol *symbols, size_t n_symbols);
void cf_dynlib_close(void *lib);

#endif
