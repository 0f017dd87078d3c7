/* `cloudfit prices update` (cmd_prices_update.c). */
#ifndef CLOUDFIT_CLI_PRICES_UPDATE_H
#define CLOUDFIT_CLI_PRICES_UPDATE_H
#include "options.h"

/* 0 or the exit code (errors printed). */
int cf_cli_prices_update(const cf_cli_options *o, int n_positional);

#endif
