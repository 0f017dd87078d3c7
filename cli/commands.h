/* The command table (git's cmd_struct): one file per command. */
#ifndef CLOUDFIT_CLI_COMMANDS_H
#define CLOUDFIT_CLI_COMMANDS_H
#include "cloudfit/common/buf.h"
#include "cloudfit/status.h"
#include "options.h"

typedef int (*cf_command_fn)(int argc, char **argv, const cf_cli_options *opts, int n_positional);

typedef struct {
    const char *name;
    cf_command_fn run;
    unsigned bit;            /* CMD_* for the option table */
    const char *usage;       /* after "cloudfit " */
    const char *summary;
} cf_command;

int cmd_recommend(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_version(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_completion(int argc, char **argv, const cf_cli_options *opts, int n_positional);
/* Parses the options of the command it shows itself: opts is NULL. */
int cmd_config(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_profile(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_help(int argc, char **argv, const cf_cli_options *opts, int n_positional);
/* `cloudfit COMMAND --help` and `cloudfit help COMMAND`: the usage, the
 * summary and the command's own options, wrapped to --width, else the
 * terminal's width, else 80 columns (cli/cmd_help.c). */
int cf_cli_print_command_help(const cf_command *cmd, const cf_cli_options *opts);
/* The list of commands (cloudfit --help, cloudfit help): appended to
 * `text`, or written as the result (0 or the exit code). */
void cf_cli_command_list(const cf_cli_options *opts, cf_buf *text);
int cf_cli_print_command_list(const cf_cli_options *opts);
/* `cloudfit completion words KIND [ARG]` (cli/completion_words.c). */
int cf_cli_completion_words(const char *kind, const char *arg);
int cmd_validate(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_history(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_record(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_prices(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_search(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_simulate(int argc, char **argv, const cf_cli_options *opts, int n_positional);
int cmd_rebalance(int argc, char **argv, const cf_cli_options *opts, int n_positional);

extern const cf_command cf_commands[];
extern const size_t cf_command_count;
const cf_command *cf_command_find(const char *name);
/* Maps a library status to the documented exit code. */
int cf_exit_code_for(cf_status status);
/* Prints the last error ("cloudfit: ...", "hint: ...") and returns its exit code. */
int cf_report_error(void);

#endif
