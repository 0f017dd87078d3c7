#include "cloudfit/usecase/rebalance.h"

#include "cloudfit/common/fileio.h"
#include "cloudfit/common/proc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void warn(const cf_rebalance_session *s, const char *text)
{
    if (s->req.note)
        s->req.note(s->req.note_ctx, CF_NOTE_WARNING, text);
}

/* The request's numbers are the command's options (--global-batch,
 * --workers, --window, --batches, --max-batch): one the controller cannot
 * take is a bad option value, CF_ERR_USAGE naming the option (exit 2), not
 * bad input. What is left for cf_rebalance_init to refuse is the settings'
 * own range (gains, smoothing), CF_ERR_INVALID. */
static cf_status check_options(const cf_rebalance_request *req)
{
    int n = req->workers;
    if (n < 1 || n > CF_REBALANCE_MAX_WORKERS)
        return cf_error_set(CF_ERR_USAGE, "option '--workers' expects 1 to %d, got %d", CF_REBALANCE_MAX_WORKERS, n);
    if (req->global_batch < n)
        return cf_error_set(CF_ERR_USAGE,
                            "option '--global-batch' expects at least one sample per worker, got %ld for %d workers",
                            req->global_batch, n);
    if (req->settings.window < 1 || req->settings.window > CF_REBALANCE_MAX_WINDOW)
        return cf_error_set(CF_ERR_USAGE, "option '--window' expects 1 to %d iterations, got %d", CF_REBALANCE_MAX_WINDOW,
                            req->settings.window);
    if (req->max_batches) {
        long room = 0;
        int unlimited = 0;
        for (int i = 0; i < n; i++) {
            room += req->max_batches[i] > 0 ? req->max_batches[i] : 0;
            unlimited |= req->max_batches[i] <= 0;
        }
        if (!unlimited && room < req->global_batch)
            return cf_error_set(CF_ERR_USAGE,
                                "option '--max-batch' lets the workers hold %ld samples together, fewer than "
                                "--global-batch %ld",
                                room, req->global_batch);
    }
    long sum = 0;
    for (int i = 0; req->batches && i < n; i++) {
        int limit = req->max_batches && req->max_batches[i] > 0 ? req->max_batches[i] : 0;
        if (req->batches[i] < 1)
            return cf_error_set(CF_ERR_USAGE, "option '--batches' expects positive batches, got %d for worker %d",
                                req->batches[i], i);
        if (limit && req->batches[i] > limit)
            return cf_error_set(CF_ERR_USAGE, "option '--batches' gives worker %d %d samples, over its --max-batch %d",
                                i, req->batches[i], limit);
        sum += req->batches[i];
    }
    if (req->batches && sum != req->global_batch)
        return cf_error_set(CF_ERR_USAGE, "option '--batches' sums to %ld, not --global-batch %ld", sum, req->global_batch);
    return CF_OK;
}

cf_status cf_rebalance_session_open(const cf_rebalance_request *req, cf_rebalance_session *s)
{
    memset(s, 0, sizeof *s);
    s->req = *req;
    cf_status st = check_options(req);
    if (st != CF_OK)
        return st;
    st = cf_rebalance_init(&s->controller, req->workers, req->global_batch, req->batches, req->max_batches,
                           &req->settings);
    if (st != CF_OK) {
        cf_error_prefix("rebalance");
        return st;
    }
    if (!(s->times_s = malloc((size_t)req->workers * sizeof *s->times_s)))
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    return CF_OK;
}

/* A worker whose share fell under the floor, once per fall. */
static void warn_below_floor(cf_rebalance_session *s)
{
    const cf_rebalance *c = &s->controller;
    const cf_rebalance_request *req = &s->req;
    for (int i = 0; i < req->workers; i++) {
        if (c->below_floor[i] && !s->warned[i]) {
            char text[400];
            snprintf(text, sizeof text,
                     "%s:%ld: worker %d's batch %d is below %.0f%% of an equal share (%.0f of %ld): it adds "
                     "little; if it is not several times slower per sample, the times fed are not compute times "
                     "(docs/spot.md)",
                     req->source, s->lines, i, c->batch[i], 100 * req->settings.min_share,
                     (double)req->global_batch / req->workers, req->global_batch);
            warn(s, text);
        }
        s->warned[i] = c->below_floor[i];
    }
}

