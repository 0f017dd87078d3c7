/* cloudfit config show [COMMAND [OPTIONS]]: every option's effective value
 * and where it came from (command line, environment, configuration file,
 * default; cli/config.h has the precedence, docs/config.md the file). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/db.h"
#include "cloudfit/usecase/prices.h"
#include "io/evidence.h"
#include "commands.h"
#include "config.h"
#include "cloudfit/common/help_default.h"
#include "cloudfit/common/text_wrap.h"
#include "exit_codes.h"
#include "log.h"
#include "term/output.h"

#define USAGE "usage: cloudfit config show [COMMAND [OPTIONS]]"

/* The built-in default: a flag's is false whatever its help says (gang's
 * "(default elastic)" is the other mode); the history database's actual
 * path; else what the help states (common/help_default.c). */
static void default_text(const cf_cli_option *o, char *out, size_t n)
{
    out[0] = '\0';
    if (strcmp(o->long_name, "db") == 0 && cf_db_default_path(out, n) == CF_OK)
        return;
    if (o->kind == OPT_FLAG)
        snprintf(out, n, "false");
    else
        cf_help_stated_default(o->help, out, n);
}

/* One line of the table: the option, its value and where it came from. */
typedef struct {
    char name[48], value[512], from[1400];
} row;

/* The rows in three columns, each as wide as its widest cell (at least
 * the header's 24 and 36: a long option name or value pushed the rest of
 * its line out of the columns). */
static void put_rows(cf_buf *out, const row *rows, size_t n)
{
    int name_w = 24, value_w = 36;
    for (size_t i = 0; i < n; i++) {
        int w = cf_text_width(rows[i].name, strlen(rows[i].name)), v = cf_text_width(rows[i].value, strlen(rows[i].value));
        name_w = w > name_w ? w : name_w;
        value_w = v > value_w ? v : value_w;
    }
    cf_buf_puts(out, "  ");
    cf_buf_pad(out, "OPTION", name_w, 0);
    cf_buf_puts(out, " ");
    cf_buf_pad(out, "VALUE", value_w, 0);
    cf_buf_puts(out, " FROM\n");
    for (size_t i = 0; i < n; i++) {
        cf_buf_puts(out, "  ");
        cf_buf_pad(out, rows[i].name, name_w, 0);
        cf_buf_puts(out, " ");
        cf_buf_pad(out, rows[i].value, value_w, 0);
        cf_buf_printf(out, " %s\n", rows[i].from);
    }
}

/* One option's line: its value and source, for `command` (CMD_ALL = the top level). */
static void show_option(row *r, const cf_cli_option *o, unsigned command, const char *command_name,
                        const cf_cli_options *given, const cf_cli_options *effective, int file_read)
{
    char detail[160] = "", value[512], from[1400];
    cf_config_source src = file_read ? cf_cli_config_source(o, command, command_name, given, detail, sizeof detail)
                           : cf_cli_option_is_set(o, given) ? CF_FROM_COMMAND_LINE
                                                            : CF_FROM_DEFAULT;
    cf_cli_option_text(o, effective, value, sizeof value);
    if (strcmp(o->long_name, "db") == 0 || strcmp(o->long_name, "to") == 0) { /* a password: never shown */
        char shown[512];
        cf_db_redact(value, shown, sizeof shown);
        snprintf(value, sizeof value, "%s", shown);
    }
    switch (src) {
    case CF_FROM_COMMAND_LINE: snprintf(from, sizeof from, "command line"); break;
    case CF_FROM_ENV: snprintf(from, sizeof from, "environment (%s)", detail); break;
    case CF_FROM_CONFIG: snprintf(from, sizeof from, "configuration file (%s)", detail); break;
    case CF_FROM_DEFAULT:
        default_text(o, value, sizeof value);
        snprintf(from, sizeof from, detail[0] ? "default (the file's kept out by %s)" : "default", detail);
        break;
    }
    if (strcmp(o->long_name, "color") == 0) {
        const char *no_color = getenv("NO_COLOR");
        if (no_color && *no_color)
            snprintf(from + strlen(from), sizeof from - strlen(from), "; NO_COLOR is set: never");
        else if (cf_log_in_ci())
            snprintf(from + strlen(from), sizeof from - strlen(from), "; CI is set: never");
    }
    snprintf(r->name, sizeof r->name, "--%s", o->long_name);
    snprintf(r->value, sizeof r->value, "%s", value[0] ? value : "(not set)");
    snprintf(r->from, sizeof r->from, "%s", from);
}

/* `effective` shares the lists the command line gave (`given`); the ones
 * the configuration file added are its own. */
static void free_options(cf_cli_options *given, cf_cli_options *effective)
{
    for (size_t i = 0; i < cf_cli_option_count; i++) {
        const cf_cli_option *o = &cf_cli_option_table[i];
        if (o->kind != OPT_LIST)
            continue;
        cf_cli_list *mine = (cf_cli_list *)((char *)effective + o->offset);
        if (mine->items != ((cf_cli_list *)((char *)given + o->offset))->items)
            free(mine->items);
        mine->items = NULL;
    }
    cf_cli_options_free(given);
}

