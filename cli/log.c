#include "log.h"

#include <ctype.h>
#include <stdio.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/escape.h"
#include "cloudfit/common/redact.h"
#include "cloudfit/common/text_wrap.h"
#include "term/terminal.h"

static cf_color_mode color_mode = CF_COLOR_AUTO;
static int verbosity_level = 0;
static int holding;
static cf_buf held = CF_BUF_INIT; /* informational lines, each ending in '\n' */

static void put_line(const char *prefix, const char *text);

void cf_log_hold(void) { holding = 1; }

void cf_log_init(cf_color_mode mode, int verbosity)
{
    color_mode = mode;
    verbosity_level = verbosity;
    if (!holding)
        return;
    holding = 0;
    for (const char *p = cf_buf_cstr(&held); verbosity >= 0 && *p;) {
        const char *nl = strchr(p, '\n');
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)(nl - p), p);
        put_line("", line);
        p = nl + 1;
    }
    cf_buf_free(&held);
}

int cf_log_verbosity(void) { return verbosity_level; }

static int env_set(const char *name)
{
    const char *value = getenv(name);
    return value && *value;
}

/* CI as the CI metadata reads it (common/ci_env.c): CI=false or CI=0 is not CI */
int cf_log_in_ci(void)
{
    const char *ci = getenv("CI");
    return ci && *ci && strcmp(ci, "false") != 0 && strcmp(ci, "0") != 0;
}

int cf_log_color_enabled(FILE *stream)
{
    if (color_mode == CF_COLOR_NEVER)
        return 0;
    if (env_set("NO_COLOR") || cf_log_in_ci())
        return 0;
    if (color_mode == CF_COLOR_ALWAYS)
        return 1;
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0)
        return 0;
    return isatty(fileno(stream));
}

/* Writes `prefix` and `text` as one line to stderr (or holds an
 * informational one, cf_log_hold); on a terminal, wrapped
 * to its width with the continuation under the text (a message is often
 * longer than 80 columns: a path, a hint with a command). */
static void put_line(const char *prefix, const char *text)
{
    if (holding && !prefix[0]) {
        cf_buf_printf(&held, "%s\n", text);
        return;
    }
    if (!isatty(STDERR_FILENO)) {
        fputs(prefix, stderr);
        fputs(text, stderr);
        fputc('\n', stderr);
        return;
    }
    cf_buf line = CF_BUF_INIT, wrapped = CF_BUF_INIT;
    cf_buf_puts(&line, prefix);
    cf_buf_puts(&line, text);
    int indent = cf_text_width(prefix, strlen(prefix));
    cf_text_wrap_line(cf_buf_cstr(&line), line.len, cf_cli_terminal_columns(STDERR_FILENO), indent ? indent : 2,
                      &wrapped);
    if (cf_buf_failed(&line) || cf_buf_failed(&wrapped)) {
        fputs(prefix, stderr);
        fputs(text, stderr);
        fputc('\n', stderr);
    } else {
        fputs(cf_buf_cstr(&wrapped), stderr);
    }
    cf_buf_free(&line);
    cf_buf_free(&wrapped);
}

/* The formatted text: in `small` (LOG_SMALL bytes) when it fits, else
 * malloc'd (the caller frees it when it is not `small`), else cut to fit. */
#define LOG_SMALL 1024
static char *format_text(char *small, const char *fmt, va_list ap) CF_PRINTF(2, 0);
static char *format_text(char *small, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(small, LOG_SMALL, fmt, copy);
    va_end(copy);
    char *text = small;
    if (n >= LOG_SMALL && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, ap);
    return text ? text : small;
}

/* The formatted message with every password hidden and control
 * characters escaped, written after `prefix`: messages echo text from
 * input (a probe's error, a CSV field, a URL), and none of it may act on
 * the terminal or fake a line of output; a database URL typed where
 * another word was expected ('--branch $EMPTY --db URL' makes it the
 * sub-command) must not put its password in a CI log
 * (cloudfit/common/redact.h: the last-error text is redacted when set,
 * this covers what the CLI formats itself). */
static void put_escaped(const char *prefix, const char *fmt, va_list ap) CF_PRINTF(2, 0);
static void put_escaped(const char *prefix, const char *fmt, va_list ap)
{
    char small[LOG_SMALL];
    char *text = format_text(small, fmt, ap);
    if (cf_has_secrets(text)) {
        size_t len = cf_redact_secrets(text, NULL, 0);
        char *redacted = malloc(len + 1);
        if (redacted)
            cf_redact_secrets(text, redacted, len + 1);
        if (text != small)
            free(text);
        if (!redacted) {
            put_line(prefix, "(a message holding a password, not shown: out of memory)");
            return;
        }
        text = redacted; /* freed below, as a long message is */
    }
    if (cf_has_controls(text)) {
        cf_buf shown = CF_BUF_INIT;
        cf_escape_controls(text, &shown);
        put_line(prefix, cf_buf_cstr(&shown));
        cf_buf_free(&shown);
    } else {
        put_line(prefix, text);
    }
    if (text != small)
        free(text);
}

