/* Defaults for options from a configuration file and the environment
 * (docs/config.md). Where an option's value comes from, first that has it:
 *
 *   1. the command line
 *   2. the environment: CLOUDFIT_DB (--db); NO_COLOR or CI turn colour off
 *      whatever --color says
 *   3. the configuration file, $XDG_CONFIG_HOME/cloudfit/config.json (else
 *      ~/.config/cloudfit/config.json; CLOUDFIT_CONFIG names another file):
 *      the command's own section ({"recommend": {"top": 5}}), then the top
 *      level ({"format": "json"})
 *   4. the built-in default (the option table's help says it)
 *
 * The file is read with the common JSON reader; its keys are option names
 * without the dashes and command names; an unknown key, an option the
 * command does not take, or a value of the wrong type is an error naming
 * the file and the key (exit 3). */
#ifndef CLOUDFIT_CLI_CONFIG_H
#define CLOUDFIT_CLI_CONFIG_H
#include <stddef.h>

#include "options.h"

typedef enum { CF_FROM_DEFAULT, CF_FROM_CONFIG, CF_FROM_ENV, CF_FROM_COMMAND_LINE } cf_config_source;

/* The commands that read neither the environment's defaults nor the
 * configuration file: they must work whatever the file holds (a key written
 * for a newer cloudfit stopped them all). */
#define CF_CLI_CONFIG_NOT_READ (CMD_HELP | CMD_VERSION | CMD_COMPLETION)

/* The configuration file's path (whether or not it exists; "" when neither
 * XDG_CONFIG_HOME nor HOME is set). 0, or CF_EXIT_DATA with the error
 * printed when it does not fit `n` (PATH_MAX): never a cut path. */
int cf_cli_config_path(char *out, size_t n);
/* Fills every option of `command` that the command line left unset from the
 * environment and the configuration file. 0 or the exit code (error printed). */
int cf_cli_config_apply(unsigned command, const char *command_name, cf_cli_options *opts);
/* Where the value of option `o` for `command` came from, after
 * cf_cli_config_apply; `given` holds the options as the command line set
 * them (before apply). `detail` gets the environment variable or config key. */
cf_config_source cf_cli_config_source(const cf_cli_option *o, unsigned command, const char *command_name,
                                      const cf_cli_options *given, char *detail, size_t n);
/* Whether the command line (or anything) set option `o` in `opts`. */
int cf_cli_option_is_set(const cf_cli_option *o, const cf_cli_options *opts);
/* The value of option `o` in `opts` as text ("" when unset). */
void cf_cli_option_text(const cf_cli_option *o, const cf_cli_options *opts, char *out, size_t n);

#endif