int cmd_config(int argc, char **argv, const cf_cli_options *unused, int n_unused)
{
    (void)unused;
    (void)n_unused;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        return cf_cli_print_command_help(cf_command_find("config"), NULL);
    }
    if (argc < 2 || strcmp(argv[1], "show") != 0) {
        if (argc < 2)
            cf_log_error("config: missing the subcommand");
        else
            cf_log_error("config: unknown subcommand '%s'", argv[1]);
        cf_log_hint(USAGE);
        return CF_EXIT_USAGE;
    }
    const cf_command *target = NULL;
    const char *prices_form = NULL; /* "update" or "listing" for 'config show prices [update]' */
    cf_cli_options given, effective;
    cf_cli_options_init(&given);
    if (argc >= 3 && argv[2][0] != '-') {
        target = cf_command_find(argv[2]);
        if (!target || target->bit == CMD_CONFIG) {
            cf_log_error("config show: '%s' is not a cloudfit command", argv[2]);
            cf_log_hint(USAGE);
            return CF_EXIT_USAGE;
        }
        int n_pos = 0;
        int rc = cf_cli_parse(target->bit, target->name, argc - 2, argv + 2, &given, &n_pos);
        if (rc)
            return rc;
        /* 'prices update' takes none of the listing's options and the listing none of its: shown as the
         * command runs, with its notes (all of prices' options were shown as in effect for 'prices update') */
        if (target->bit == CMD_PRICES) {
            prices_form = n_pos >= 1 && strcmp(argv[3], "update") == 0 ? "update" : "listing";
            const char *named[CF_CLI_MAX_OPTIONS] = {0};
            size_t n = cf_cli_subcommand_options_given(&given, CMD_PRICES, cf_prices_option_subcommands, named);
            cf_prices_check_options(prices_form, named, n, cf_cli_note, NULL);
        }
    } else if (argc >= 3) {
        cf_log_error("config show: options need the command they are for, e.g. 'cloudfit config show recommend %s'",
                     argv[2]);
        return CF_EXIT_USAGE;
    }
    unsigned command = target ? target->bit : CMD_ALL;
    const char *name = target ? target->name : NULL;
    effective = given;
    int file_read = !(target && (target->bit & CF_CLI_CONFIG_NOT_READ)); /* as cli/main.c runs them */
    int rc = file_read ? cf_cli_config_apply(command, name, &effective) : 0;
    if (rc) {
        free_options(&given, &effective);
        return rc;
    }
    char path[PATH_MAX] = "";
    if (file_read && (rc = cf_cli_config_path(path, sizeof path)) != 0) { /* a command that reads none is not stopped */
        free_options(&given, &effective);
        return rc;
    }
    cf_buf out = CF_BUF_INIT;
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    cf_buf_printf(&out, "configuration file: %s (%s)\n",
                  !file_read ? "none" : path[0] ? path : "none (neither XDG_CONFIG_HOME nor HOME is set)",
                  !file_read ? "the configuration file is not read by this command" : f ? "read" : "not found");
    if (f)
        fclose(f);
    cf_buf_puts(&out, "precedence: command line > environment > configuration file (the command's section, then the "
                      "top level) > default\n\n");
    cf_buf_printf(&out, "%s%s:\n", target ? target->name : "every command (see 'cloudfit config show COMMAND' for one)",
                  prices_form && !strcmp(prices_form, "update") ? " update" : "");
    row *rows = calloc(cf_cli_option_count, sizeof *rows);
    size_t n_rows = 0;
    if (!rows) {
        cf_log_error("out of memory");
        cf_buf_free(&out);
        free_options(&given, &effective);
        return CF_EXIT_FAILURE;
    }
    for (size_t i = 0; i < cf_cli_option_count; i++) {
        const cf_cli_option *o = &cf_cli_option_table[i];
        if (!(o->commands & command) || strcmp(o->long_name, "help") == 0 || strcmp(o->long_name, "man") == 0)
            continue;
        const char *takes = prices_form ? cf_prices_option_subcommands(o->long_name) : NULL;
        if (takes && strcmp(takes, prices_form) != 0)
            continue;
        int repeated = 0; /* one line per name at the top level (e.g. --spot of recommend and of prices) */
        for (size_t k = 0; k < i && !target; k++)
            repeated |= strcmp(cf_cli_option_table[k].long_name, o->long_name) == 0;
        if (!repeated)
            show_option(&rows[n_rows++], o, command, name, &given, &effective, file_read);
    }
    put_rows(&out, rows, n_rows);
    free(rows);
    rc = cf_cli_write_buf(&given, &out);
    cf_buf_free(&out);
    free_options(&given, &effective);
    return rc;
}