static void log_line(const char *prefix, const char *color, const char *fmt, va_list ap) CF_PRINTF(3, 0);
static void log_line(const char *prefix, const char *color, const char *fmt, va_list ap)
{
    char shown[64];
    if (cf_log_color_enabled(stderr))
        snprintf(shown, sizeof shown, "%s%s\033[0m", color, prefix);
    else
        snprintf(shown, sizeof shown, "%s", prefix);
    put_escaped(shown, fmt, ap);
}

static void cf_log_error_line(const char *fmt, ...) CF_PRINTF(1, 2);
static void cf_log_error_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("cloudfit: ", "\033[1;31m", fmt, ap);
    va_end(ap);
}

/* Options whose value came from the configuration file, and where from
 * ("FILE: section.key"): an error about "option '--NAME'", or naming
 * --NAME as a word ("--fit goes with --calibrate DIR"), names them, as the
 * value was never typed on the command line. */
#define OPTION_SOURCES_MAX 64
static struct {
    char quoted[64]; /* "option '--NAME'" */
    char where[1100];
    char value[1100]; /* "'VALUE'" as a message quotes it; "" = none (or too long to match) */
    int from_env;
} option_sources[OPTION_SOURCES_MAX];

/* Whether `message` holds "--NAME" as a whole word (not --NAME-more, not
 * a---NAME), NAME being `quoted` past "option '--" up to its quote. */
static int names_option(const char *message, const char *quoted)
{
    const char *name = quoted + strlen("option '--");
    size_t len = strlen(name) - 1;
    for (const char *p = strstr(message, "--"); p; p = strstr(p + 1, "--")) {
        if (strncmp(p + 2, name, len) != 0)
            continue;
        char before = p > message ? p[-1] : ' ', after = p[2 + len];
        if (!isalnum((unsigned char)before) && before != '-' && !isalnum((unsigned char)after) && after != '-')
            return 1;
    }
    return 0;
}
static int n_option_sources;

void cf_log_option_source(const char *long_name, const char *where, const char *value, int from_env)
{
    if (n_option_sources == OPTION_SOURCES_MAX)
        return;
    snprintf(option_sources[n_option_sources].quoted, sizeof option_sources[0].quoted, "option '--%s'", long_name);
    snprintf(option_sources[n_option_sources].where, sizeof option_sources[0].where, "%s", where);
    option_sources[n_option_sources].from_env = from_env;
    int w = value && value[0] ? snprintf(option_sources[n_option_sources].value, sizeof option_sources[0].value,
                                         "'%s'", value) : 0;
    if (w < 0 || (size_t)w >= sizeof option_sources[0].value)
        option_sources[n_option_sources].value[0] = '\0';
    n_option_sources++;
}

void cf_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (n_option_sources == 0) {
        log_line("cloudfit: ", "\033[1;31m", fmt, ap);
        va_end(ap);
        return;
    }
    char small[LOG_SMALL];
    char *message = format_text(small, fmt, ap);
    va_end(ap);
    const char *where = NULL;
    for (int i = 0; i < n_option_sources && !where; i++)
        if (strstr(message, option_sources[i].quoted))
            where = option_sources[i].where;
    for (int i = 0; i < n_option_sources && !where; i++)
        if (names_option(message, option_sources[i].quoted))
            where = option_sources[i].where;
    if (where)
        cf_log_error_line("%s: %s", where, message);
    else
        cf_log_error_line("%s", message);
    /* a value the user never typed, quoted in the message ("cannot open
     * '/x/h.db'" of CLOUDFIT_DB): say where it came from, as git does */
    for (int i = 0; i < n_option_sources && !where; i++)
        if (option_sources[i].value[0] && strstr(message, option_sources[i].value)) {
            const char *name = option_sources[i].quoted + strlen("option '");
            cf_log_hint("%s is %.*s from %s %s (%.*s on the command line overrides it)", option_sources[i].value,
                        (int)strlen(name) - 1, name, option_sources[i].from_env ? "the environment variable" :
                        "the configuration file,", option_sources[i].where, (int)strlen(name) - 1, name);
            break;
        }
    if (message != small)
        free(message);
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
    put_escaped("", fmt, ap);
    va_end(ap);
}
