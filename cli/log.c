#include "log.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cf_color_mode color_mode = CF_COLOR_AUTO;
static int verbosity_level = 0;

void cf_log_init(cf_color_mode mode, int verbosity)
{
    color_mode = mode;
    verbosity_level = verbosity;
}

int cf_log_verbosity(void) { return verbosity_level; }

static int env_set(const char *name)
{
    const char *value = getenv(name);
    return value && *value;
}

int cf_log_color_enabled(FILE *stream)
{
    if (color_mode == CF_COLOR_NEVER)
        return 0;
    if (env_set("NO_COLOR") || env_set("CI"))
        return 0;
    if (color_mode == CF_COLOR_ALWAYS)
        return 1;
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0)
        return 0;
    return isatty(fileno(stream));
}

static void log_line(const char *prefix, const char *color, const char *fmt, va_list ap)
{
    int colored = cf_log_color_enabled(stderr);
    if (colored)
        fprintf(stderr, "%s%s\033[0m", color, prefix);
    else
        fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cf_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("cloudfit: ", "\033[1;31m", fmt, ap);
    va_end(ap);
}

void cf_log_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("warning: ", "\033[1;33m", fmt, ap);
    va_end(ap);
}

void cf_log_hint(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("hint: ", "\033[1;36m", fmt, ap);
    va_end(ap);
}

void cf_log_info(const char *fmt, ...)
{
    if (verbosity_level < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
