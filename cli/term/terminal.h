/* The terminal's width. */
#ifndef CLOUDFIT_CLI_TERMINAL_H
#define CLOUDFIT_CLI_TERMINAL_H

/* Columns of the terminal on `fd`: what the terminal says, else $COLUMNS,
 * else 80. */
int cf_cli_terminal_columns(int fd);

#endif
