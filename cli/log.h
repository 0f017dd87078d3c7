/* Diagnostics to stderr. Colour only on a terminal, never with NO_COLOR set
 * or in CI (CI=true). Library modules do not print; only cli/ uses this. */
#ifndef CLOUDFIT_CLI_LOG_H
#define CLOUDFIT_CLI_LOG_H
#include <stdio.h>
#include "cloudfit/status.h"

typedef enum { CF_COLOR_AUTO, CF_COLOR_ALWAYS, CF_COLOR_NEVER } cf_color_mode;

void cf_log_init(cf_color_mode mode, int verbosity);
/* Whether colour escapes may be written to `stream` under the current mode. */
int cf_log_color_enabled(FILE *stream);
/* Whether CI is set as meaning CI (CI=false and CI=0 do not): colour is then never on. */
int cf_log_in_ci(void);
int cf_log_verbosity(void);
/* "cloudfit: <message>" then "hint: <hint>" when a hint is set. */
void cf_log_error(const char *fmt, ...) CF_PRINTF(1, 2);
/* `long_name`'s value came from the configuration file, at `where`
 * ("FILE: section.key"), or the environment (`from_env`; `where` its variable): an
 * error naming "option '--long_name'" is then prefixed with it, and one
 * that quotes `value` (as shown: a URL's password redacted; NULL: none),
 * as "cannot open '/x/h.db'" does, is followed by a hint naming where the
 * value came from. */
void cf_log_option_source(const char *long_name, const char *where, const char *value, int from_env);
void cf_log_warning(const char *fmt, ...) CF_PRINTF(1, 2);
void cf_log_hint(const char *fmt, ...) CF_PRINTF(1, 2);
/* Progress / informational lines (suppressed with verbosity < 0). */
void cf_log_info(const char *fmt, ...) CF_PRINTF(1, 2);
/* Informational lines written before -q is known (notes from parsing the
 * command line and the configuration file) are held from cf_log_hold()
 * until cf_log_init(), which prints them unless it is quiet. */
void cf_log_hold(void);

#endif
