/* --price GPU=USD_PER_GPU_HR (search and profile with a trace runner): the
 * prices a trace's GPU is given when the catalog sells no VM of it. */
#ifndef CLOUDFIT_CLI_IO_PRICE_OPTION_H
#define CLOUDFIT_CLI_IO_PRICE_OPTION_H
#include <stddef.h>

#include "cloudfit/profiler/runners.h"
#include "options.h"

/* The --price entries, malloc'd into *out (the caller frees it; never NULL
 * on success), *n of them. 0, or the exit code after saying what is wrong. */
int cf_cli_parse_prices(const cf_cli_options *o, cf_search_price **out, size_t *n);

#endif
