#include "price_option.h"

#include <stdlib.h>

#include "commands.h"
#include "exit_codes.h"
#include "log.h"

int cf_cli_parse_prices(const cf_cli_options *o, cf_search_price **out, size_t *n)
{
    *n = 0;
    *out = calloc(o->prices.n ? (size_t)o->prices.n : 1, sizeof **out);
    if (!*out) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    for (int i = 0; i < o->prices.n; i++, (*n)++)
        if (cf_search_price_parse(o->prices.items[i], &(*out)[i]) != CF_OK) {
            cf_log_error("option '--price' %s", cf_error_message());
            cf_log_hint("one --price per GPU type the catalog does not sell");
            return CF_EXIT_USAGE;
        }
    return 0;
}
