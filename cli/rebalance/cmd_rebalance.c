/* cloudfit rebalance (docs/spot.md "Dynamic batching"): the library's
 * batch controller (advisor/plan/rebalance.c) as a JSON-lines filter. One line
 * in per training iteration,
 *     {"compute_s": [0.31, 0.12]}          compute seconds per worker, in worker order
 * one line out for each, flushed at once:
 *     {"batches": [64, 192], "changed": true, "updates": 1, "imbalance": 0.41, "band": 0.05}
 * so a training loop can write a line and read its answer. Blank lines are
 * ignored; a line that is not understood (or longer than
 * CF_REBALANCE_MAX_LINE) is reported on stderr and answered with the
 * batches unchanged and "skipped": the loop keeps running. A worker whose
 * share falls under the floor is warned about once per fall. The protocol
 * is the library's (cloudfit/usecase/rebalance.h, advisor/plan/rebalance_lines.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/number.h"
#include "cloudfit/usecase/rebalance.h"
#include "commands.h"
#include "cloudfit/common/proc.h"
#include "exit_codes.h"
#include "io/evidence.h"
#include "io/spec_load.h"
#include "log.h"
#include "term/output.h"

/* The message is printed by the caller (cf_log_error with its own format);
 * this adds the usage line and gives the exit code. */
static int usage(void)
{
    cf_log_hint("usage: cloudfit rebalance --global-batch M --workers N [--batches B1,B2,...] [--max-batch B] "
                "[--dead-band 3%%] [--min-share 25%%] [--window 20] [--controller p|pi] < compute_times.jsonl");
    return CF_EXIT_USAGE;
}

/* "128,128" → values; count in *n (at most cap). Every item is a number:
 * an empty one is refused wherever it stands ("128,128," was read as two
 * items while ",128,128" was refused). 0 or the exit code. */
static int parse_ints(const char *option, const char *text, int *out, int cap, int *n)
{
    *n = 0;
    if (!*text) {
        cf_log_error("option '--%s' expects positive integers separated by commas, got '' (an empty list)", option);
        return usage();
    }
    for (const char *p = text;; p++) {
        size_t len = strcspn(p, ",");
        char item[16];
        int v = 0;
        if (*n == cap) {
            cf_log_error("option '--%s' takes at most %d values, one per worker, got '%s'", option, cap, text);
            return usage();
        }
        if (len >= sizeof item ||
            (memcpy(item, p, len), item[len] = '\0', cf_number_int(item, 1, 100000000, &v)) != CF_NUMBER_OK) {
            cf_log_error("option '--%s' expects positive integers (1 to 100000000) separated by commas, got '%s'",
                         option, text);
            return usage();
        }
        out[(*n)++] = v;
        p += len;
        if (!*p)
            return 0;
    }
}

static int settings_from(const cf_cli_options *o, cf_rebalance_settings *s)
{
    *s = cf_rebalance_defaults();
    /* both checked as the options were read (cf_cli_option_check_value) */
    if (o->dead_band)
        s->dead_band = cf_cli_parse_fraction(o->dead_band);
    if (o->min_share)
        s->min_share = cf_cli_parse_fraction(o->min_share);
    if (o->window > 0)
        s->window = o->window;
    if (o->controller) {
        if (strcmp(o->controller, "p") == 0)
            s->kind = CF_REBALANCE_P;
        else if (strcmp(o->controller, "pi") == 0)
            s->kind = CF_REBALANCE_PI;
        else {
            cf_log_error("option '--controller' expects p or pi, got '%s'", o->controller);
            return usage();
        }
    }
    return 0;
}

int cmd_rebalance(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    (void)argv;
    if (n_positional) {
        cf_log_error("rebalance reads standard input and takes no file arguments");
        return usage();
    }
    if (o->global_batch < 1) {
        cf_log_error("missing --global-batch M");
        return usage();
    }
    static int batches[CF_REBALANCE_MAX_WORKERS], limits[CF_REBALANCE_MAX_WORKERS];
    int n_batches = 0, n_limits = 0, rc = 0;
    if (o->batches && (rc = parse_ints("batches", o->batches, batches, CF_REBALANCE_MAX_WORKERS, &n_batches)))
        return rc;
    if (o->max_batch && (rc = parse_ints("max-batch", o->max_batch, limits, CF_REBALANCE_MAX_WORKERS, &n_limits)))
        return rc;
    int workers = o->workers > 0 ? o->workers : n_batches;
    if (workers < 1) {
        cf_log_error("give --workers N or --batches B1,B2,...");
        return usage();
    }
    if (n_batches && n_batches != workers) {
        cf_log_error("--batches lists a batch per worker (%s)", o->batches);
        return usage();
    }
    if (n_limits > 1 && n_limits != workers) {
        cf_log_error("--max-batch takes one value or one per worker (%s)", o->max_batch);
        return usage();
    }
    if (n_limits == 1)
        for (int i = 1; i < workers && i < CF_REBALANCE_MAX_WORKERS; i++)
            limits[i] = limits[0];
    cf_rebalance_request req = {.global_batch = o->global_batch, .workers = workers,
                                .batches = n_batches ? batches : NULL, .max_batches = n_limits ? limits : NULL,
                                .source = "stdin", .note = cf_cli_note};
    if ((rc = settings_from(o, &req.settings)))
        return rc;
    cf_rebalance_session *session = malloc(sizeof *session);
    if (!session) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    if (cf_rebalance_session_open(&req, session) != CF_OK && (rc = cf_report_error()) == CF_EXIT_USAGE)
        usage(); /* an option's value: the message names it */
    static char line[CF_REBALANCE_LINE_BUFFER];
    int unread = 0;
    /* A stop signal ends the filter: at once while it waits for a line
     * (nothing to finish or undo), else before the next one (it answered
     * every later line "skipped: interrupted" and exited 0). */
    for (;;) {
        if (rc == 0 && cf_interrupt_check() != CF_OK)
            rc = cf_report_error();
        if (rc)
            break;
        cf_proc_abortable_begin();
        int got = cf_rebalance_read_input(stdin, line, &unread);
        cf_proc_abortable_end();
        if (got < 0)
            rc = cf_report_error();
        if (got <= 0)
            break;
        cf_buf answer = CF_BUF_INIT;
        if (cf_rebalance_session_line(session, line, unread, &answer) != CF_OK) {
            rc = cf_report_error();
        } else if (answer.len) { /* each answer as it is computed: the result is a stream of JSON lines */
            cf_cli_result out;
            rc = cf_cli_result_stage_as(CF_ESCAPE_JSON, NULL, answer.data, answer.len, NULL, &out);
            if (rc == 0)
                rc = cf_cli_result_publish(&out);
            cf_cli_result_discard(&out);
        }
        cf_buf_free(&answer);
    }
    if (session->skipped)
        cf_log_warning("%ld of %ld input lines skipped", session->skipped, session->lines);
    cf_rebalance_session_close(session);
    free(session);
    return rc;
}