cf_status cf_rebalance_session_line(cf_rebalance_session *s, const char *line, int unread, cf_buf *answer)
{
    s->lines++;
    if (unread == CF_REBALANCE_LINE_READ && cf_rebalance_line_blank(line))
        return CF_OK;
    /* A line not understood is reported and answered unchanged: one bad
     * write must not stop a training run. */
    int changed = 0;
    cf_status st = unread == CF_REBALANCE_LINE_TOO_LONG
                       ? cf_error_set(CF_ERR_INVALID, "%s:%ld: a line longer than the %d bytes the protocol reads",
                                      s->req.source, s->lines, CF_REBALANCE_MAX_LINE)
                   : unread == CF_REBALANCE_LINE_NUL
                       ? cf_error_set(CF_ERR_INVALID, "%s:%ld: a line holding a NUL byte, not text", s->req.source,
                                      s->lines)
                       : cf_rebalance_read_line(line, s->req.source, s->lines, s->req.workers, s->times_s);
    if (st == CF_ERR_INTERRUPTED)
        return st; /* a stop, not a bad line */
    if (st == CF_OK && (changed = cf_rebalance_observe(&s->controller, s->times_s)) < 0) {
        if ((st = cf_error_status()) == CF_ERR_NOMEM)
            return st; /* not the line's fault */
        cf_error_prefix("%s:%ld", s->req.source, s->lines);
    }
    char reason[160] = "";
    if (st != CF_OK) {
        snprintf(reason, sizeof reason, "%s", cf_error_message());
        char text[200];
        snprintf(text, sizeof text, "%s (line skipped)", reason);
        warn(s, text);
        cf_error_clear();
        s->skipped++;
        changed = 0;
    }
    warn_below_floor(s);
    cf_rebalance_answer(&s->controller, changed, st != CF_OK ? reason : NULL, answer);
    return cf_buf_failed(answer) ? cf_error_set(CF_ERR_NOMEM, "out of memory") : CF_OK;
}

void cf_rebalance_session_close(cf_rebalance_session *s)
{
    free(s->times_s);
    cf_rebalance_free(&s->controller);
    memset(s, 0, sizeof *s);
}

/* Standard input with O_NONBLOCK (set on an open file description the
 * caller shares: an event loop's pipe) says EAGAIN when the next line is
 * not written yet: that is neither its end nor an error (it was taken for
 * a read error: exit 3 as soon as the training loop was slower than the
 * filter). Waits until it can be read, or a stop signal comes. 1: read
 * again; 0: a real error or end (errno kept); -1: stopped (the error set). */
static int wait_for_input(FILE *in)
{
    int e = errno;
    if (!ferror(in) || (e != EAGAIN && e != EWOULDBLOCK))
        return 0;
    struct pollfd fds[2] = {{.fd = fileno(in), .events = POLLIN}, {.fd = cf_interrupt_fd(), .events = POLLIN}};
    for (;;) {
        int ready = poll(fds, fds[1].fd >= 0 ? 2 : 1, -1);
        if (cf_interrupted())
            return cf_interrupt_check(), -1;
        if (ready > 0)
            break;
        if (ready < 0 && errno != EINTR)
            return 0;
    }
    if (fds[0].revents & POLLNVAL) {
        errno = EBADF;
        return 0;
    }
    clearerr(in);
    errno = 0;
    return 1;
}

int cf_rebalance_read_input(FILE *in, char *line, int *unread)
{
    const size_t cap = CF_REBALANCE_LINE_BUFFER;
    size_t len = 0;
    int ch, nul = 0, got = 0, waited = 0;
    *unread = CF_REBALANCE_LINE_READ;
    errno = 0;
    while ((ch = getc(in)) != EOF || (waited = wait_for_input(in)) != 0) {
        if (ch == EOF) {
            if (waited < 0)
                return -1;
            continue;
        }
        got = 1;
        nul |= ch == 0;
        if (len < cap - 1)
            line[len] = (char)ch;
        len++;
        if (ch == '\n')
            break;
    }
    size_t text = len;
    if (text > 0 && ch == '\n')
        text--;
    if (text > 0 && len <= cap - 1 && line[text - 1] == '\r')
        text--;
    if (text > CF_REBALANCE_MAX_LINE)
        *unread = CF_REBALANCE_LINE_TOO_LONG;
    else if (nul)
        *unread = CF_REBALANCE_LINE_NUL;
    line[*unread ? 0 : len] = '\0';
    if (!got && ferror(in)) /* not the end of the input: a partial line was answered, this is not */
        return cf_read_failure("read", "standard input", errno ? errno : EIO), -1;
    return got;
}
