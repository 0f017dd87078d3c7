#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/text_wrap.h"
#include "term/terminal.h"

#include "exit_codes.h"
#include "log.h"
#include "cloudfit/version.h"
#include "commands.h"

/* troff-escapes '-' and '\' for the man page. */
static void man_text(const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '-' || *p == '\\')
            putchar('\\');
        putchar(*p);
    }
}

static void print_man(void)
{
    printf(".TH CLOUDFIT 1 \"\" \"cloudfit %s\" \"User Commands\"\n", CF_VERSION);
    printf(".SH NAME\ncloudfit \\- pick cloud GPU machines, batch size and learning rate for a training job\n");
    printf(".SH SYNOPSIS\n");
    for (size_t i = 0; i < cf_command_count; i++) {
        printf(".B cloudfit\n");
        man_text(cf_commands[i].usage);
        printf("\n.br\n");
    }
    for (size_t i = 0; i < cf_command_count; i++) {
        printf(".SH COMMAND: %s\n", cf_commands[i].name);
        man_text(cf_commands[i].summary);
        printf("\n");
        for (size_t k = 0; k < cf_cli_option_count; k++) {
            const cf_cli_option *o = &cf_cli_option_table[k];
            if (!(o->commands & cf_commands[i].bit))
                continue;
            printf(".TP\n.B \\-\\-");
            man_text(o->long_name);
            if (o->arg_name)
                printf(" \\fI%s\\fR", o->arg_name);
            printf("\n");
            man_text(o->help);
            printf("\n");
        }
    }
    printf(".SH EXIT STATUS\n0 ok; 1 failure; 2 usage; 3 bad input data; 4 no configuration meets the constraints;"
           " 5 a CI gate failed; 6 backend unavailable; 70 internal error.\n");
}

/* Help text is read on a terminal, or in a pager or file at 80 columns. */
static int help_width(const cf_cli_options *opts)
{
    if (opts && opts->width > 0)
        return opts->width;
    return isatty(STDOUT_FILENO) ? cf_cli_terminal_columns(STDOUT_FILENO) : 80;
}

static void put_wrapped(const char *text, int width, int indent)
{
    cf_buf out = CF_BUF_INIT;
    cf_text_wrap_line(text, strlen(text), width, indent, &out);
    fputs(cf_buf_cstr(&out), stdout);
    cf_buf_free(&out);
}

void cf_cli_print_command_list(FILE *out, const cf_cli_options *opts)
{
    int width = help_width(opts);
    cf_buf text = CF_BUF_INIT;
    cf_buf_puts(&text, "usage: cloudfit [--help] [--version] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < cf_command_count; i++) {
        char line[512];
        int n = snprintf(line, sizeof line, "  %-12s %s", cf_commands[i].name, cf_commands[i].summary);
        cf_text_wrap_line(line, n < (int)sizeof line ? (size_t)n : sizeof line - 1, width, 15, &text);
    }
    cf_buf_puts(&text, "\nSee 'cloudfit COMMAND --help' for a command's options. Exit codes: docs/exit-codes.md.\n");
    fputs(cf_buf_cstr(&text), out);
    cf_buf_free(&text);
}

void cf_cli_print_command_help(const cf_command *cmd, const cf_cli_options *opts)
{
    int width = help_width(opts);
    char usage[1024];
    snprintf(usage, sizeof usage, "usage: cloudfit %s", cmd->usage);
    put_wrapped(usage, width, 7);
    fputs("\n", stdout);
    put_wrapped(cmd->summary, width, 0);
    fputs("\noptions:\n", stdout);
    cf_cli_print_options(stdout, cmd->bit, width);
}

int cmd_help(int argc, char **argv, const cf_cli_options *opts, int n_positional)
{
    (void)argc;
    if (opts->man) {
        print_man();
        return CF_EXIT_OK;
    }
    if (n_positional == 0) {
        cf_cli_print_command_list(stdout, opts);
        return CF_EXIT_OK;
    }
    const cf_command *cmd = cf_command_find(argv[1]);
    if (!cmd) {
        cf_log_error("'%s' is not a cloudfit command", argv[1]);
        return CF_EXIT_USAGE;
    }
    cf_cli_print_command_help(cmd, opts);
    return CF_EXIT_OK;
}
