/* Status codes and the last-error text (libgit2 errors.h style).
 *
 * Library functions return a cf_status. On failure they set a message (and
 * optionally a hint) for the calling thread; only the CLI prints it. */
#ifndef CLOUDFIT_STATUS_H
#define CLOUDFIT_STATUS_H

#ifdef __cplusplus
extern "C" { /* the CUDA translation units are C++ */
#endif

typedef enum {
    CF_OK = 0,
    CF_ERR_USAGE,        /* bad command-line use */
    CF_ERR_IO,           /* a file could not be read or written */
    CF_ERR_INVALID,      /* input data is malformed or out of range */
    CF_ERR_NOMEM,        /* allocation failed */
    CF_ERR_INFEASIBLE,   /* no configuration satisfies the constraints */
    CF_ERR_DB,           /* the SQLite history could not be used */
    CF_ERR_UNAVAILABLE,  /* a backend or device is not available here */
    CF_ERR_NETWORK,      /* a network fetch failed */
    CF_ERR_INTERNAL,     /* a bug */
    CF_ERR_WRITE,        /* a result could not be written (--out-file, launch specs,
                            the history folder): not the input's fault */
    CF_ERR_INTERRUPTED,  /* a stop signal (SIGINT, SIGTERM, SIGHUP) arrived: see
                            cloudfit/common/proc.h */
    CF_ERR_DOES_NOT_FIT, /* a training engine's answer: the model state or the batch does
                            not fit the device's memory (or the engine's memory limit);
                            the profiler records it as the memory ceiling */
    CF_ERR_SYSTEM        /* the system refused a resource while reading an input (too many
                            open files, memory, an I/O error): not the input's fault */
} cf_status;

#if defined(__GNUC__)
#define CF_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CF_PRINTF(fmt, args)
#endif

/* Sets the thread's last error (replacing any hint) and returns `status`,
 * so that `return cf_error_set(CF_ERR_IO, "...")` reads naturally. */
cf_status cf_error_set(cf_status status, const char *fmt, ...) CF_PRINTF(2, 3);
/* Adds a hint line ("hint: ...") to the current error. */
void cf_error_hint(const char *fmt, ...) CF_PRINTF(1, 2);
/* Prefixes the current message with "prefix: " (used to add a file name). */
void cf_error_prefix(const char *fmt, ...) CF_PRINTF(1, 2);
const char *cf_error_message(void);   /* "" when none */
const char *cf_error_hint_text(void); /* "" when none */
cf_status cf_error_status(void);
void cf_error_clear(void);
const char *cf_status_name(cf_status status);

#ifdef __cplusplus
}
#endif

#endif
