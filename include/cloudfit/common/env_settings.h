/* The environment variables that tune how cloudfit runs, never what it
 * answers (docs/config.md "Other environment variables"): one table of
 * their names and ranges, read by the modules that use them and checked
 * once by the CLI, which warns about a value it cannot use (the default
 * is used then) rather than ignoring it without a word. */
#ifndef CLOUDFIT_COMMON_ENV_SETTINGS_H
#define CLOUDFIT_COMMON_ENV_SETTINGS_H
#include <stddef.h>

/* The value of tuning variable `name` (one of the table's) when it is set
 * to a number in its range (a whole number where the table says so): 1
 * and *out; 0 when unset, empty or unusable. */
int cf_env_setting(const char *name, double *out);

/* The i-th variable of the table: 1 and a message naming it, its value and
 * what was expected (no trailing newline) when it is set to a value it
 * cannot use; 0 when it is fine; -1 past the table's end. */
int cf_env_setting_problem(size_t i, char *msg, size_t n);

#endif
