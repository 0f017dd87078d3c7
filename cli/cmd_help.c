#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/text_wrap.h"
#include "term/terminal.h"

#include "exit_codes.h"
#include "log.h"
#include "cloudfit/version.h"
#include "commands.h"
#include "term/output.h"

/* troff-escapes '-' and '\' for the man page. */
static void man_text(cf_buf *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '-' || *p == '\\')
            cf_buf_puts(out, "\\");
        cf_buf_append(out, p, 1);
    }
}

static void man_page(cf_buf *out)
{
    cf_buf_printf(out, ".TH CLOUDFIT 1 \"\" \"cloudfit %s\" \"User Commands\"\n", CF_VERSION);
    cf_buf_puts(out, ".SH NAME\ncloudfit \\- pick cloud GPU machines, batch size and learning rate for a training job\n");
    cf_buf_puts(out, ".SH SYNOPSIS\n");
    for (size_t i = 0; i < cf_command_count; i++) {
        cf_buf_puts(out, ".B cloudfit\n");
        man_text(out, cf_commands[i].usage);
        cf_buf_puts(out, "\n.br\n");
    }
    for (size_t i = 0; i < cf_command_count; i++) {
        cf_buf_printf(out, ".SH COMMAND: %s\n", cf_commands[i].name);
        man_text(out, cf_commands[i].summary);
        cf_buf_puts(out, "\n");
        for (size_t k = 0; k < cf_cli_option_count; k++) {
            const cf_cli_option *o = &cf_cli_option_table[k];
            if (!(o->commands & cf_commands[i].bit))
                continue;
            cf_buf_puts(out, ".TP\n.B \\-\\-");
            man_text(out, o->long_name);
            if (o->arg_name)
                cf_buf_printf(out, " \\fI%s\\fR", o->arg_name);
            cf_buf_puts(out, "\n");
            man_text(out, o->help);
            cf_buf_puts(out, "\n");
        }
    }
    cf_buf_puts(out, ".SH EXIT STATUS\n0 ok; 1 failure; 2 usage; 3 bad input data; 4 no configuration meets the constraints;"
                     " 5 a CI gate failed; 6 backend unavailable; 70 internal error.\n");
}

/* Help text is read on a terminal, or in a pager or file at 80 columns. */
static int help_width(const cf_cli_options *opts)
{
    if (opts && opts->width > 0)
        return opts->width;
    return isatty(STDOUT_FILENO) ? cf_cli_terminal_columns(STDOUT_FILENO) : 80;
}

void cf_cli_command_list(const cf_cli_options *opts, cf_buf *text)
{
    int width = help_width(opts);
    cf_buf_puts(text, "usage: cloudfit [--help] [--version] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < cf_command_count; i++) {
        char line[512];
        int n = snprintf(line, sizeof line, "  %-12s %s", cf_commands[i].name, cf_commands[i].summary);
        cf_text_wrap_line(line, n < (int)sizeof line ? (size_t)n : sizeof line - 1, width, 15, text);
    }
    cf_buf_puts(text, "\nSee 'cloudfit COMMAND --help' for a command's options. Exit codes: docs/exit-codes.md.\n");
}

int cf_cli_print_command_list(const cf_cli_options *opts)
{
    cf_buf text = CF_BUF_INIT;
    cf_cli_command_list(opts, &text);
    int rc = cf_cli_write_buf(NULL, &text);
    cf_buf_free(&text);
    return rc;
}

int cf_cli_print_command_help(const cf_command *cmd, const cf_cli_options *opts)
{
    int width = help_width(opts);
    char usage[1024];
    snprintf(usage, sizeof usage, "usage: cloudfit %s", cmd->usage);
    cf_buf text = CF_BUF_INIT;
    cf_text_wrap_line(usage, strlen(usage), width, 7, &text);
    cf_buf_puts(&text, "\n");
    cf_text_wrap_line(cmd->summary, strlen(cmd->summary), width, 0, &text);
    cf_buf_puts(&text, "\noptions:\n");
    cf_cli_options_help(cmd->bit, width, &text);
    int rc = cf_cli_write_buf(NULL, &text);
    cf_buf_free(&text);
    return rc;
}

int cmd_help(int argc, char **argv, const cf_cli_options *opts, int n_positional)
{
    (void)argc;
    if (opts->man) {
        cf_buf text = CF_BUF_INIT;
        man_page(&text);
        int rc = cf_cli_write_buf(NULL, &text);
        cf_buf_free(&text);
        return rc;
    }
    if (n_positional == 0)
        return cf_cli_print_command_list(opts);
    const cf_command *cmd = cf_command_find(argv[1]);
    if (!cmd) {
        cf_log_error("'%s' is not a cloudfit command", argv[1]);
        return CF_EXIT_USAGE;
    }
    return cf_cli_print_command_help(cmd, opts);
}
