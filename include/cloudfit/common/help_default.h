/* The default an option's help text states, in every form the option
 * table uses: "(default X)", "(…, default X; …)", "(default: what it
 * is)", "X (default)" or "X (…, default)"; "" when it states none. The
 * text is cut at ')', ';', ':' or ',' ("(default 1: a single-node
 * profile)" is "1"), and a description after "default:" at ')' or ';'. */
#ifndef CLOUDFIT_COMMON_HELP_DEFAULT_H
#define CLOUDFIT_COMMON_HELP_DEFAULT_H
#include <stddef.h>

void cf_help_stated_default(const char *help, char *out, size_t n);

#endif
