/* How long library operations report progress (a profile's runs, a
 * search's probes, a price download's bytes, a large file's rows): the
 * library calls a function the caller gave it and never prints; the CLI
 * draws a bar or writes lines (cli/term/progress.c). */
#ifndef CLOUDFIT_COMMON_PROGRESS_H
#define CLOUDFIT_COMMON_PROGRESS_H

/* `done` of `total` units are finished (total 0 = not known, or an upper
 * bound when the operation may stop early: the caller's label says so);
 * `unit` names them ("runs", "rows", "bytes"); `what` is the step now under
 * way, or NULL. */
typedef void (*cf_progress_count_fn)(void *ctx, double done, double total, const char *unit, const char *what);

/* Calls `fn` when it is set. */
static inline void cf_progress_report(cf_progress_count_fn fn, void *ctx, double done, double total,
                                      const char *unit, const char *what)
{
    if (fn)
        fn(ctx, done, total, unit, what);
}

#endif
