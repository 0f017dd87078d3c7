/* cloudfit rebalance (docs/spot.md "Dynamic batching"): the library's
 * batch controller (advisor/rebalance.c) as a JSON-lines filter. One line
 * in per training iteration,
 *     {"times_s": [0.31, 0.12]}            seconds per worker, in worker order
 * one line out for each, flushed at once:
 *     {"batches": [64, 192], "changed": true, "updates": 1, "imbalance": 0.41}
 * so a training loop can write a line and read its answer. Blank lines are
 * ignored; anything else is an error naming the line (exit 3). The
 * protocol is the library's (advisor/rebalance_lines.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/rebalance.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/spec_load.h"
#include "log.h"
#include "cloudfit/common/number.h"

/* The message is printed by the caller (cf_log_error with its own format);
 * this adds the usage line and gives the exit code. */
static int usage(void)
{
    cf_log_hint("usage: cloudfit rebalance --global-batch M --workers N [--batches B1,B2,...] [--max-batch B] "
                "[--dead-band 3%%] [--window 20] [--controller p|pi] < times.jsonl");
    return CF_EXIT_USAGE;
}

/* "128,128" → values; count in *n (at most cap). 0 or the exit code. */
static int parse_ints(const char *option, const char *text, int *out, int cap, int *n)
{
    *n = 0;
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, ",");
        char item[16];
        int v = 0;
        if (len >= sizeof item || *n == cap ||
            (memcpy(item, p, len), item[len] = '\0', cf_number_int(item, 1, 100000000, &v)) != CF_NUMBER_OK) {
            cf_log_error("option '--%s' expects positive integers separated by commas, got '%s'", option, text);
            return usage();
        }
        out[(*n)++] = v;
        p += len + (p[len] == ',');
    }
    if (*n)
        return 0;
    cf_log_error("empty list '%s'", text);
    return usage();
}

static int settings_from(const cf_cli_options *o, cf_rebalance_settings *s)
{
    *s = cf_rebalance_defaults();
    if (o->dead_band) {
        s->dead_band = cf_cli_parse_fraction(o->dead_band);
        if (s->dead_band < 0) {
            cf_log_error("option '--dead-band' expects a percentage below 100%% (e.g. 3%%), got '%s'", o->dead_band);
            return usage();
        }
    }
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
    if (n_limits == 1)
        for (int i = 1; i < workers && i < CF_REBALANCE_MAX_WORKERS; i++)
            limits[i] = limits[0];
    else if (n_limits && n_limits != workers) {
        cf_log_error("--max-batch takes one value or one per worker (%s)", o->max_batch);
        return usage();
    }
    cf_rebalance_settings s;
    if ((rc = settings_from(o, &s)))
        return rc;
    cf_rebalance *c = malloc(sizeof *c);
    if (!c) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    if (cf_rebalance_init(c, workers, o->global_batch, n_batches ? batches : NULL, n_limits ? limits : NULL, &s) !=
        CF_OK) {
        free(c);
        cf_error_prefix("rebalance");
        return cf_report_error();
    }
    /* Lines are read into a buffer of the protocol's limit, never more:
     * a 500 MB line cost 493 MB of memory with getline. */
    char *line = malloc(CF_REBALANCE_MAX_LINE_BYTES + 2);
    long number = 0;
    double *times = malloc((size_t)workers * sizeof *times);
    while (rc == 0 && times && line && fgets(line, CF_REBALANCE_MAX_LINE_BYTES + 2, stdin)) {
        number++;
        size_t len = strlen(line);
        if (len > CF_REBALANCE_MAX_LINE_BYTES && line[len - 1] != '\n') {
            cf_error_set(CF_ERR_INVALID, "stdin:%ld: a line longer than %d bytes: not the protocol", number,
                         CF_REBALANCE_MAX_LINE_BYTES);
            cf_error_hint("one JSON object per line: {\"times_s\": [one number per worker]}");
            rc = cf_report_error();
            break;
        }
        if (cf_rebalance_line_blank(line))
            continue;
        if (cf_rebalance_read_line(line, "stdin", number, workers, times) != CF_OK) {
            rc = cf_report_error();
            break;
        }
        int changed = cf_rebalance_observe(c, times);
        if (changed < 0) {
            cf_error_prefix("stdin:%ld", number);
            rc = cf_report_error();
            break;
        }
        cf_buf answer = CF_BUF_INIT;
        cf_rebalance_answer(c, changed, &answer);
        if (cf_buf_failed(&answer)) {
            cf_buf_free(&answer);
            cf_error_set(CF_ERR_NOMEM, "out of memory");
            rc = cf_report_error();
            break;
        }
        fwrite(answer.data, 1, answer.len, stdout);
        fflush(stdout);
        cf_buf_free(&answer);
    }
    if (!times || !line) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        rc = cf_report_error();
    }
    free(line);
    free(times);
    free(c);
    return rc;
}
