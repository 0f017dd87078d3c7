/* cloudfit completion bash|zsh: shell completion generated from the command
 * table and the option table, so it never lists an option the parser does
 * not take (or misses one it does); after a history subcommand, only the
 * options it takes (cf_history_option_subcommands, the parser's table), and
 * after prices [GPU] or prices update only that form's
 * (cf_prices_option_subcommands).
 * Words that come from data are asked of cloudfit when TAB is pressed
 * (`cloudfit completion words KIND`, completion_words.c): stored
 * recommendation ids after `history show`, `history diff` and `record`, GPU
 * models of the catalog in use after --gpu and `prices`, the command
 * sections after `config show` (the rest of its line completes as that
 * command's). Install:
 *   bash: cloudfit completion bash > ~/.local/share/bash-completion/completions/cloudfit
 *   zsh:  cloudfit completion zsh > "${fpath[1]}/_cloudfit"   (then compinit) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/render/completion.h"
#include "cloudfit/usecase/history.h"
#include "cloudfit/usecase/prices.h"
#include "commands.h"
#include "term/output.h"
#include "exit_codes.h"
#include "log.h"

/* Words after a command: the first positional's fixed words, and whether
 * files follow. Data-driven words (ids, GPUs, sections) are in the scripts
 * below. */
typedef struct {
    const char *command;
    const char *words;
    int files;
} positionals;

static const positionals command_words[] = {
    {"recommend", "", 1}, {"profile", "", 1},      {"search", "", 1},
    {"validate", "", 1},  {"history", "list show diff prune migrate", 0},
    {"prices", "update", 0}, {"completion", "bash zsh", 0}, {"config", "show", 0},
    {"simulate", "", 1},
};

/* Options whose values are GPU models of the catalog. */
static int takes_gpu(const cf_cli_option *o) { return strcmp(o->long_name, "gpu") == 0; }

/* Whether the argument names a file or directory (offer paths). */
static int takes_path(const cf_cli_option *o)
{
    const char *a = o->arg_name;
    return a && (strstr(a, "FILE") || strstr(a, "PATH") || strstr(a, "DIR") || strstr(a, ".csv") ||
                 strstr(a, ".json") || strstr(a, ".html") || strstr(a, ".svg"));
}

static const positionals *words_of(const char *command)
{
    for (size_t i = 0; i < sizeof command_words / sizeof *command_words; i++)
        if (strcmp(command_words[i].command, command) == 0)
            return &command_words[i];
    return NULL;
}


/* The commands and their options as render/completion.c takes them. */
static int describe(cf_completion_command *cmds, cf_completion_option *opts, size_t cap)
{
    size_t used = 0;
    for (size_t c = 0; c < cf_command_count; c++) {
        const cf_command *cmd = &cf_commands[c];
        const positionals *pw = words_of(cmd->name);
        cmds[c] = (cf_completion_command){.name = cmd->name, .summary = cmd->summary, .words = pw ? pw->words : "",
                                          .files = pw ? pw->files : 0, .options = opts + used,
                                          .listing = cmd->bit == CMD_PRICES ? "listing" : NULL};
        for (size_t i = 0; i < cf_cli_option_count; i++) {
            const cf_cli_option *o = &cf_cli_option_table[i];
            if (!(o->commands & cmd->bit))
                continue;
            if (used == cap)
                return -1;
            opts[used++] = (cf_completion_option){
                .long_name = o->long_name, .short_name = o->short_name, .takes_value = o->kind != OPT_FLAG,
                .repeatable = o->kind == OPT_LIST, .arg_name = o->arg_name, .help = o->help,
                .values = cf_cli_option_values(o, cmd->bit), .gpus = takes_gpu(o), .path = takes_path(o),
                .subcommands = cmd->bit == CMD_HISTORY  ? cf_history_option_subcommands(o->long_name)
                               : cmd->bit == CMD_PRICES ? cf_prices_option_subcommands(o->long_name)
                                                        : NULL};
            cmds[c].n_options++;
        }
    }
    return 0;
}

int cmd_completion(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    (void)o;
    if (n_positional >= 2 && n_positional <= 3 && strcmp(argv[1], "words") == 0)
        return cf_cli_completion_words(argv[2], n_positional == 3 ? argv[3] : NULL);
    const char *shell = n_positional == 1 ? argv[1] : NULL;
    if (!shell || (strcmp(shell, "bash") && strcmp(shell, "zsh"))) {
        if (shell)
            cf_log_error("completion: no completion for '%s' (bash or zsh)", shell);
        else if (n_positional > 1)
            cf_log_error("completion: one shell at a time, got %d arguments", n_positional);
        else
            cf_log_error("completion: which shell?");
        cf_log_hint("usage: cloudfit completion bash|zsh");
        return CF_EXIT_USAGE;
    }
    cf_completion_command cmds[64];
    cf_completion_option *opts = malloc(cf_command_count * cf_cli_option_count * sizeof *opts);
    if (!opts || cf_command_count > 64 || describe(cmds, opts, cf_command_count * cf_cli_option_count) != 0) {
        free(opts);
        cf_log_error("completion: out of memory");
        return CF_EXIT_INTERNAL;
    }
    cf_buf out = CF_BUF_INIT;
    if (strcmp(shell, "bash") == 0)
        cf_completion_bash(cmds, cf_command_count, &out);
    else
        cf_completion_zsh(cmds, cf_command_count, &out);
    free(opts);
    int rc = cf_cli_write_buf(NULL, &out);
    cf_buf_free(&out);
    return rc;
}
