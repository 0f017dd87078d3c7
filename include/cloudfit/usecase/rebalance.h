/* `rebalance` (docs/spot.md "Dynamic batching") as a library session: the
 * batch controller (cloudfit/advisor/rebalance.h) behind its JSON-lines
 * protocol, one input line in, one answer line out. The session owns what
 * happens per line: reading the per-worker times, the controller's
 * update, a line not understood answered unchanged with "skipped" (the
 * training loop keeps running), a worker under the floor warned about
 * once per fall. What stays with the caller: options, reading the lines
 * and writing each answer at once. */
#ifndef CLOUDFIT_USECASE_REBALANCE_H
#define CLOUDFIT_USECASE_REBALANCE_H
#include <stdio.h>
#include "cloudfit/advisor/rebalance.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/usecase/evidence.h"

typedef struct {
    long global_batch;
    int workers;                       /* 1 to CF_REBALANCE_MAX_WORKERS (else CF_ERR_USAGE) */
    const int *batches;                /* the starting batch per worker; NULL = equal shares */
    const int *max_batches;            /* a limit per worker; NULL = none */
    cf_rebalance_settings settings;    /* cf_rebalance_defaults() with the caller's changes */
    const char *source;                /* how the input is named in messages ("stdin") */
    cf_note_fn note;                   /* skipped lines and workers under the floor (warnings); NULL = nothing */
    void *note_ctx;
} cf_rebalance_request;

typedef struct {
    cf_rebalance controller;
    cf_rebalance_request req;
    double *times_s;
    int warned[CF_REBALANCE_MAX_WORKERS];
    long lines, skipped;               /* input lines so far, and those not understood */
} cf_rebalance_session;

/* CF_OK; CF_ERR_USAGE naming the option (--workers, --global-batch,
 * --window, --max-batch, --batches) for a request the controller cannot
 * take: more than CF_REBALANCE_MAX_WORKERS workers or a window over
 * CF_REBALANCE_MAX_WINDOW, fewer samples than workers, limits that cannot
 * hold the global batch, starting batches that do not sum to it or pass
 * a limit; the controller's CF_ERR_INVALID for settings out of range.
 * cf_rebalance_session_close `s` either way. */
cf_status cf_rebalance_session_open(const cf_rebalance_request *req, cf_rebalance_session *s);
/* Why an input line's text was not read. */
enum {
    CF_REBALANCE_LINE_READ = 0,
    CF_REBALANCE_LINE_TOO_LONG = 1, /* longer than CF_REBALANCE_MAX_LINE */
    CF_REBALANCE_LINE_NUL = 2       /* holds a NUL byte: not text */
};
/* One input line (`unread`: one of the above): its answer line appended
 * to `answer`, or nothing for a blank line. CF_ERR_NOMEM only: a line not
 * understood is a warning and an answer with the batches unchanged. */
cf_status cf_rebalance_session_line(cf_rebalance_session *s, const char *line, int unread, cf_buf *answer);
/* Room for one input line: the protocol's limit, its line end and a NUL. */
#define CF_REBALANCE_LINE_BUFFER (CF_REBALANCE_MAX_LINE + 3)
/* One input line from `in` into `line` (CF_REBALANCE_LINE_BUFFER bytes),
 * its line end kept; 0 at the end of the input, -1 when it cannot be read
 * (EIO, a directory: the error set, CF_ERR_SYSTEM or CF_ERR_IO; a read
 * error was taken for the end of the input, exit 0) or a stop signal came
 * (CF_ERR_INTERRUPTED). On an input with O_NONBLOCK it waits for the next
 * line (poll): EAGAIN is no line yet, not an error. Bytes are counted as read
 * (fgets and strlen stopped at a NUL, which cut a line short or split it
 * into two answers); the text of a line over the protocol's limit (its
 * line end not counted) or holding a NUL is not kept, and *unread says
 * which (CF_REBALANCE_LINE_TOO_LONG, CF_REBALANCE_LINE_NUL). */
int cf_rebalance_read_input(FILE *in, char *line, int *unread);
void cf_rebalance_session_close(cf_rebalance_session *s);

#endif
