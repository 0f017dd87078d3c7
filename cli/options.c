#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/exit_codes.h"
#include "cloudfit/log.h"

#define OFF(field) offsetof(cf_cli_options, field)

const cf_cli_option cf_cli_option_table[] = {
    {"help", 'h', OPT_FLAG, NULL, CMD_ALL, OFF(help), "show help for the command and exit"},
    {"format", 'f', OPT_STRING, "FORMAT", CMD_RECOMMEND, OFF(format), "output format: table (default) or json"},
    {"out-file", 'o', OPT_STRING, "PATH", CMD_RECOMMEND, OFF(out_file),
     "write the result to PATH (atomically) instead of standard output"},
    {"db", 0, OPT_STRING, "PATH", CMD_RECOMMEND, OFF(db_path),
     "history database (default $XDG_DATA_HOME/cloudfit/history.db)"},
    {"no-history", 0, OPT_FLAG, NULL, CMD_RECOMMEND, OFF(no_history), "do not record the recommendation"},
    {"top", 'n', OPT_INT, "N", CMD_RECOMMEND, OFF(top), "rows in the ranked table (default 10)"},
    {"objective", 0, OPT_STRING, "OBJ", CMD_RECOMMEND, OFF(objective),
     "cost (cheapest within the deadline), time (fastest within the budget) or balanced"},
    {"deadline-hours", 0, OPT_DOUBLE, "H", CMD_RECOMMEND, OFF(deadline_hours), "override search.deadline_hours"},
    {"budget-usd", 0, OPT_DOUBLE, "USD", CMD_RECOMMEND, OFF(budget_usd), "override search.budget_usd"},
    {"cloud", 0, OPT_LIST, "CLOUD", CMD_RECOMMEND, OFF(clouds),
     "only this cloud (aws, gcp, azure, lambda); repeatable; overrides search.clouds"},
    {"region", 0, OPT_LIST, "REGION", CMD_RECOMMEND, OFF(regions), "only this region; repeatable"},
    {"gpu", 0, OPT_LIST, "GPU", CMD_RECOMMEND, OFF(gpus), "only this GPU model; repeatable"},
    {"spot", 0, OPT_STRING, "POLICY", CMD_RECOMMEND, OFF(spot), "spot VMs: never, allow or only"},
    {"max-nodes", 0, OPT_INT, "N", CMD_RECOMMEND, OFF(max_nodes), "override search.max_nodes"},
    {"max-gpus", 0, OPT_INT, "N", CMD_RECOMMEND, OFF(max_gpus), "override search.max_gpus"},
    {"color", 0, OPT_STRING, "WHEN", CMD_ALL, OFF(color), "colour: auto (default), always or never"},
    {"quiet", 'q', OPT_FLAG, NULL, CMD_ALL, OFF(quiet), "no progress or informational lines on stderr"},
    {"man", 0, OPT_FLAG, NULL, CMD_HELP, OFF(man), "print the manual page (troff) generated from this table"},
};
const size_t cf_cli_option_count = sizeof cf_cli_option_table / sizeof *cf_cli_option_table;

void cf_cli_options_init(cf_cli_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->top = -1;
    opts->deadline_hours = -1;
    opts->budget_usd = -1;
    opts->max_nodes = -1;
    opts->max_gpus = -1;
}

static int usage_error(const char *command, const char *fmt, ...) CF_PRINTF(2, 3);
static int usage_error(const char *command, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    cf_log_error("%s", message);
    cf_log_hint("see 'cloudfit %s --help'", command);
    return CF_EXIT_USAGE;
}

