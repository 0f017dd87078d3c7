#include <stdio.h>
#include <string.h>

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

int cmd_help(int argc, char **argv, const cf_cli_options *opts, int n_positional)
{
    (void)argc;
    if (opts->man) {
        print_man();
        return CF_EXIT_OK;
    }
    if (n_positional == 0) {
        printf("usage: cloudfit COMMAND [ARGS]\n\ncommands:\n");
        for (size_t i = 0; i < cf_command_count; i++)
            printf("  %-12s %s\n", cf_commands[i].name, cf_commands[i].summary);
        return CF_EXIT_OK;
    }
    const cf_command *cmd = cf_command_find(argv[1]);
    if (!cmd) {
        cf_log_error("'%s' is not a cloudfit command", argv[1]);
        return CF_EXIT_USAGE;
    }
    printf("usage: cloudfit %s\n\n%s\n\noptions:\n", cmd->usage, cmd->summary);
    cf_cli_print_options(stdout, cmd->bit);
    return CF_EXIT_OK;
}