static int store(const cf_cli_option *o, const char *command, const char *arg, cf_cli_options *opts)
{
    char *field = (char *)opts + o->offset;
    char *end = NULL;
    errno = 0;
    switch (o->kind) {
    case OPT_FLAG: *(int *)field = 1; return 0;
    case OPT_STRING: *(const char **)field = arg; return 0;
    case OPT_INT: {
        long v = strtol(arg, &end, 10);
        if (end == arg || *end || errno || v < 1 || v > 1000000)
            return usage_error(command, "option '--%s' expects a positive integer, got '%s'", o->long_name, arg);
        *(int *)field = (int)v;
        return 0;
    }
    case OPT_DOUBLE: {
        double v = strtod(arg, &end);
        if (end == arg || *end || errno || !isfinite(v) || v <= 0)
            return usage_error(command, "option '--%s' expects a positive number, got '%s'", o->long_name, arg);
        *(double *)field = v;
        return 0;
    }
    case OPT_LIST: {
        cf_cli_list *list = (cf_cli_list *)field;
        if (list->n == CF_CLI_MAX_LIST)
            return usage_error(command, "option '--%s' given too many times (at most 16): '%s'", o->long_name, arg);
        list->items[list->n++] = arg;
        return 0;
    }
    }
    return CF_EXIT_INTERNAL;
}

int cf_cli_parse(unsigned command, const char *command_name, int argc, char **argv, cf_cli_options *opts,
                 int *out_first_positional)
{
    struct option longopts[64];
    char shortopts[128] = "-:"; /* "-": positionals in order as code 1; ":": report missing arguments */
    size_t n_long = 0, n_short = 2;
    const cf_cli_option *by_index[64];
    for (size_t i = 0; i < cf_cli_option_count && n_long < 63; i++) {
        const cf_cli_option *o = &cf_cli_option_table[i];
        if (!(o->commands & command))
            continue;
        int has_arg = o->kind == OPT_FLAG ? no_argument : required_argument;
        longopts[n_long] = (struct option){o->long_name, has_arg, NULL, 256 + (int)n_long};
        by_index[n_long] = o;
        if (o->short_name) {
            shortopts[n_short++] = (char)o->short_name;
            if (has_arg == required_argument)
                shortopts[n_short++] = ':';
        }
        n_long++;
    }
    longopts[n_long] = (struct option){0, 0, 0, 0};
    shortopts[n_short] = '\0';
    optind = 0; /* restart: GNU getopt re-initialises on 0 */
    opterr = 0;
    int n_pos = 0;
    char *positional[256];
    for (;;) {
        int c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c == -1)
            break;
        if (c == 1) { /* positional, in order */
            if (n_pos < 256)
                positional[n_pos++] = optarg;
            continue;
        }
        const cf_cli_option *o = NULL;
        if (c >= 256) {
            o = by_index[c - 256];
        } else if (c != '?' && c != ':') {
            for (size_t i = 0; i < n_long; i++)
                if (by_index[i]->short_name == c)
                    o = by_index[i];
        }
        if (!o) {
            const char *bad = argv[optind - 1];
            if (c == ':')
                return usage_error(command_name, "option '%s' requires an argument", bad);
            return usage_error(command_name, "unknown option '%s'", bad);
        }
        int rc = store(o, command_name, optarg, opts);
        if (rc)
            return rc;
    }
    for (int i = optind; i < argc && n_pos < 256; i++)
        positional[n_pos++] = argv[i];
    for (int i = 0; i < n_pos; i++)
        argv[1 + i] = positional[i];
    *out_first_positional = n_pos;
    return 0;
}

void cf_cli_print_options(FILE *out, unsigned command)
{
    for (size_t i = 0; i < cf_cli_option_count; i++) {
        const cf_cli_option *o = &cf_cli_option_table[i];
        if (!(o->commands & command))
            continue;
        char left[64];
        int len = 0;
        if (o->short_name)
            len = snprintf(left, sizeof left, "-%c, --%s", o->short_name, o->long_name);
        else
            len = snprintf(left, sizeof left, "    --%s", o->long_name);
        if (o->arg_name)
            snprintf(left + len, sizeof left - (size_t)len, " %s", o->arg_name);
        fprintf(out, "  %-28s %s\n", left, o->help);
    }
}
