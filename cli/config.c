#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cloudfit/common/json.h"
#include "cloudfit/common/number.h"
#include "cloudfit/db.h"
#include "commands.h"
#include "exit_codes.h"
#include "log.h"

/* Options that describe one run, never a default. */
static const char *const not_configurable[] = {"help", "man", "step-time-s", "total-hours", "total-usd", "note"};

/* Options that take defaults only from their command's own section, never
 * the top level: they share their names with the filters of where
 * recommend, search and prices run, and mean something else. A top-level
 * "cloud": ["aws", "gcp"] or "gpu": "H100" is that filter: not which past
 * recommendations history lists, not the VM a simulate trace was recorded
 * on (a V100 trace was replayed on H100 VMs, and two clouds stopped every
 * simulate), not the GPU a profile --runner measures. */
static const struct {
    const char *name;
    unsigned command;
} section_only[] = {{"cloud", CMD_HISTORY | CMD_SIMULATE}, {"gpu", CMD_HISTORY | CMD_SIMULATE | CMD_PROFILE},
                    {"region", CMD_SIMULATE}};

static int is_section_only(const cf_cli_option *o, unsigned command)
{
    for (size_t i = 0; i < sizeof section_only / sizeof *section_only; i++)
        if (strcmp(o->long_name, section_only[i].name) == 0 && (command & section_only[i].command) &&
            (o->commands & section_only[i].command))
            return 1;
    return 0;
}

/* The parsed file, kept for the life of the process: option values point into it. */
static cJSON *config_doc;
static int config_loaded;
static char config_file[PATH_MAX];

static int configurable(const cf_cli_option *o)
{
    for (size_t i = 0; i < sizeof not_configurable / sizeof *not_configurable; i++)
        if (strcmp(o->long_name, not_configurable[i]) == 0)
            return 0;
    return 1;
}

int cf_cli_config_path(char *out, size_t n)
{
    const char *explicit_path = getenv("CLOUDFIT_CONFIG");
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int w;
    if (explicit_path && *explicit_path)
        w = snprintf(out, n, "%s", explicit_path);
    else if (xdg && *xdg)
        w = snprintf(out, n, "%s/cloudfit/config.json", xdg);
    else if (home && *home)
        w = snprintf(out, n, "%s/.config/cloudfit/config.json", home);
    else
        w = snprintf(out, n, "%s", "");
    if (w < 0 || (size_t)w >= n) { /* never a shorter path than the one meant */
        out[0] = '\0';
        cf_log_error("configuration file path too long (%d bytes, at most %zu): check %s", w, n - 1,
                     explicit_path && *explicit_path ? "CLOUDFIT_CONFIG"
                     : xdg && *xdg                   ? "XDG_CONFIG_HOME"
                                                     : "HOME");
        return CF_EXIT_DATA;
    }
    return 0;
}

/* Options named `key` (several commands may share a name with different
 * kinds, e.g. --spot): the one `command` takes, else any. */
static const cf_cli_option *find_option(const char *key, unsigned command)
{
    const cf_cli_option *any = NULL;
    for (size_t i = 0; i < cf_cli_option_count; i++) {
        const cf_cli_option *o = &cf_cli_option_table[i];
        if (strcmp(o->long_name, key) == 0) {
            if (o->commands & command)
                return o;
            any = o;
        }
    }
    return any;
}

static int config_error(const char *key_path, const char *fmt, const char *what)
{
    char message[512];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(message, sizeof message, fmt, what); /* callers pass a literal with one %s */
#pragma GCC diagnostic pop
    cf_log_error("%s: %s: %s", config_file, key_path, message);
    cf_log_hint("the keys are option names without the dashes (\"top\": 5) and command names with their own "
                "options ({\"recommend\": {\"top\": 5}}); docs/config.md");
    return CF_EXIT_DATA;
}

/* Checks one option value's type (and range, as the command line does). */
static int check_value(const cf_cli_option *o, const cJSON *v, const char *key_path)
{
    switch (o->kind) {
    case OPT_FLAG:
        return cJSON_IsBool(v) ? 0 : config_error(key_path, "expected true or false%s", "");
    case OPT_STRING:
        return cJSON_IsString(v) ? 0 : config_error(key_path, "expected a string%s", "");
    case OPT_INT:
    case OPT_DOUBLE:
        /* the type only: the value (its sign, a count's whole number, the option's range) is checked as on
         * the command line when the command runs (store), exit 2 with the range: "timeout": 0 and
         * "top": 0 were "expected a positive number", exit 3, where 0.5 and 2000000 said the range */
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
            return 0;
        return config_error(key_path, o->kind == OPT_INT ? "expected a positive integer%s" : "expected a positive number%s",
                            ", written as a JSON number");
    case OPT_LIST: {
        const cJSON *item;
        if (cJSON_IsString(v))
            return 0;
        if (!cJSON_IsArray(v)) /* any number of items, as on the command line */
            return config_error(key_path, "expected a string or a list of strings%s", "");
        cJSON_ArrayForEach(item, v)
        {
            if (!cJSON_IsString(item))
                return config_error(key_path, "expected a string or a list of strings%s", "");
        }
        return 0;
    }
    }
    return 0;
}

/* Whether a value has the type option `o` takes (the same key may name
 * options of different kinds in different commands, e.g. spot). */
static int value_fits(const cf_cli_option *o, const cJSON *v)
{
    switch (o->kind) {
    case OPT_FLAG: return cJSON_IsBool(v);
    case OPT_STRING: return cJSON_IsString(v);
    case OPT_INT:
    case OPT_DOUBLE: return cJSON_IsNumber(v);
    case OPT_LIST: return cJSON_IsString(v) || cJSON_IsArray(v);
    }
    return 0;
}

/* Every key of an object of option values (the top level or a command's section). */
static int check_options(const cJSON *obj, unsigned command, const char *section)
{
    const cJSON *kv;
    cJSON_ArrayForEach(kv, obj)
    {
        char key_path[160];
        snprintf(key_path, sizeof key_path, "%s%s%s", section ? section : "", section ? "." : "", kv->string);
        if (!section && cf_command_find(kv->string)) {
            const cf_command *cmd = cf_command_find(kv->string);
            if (!cJSON_IsObject(kv))
                return config_error(key_path, "expected an object of %s's options", cmd->name);
            int rc = check_options(kv, cmd->bit, cmd->name);
            if (rc)
                return rc;
            continue;
        }
        /* the option of that name the command takes, of the value's type when several are */
        const cf_cli_option *o = NULL, *first = NULL;
        for (size_t i = 0; i < cf_cli_option_count; i++) {
            const cf_cli_option *c = &cf_cli_option_table[i];
            if (strcmp(c->long_name, kv->string) != 0 || !(c->commands & command))
                continue;
            if (!first)
                first = c;
            if (!o && value_fits(c, kv))
                o = c;
        }
        if (!first) {
            /* an option of another command: ignored for this one, with a
             * note when this command runs (note_ignored) */
            if (section && find_option(kv->string, CMD_ALL))
                continue;
            return config_error(key_path, "unknown key%s: not an option or a command of cloudfit", "");
        }
        if (!o)
            o = first;
        if (!configurable(o))
            return config_error(key_path, "--%s describes one run; it has no default", o->long_name);
        int rc = check_value(o, kv, key_path);
        if (rc)
            return rc;
    }
    return 0;
}

/* Reads and checks the file once. 0 (also when there is none) or the exit code. */
static int load(void)
{
    if (config_loaded)
        return 0;
    config_loaded = 1;
    int rc = cf_cli_config_path(config_file, sizeof config_file);
    if (rc)
        return rc;
    const char *env = getenv("CLOUDFIT_CONFIG");
    int from_env = env && *env;
    if (from_env && strcmp(config_file, "/dev/null") == 0)
        return 0; /* the usual way to say "no configuration file" (as GIT_CONFIG=/dev/null) */
    if (!config_file[0] || access(config_file, F_OK) != 0) {
        /* only a file that is not there is no file: one behind a symlink
         * loop was silently dropped, with every default it holds. A folder
         * the user may not search is another user's HOME (sudo -u keeps
         * HOME): no file, as git reads its user configuration there */
        if (!from_env && config_file[0] && errno != ENOENT && errno != ENOTDIR && errno != EACCES && errno != EPERM) {
            cf_log_error("cannot read the configuration file '%s': %s", config_file, strerror(errno));
            cf_log_hint("the configuration file is a JSON file of option defaults; make it readable or move it "
                        "away (docs/config.md)");
            return CF_EXIT_DATA;
        }
        if (from_env) {
            cf_log_error("cannot read the configuration file '%s' (CLOUDFIT_CONFIG): %s", config_file, strerror(errno));
            cf_log_hint("point CLOUDFIT_CONFIG at an existing file, or unset it to use the default place (docs/config.md)");
            return CF_EXIT_DATA;
        }
        return 0;
    }
    struct stat sb;
    if (stat(config_file, &sb) == 0 && !S_ISREG(sb.st_mode)) { /* named, but no file to read */
        cf_log_error("cannot read the configuration file '%s'%s: %s", config_file, from_env ? " (CLOUDFIT_CONFIG)" : "",
                     S_ISDIR(sb.st_mode) ? "it is a directory" : "not a regular file");
        if (from_env)
            cf_log_hint("point CLOUDFIT_CONFIG at a JSON file, or at /dev/null for none (docs/config.md)");
        else
            cf_log_hint("the configuration file is a JSON file of option defaults; move this one away (docs/config.md)");
        return CF_EXIT_DATA;
    }
    if (cf_json_load_file(config_file, &config_doc) != CF_OK)
        return cf_report_error();
    if (!cJSON_IsObject(config_doc))
        return config_error("(top level)", "expected an object of option defaults%s", "");
    rc = check_options(config_doc, CMD_ALL, NULL);
    if (rc) {
        cJSON_Delete(config_doc);
        config_doc = NULL;
    }
    return rc;
}

int cf_cli_option_is_set(const cf_cli_option *o, const cf_cli_options *opts)
{
    cf_cli_options init;
    cf_cli_options_init(&init);
    const char *a = (const char *)opts + o->offset, *b = (const char *)&init + o->offset;
    if (o->kind == OPT_FLAG && opts->flag_given[o - cf_cli_option_table])
        return 1; /* --FLAG=false is set too */
    switch (o->kind) {
    case OPT_FLAG:
    case OPT_INT: return *(const int *)a != *(const int *)b;
    case OPT_DOUBLE: return *(const double *)a != *(const double *)b;
    case OPT_STRING: return *(const char *const *)a != NULL;
    case OPT_LIST: return ((const cf_cli_list *)a)->n > 0;
    }
    return 0;
}

/* --width and --wide: one setting, two options. */
static int is_width_setting(const cf_cli_option *o)
{
    return o->offset == offsetof(cf_cli_options, width) || o->offset == offsetof(cf_cli_options, wide);
}

/* The key of `section` that sets the width setting ("width": N or "wide":
 * true), or NULL: it keeps the top level's width and wide out, as the
 * command's section comes first (a top-level "wide": true beat a
 * section's "width": 60). */
static const char *section_width_key(const cJSON *section)
{
    for (size_t i = 0; cJSON_IsObject(section) && i < cf_cli_option_count; i++) {
        const cf_cli_option *w = &cf_cli_option_table[i];
        const cJSON *v = is_width_setting(w) ? cJSON_GetObjectItemCaseSensitive(section, w->long_name) : NULL;
        if (v && value_fits(w, v) && (w->kind != OPT_FLAG || cJSON_IsTrue(v)))
            return w->long_name;
    }
    return NULL;
}

/* The config file's value for `o` and `command` (its section first), or NULL.
 * A section-only option (history's --cloud and --gpu) takes no top-level value. */
static const cJSON *config_value(const cf_cli_option *o, const char *command_name, char *key_path, size_t n)
{
    if (!config_doc)
        return NULL;
    const cf_command *cmd = command_name ? cf_command_find(command_name) : NULL;
    const cJSON *section = command_name ? cJSON_GetObjectItemCaseSensitive(config_doc, command_name) : NULL;
    const cJSON *v = cJSON_IsObject(section) ? cJSON_GetObjectItemCaseSensitive(section, o->long_name) : NULL;
    if (v && value_fits(o, v)) {
        snprintf(key_path, n, "%s.%s", command_name, o->long_name);
        return v;
    }
    if (cmd && is_section_only(o, cmd->bit))
        return NULL;
    v = cJSON_GetObjectItemCaseSensitive(config_doc, o->long_name);
    const char *width_key = is_width_setting(o) ? section_width_key(section) : NULL;
    if (v && value_fits(o, v) && width_key) { /* config show: "default (the file's kept out by prices.width)" */
        snprintf(key_path, n, "%s.%s", command_name, width_key);
        return NULL;
    }
    if (v && value_fits(o, v)) {
        snprintf(key_path, n, "%s", o->long_name);
        return v;
    }
    return NULL;
}

/* The environment variable that sets `o`, when one does and is set. */
static const char *env_for(const cf_cli_option *o)
{
    if (strcmp(o->long_name, "db") == 0) {
        /* set, even empty: an empty one is refused as --db '' is (it used the default history) */
        return getenv("CLOUDFIT_DB") ? "CLOUDFIT_DB" : NULL;
    }
    return NULL;
}

/* Stores a checked value through the command line's own store (the same
 * conversions and checks; a repeatable option appends item by item). */
static int store(const cf_cli_option *o, unsigned command, const char *command_name, const cJSON *v,
                 cf_cli_options *opts)
{
    char text[64];
    /* a value out of the option's fixed set is refused as on the command
     * line ("objective": "cheapest" was shown by config show as the
     * effective value); not at the top level of config show, where one
     * key serves commands with different sets ("format": "csv") */
    if (command != CMD_ALL && command_name && (o->kind == OPT_STRING || o->kind == OPT_LIST)) {
        const cJSON *item;
        if (cJSON_IsString(v))
            return cf_cli_option_check_value(o, command, command_name, v->valuestring) ?
                       CF_EXIT_USAGE : cf_cli_option_store(o, command_name, v->valuestring, opts);
        cJSON_ArrayForEach(item, v)
        {
            if (cf_cli_option_check_value(o, command, command_name, item->valuestring))
                return CF_EXIT_USAGE;
        }
    }
    if (!command_name)
        command_name = "config";
    switch (o->kind) {
    case OPT_FLAG:
        /* false too: it is the value in effect (config show said "(not set)" for a section's false) */
        return cf_cli_option_store(o, command_name, cJSON_IsTrue(v) ? NULL : "false", opts);
    case OPT_INT:
    case OPT_DOUBLE:
        /* the fewest digits that read back as the value: "%.17g" made a file's "timeout": 0.7 the
         * message's "got '0.69999999999999996'", not the value as written; a whole number whole
         * (100000 read "1e+05"), and a count's fraction kept ("%.0f" stored "top": 2.5 as 2) */
        if (v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 1e21)
            snprintf(text, sizeof text, "%.0f", v->valuedouble);
        else
            cf_number_exact_text(v->valuedouble, text, sizeof text);
        return cf_cli_option_store(o, command_name, text, opts);
    case OPT_STRING:
        return cf_cli_option_store(o, command_name, v->valuestring, opts);
    case OPT_LIST: {
        if (cJSON_IsString(v))
            return cf_cli_option_store(o, command_name, v->valuestring, opts);
        const cJSON *item;
        cJSON_ArrayForEach(item, v)
        {
            int rc = cf_cli_option_store(o, command_name, item->valuestring, opts);
            if (rc)
                return rc;
        }
        return 0;
    }
    }
    return 0;
}

/* The keys of the command's own section that name another command's
 * option: not an error (a section may be shared between versions, or
 * written for a sibling command), but the user learns they do nothing. */
static void note_ignored(unsigned command, const char *command_name)
{
    const cJSON *section = config_doc && command_name ? cJSON_GetObjectItemCaseSensitive(config_doc, command_name) : NULL;
    const cJSON *kv;
    if (!cJSON_IsObject(section))
        return;
    cJSON_ArrayForEach(kv, section)
    {
        const cf_cli_option *o = find_option(kv->string, command);
        if (o && !(o->commands & command))
            cf_log_info("note: %s: %s.%s: '%s' has no option --%s; ignored", config_file, command_name, kv->string,
                        command_name, kv->string);
    }
}

/* The one of them that `opts` sets, or NULL. */
static const cf_cli_option *width_setting_given(const cf_cli_options *opts)
{
    for (size_t i = 0; i < cf_cli_option_count; i++)
        if (is_width_setting(&cf_cli_option_table[i]) && cf_cli_option_is_set(&cf_cli_option_table[i], opts))
            return &cf_cli_option_table[i];
    return NULL;
}

int cf_cli_config_apply(unsigned command, const char *command_name, cf_cli_options *opts)
{
    int rc = load();
    if (rc)
        return rc;
    note_ignored(command, command_name);
    /* --width and --wide are one setting: either on the command line
     * overrides both in the file (a file's "wide": true beat --width 60) */
    const cf_cli_option *width_given = width_setting_given(opts);
    for (size_t i = 0; i < cf_cli_option_count; i++) {
        const cf_cli_option *o = &cf_cli_option_table[i];
        if (!(o->commands & command) || !configurable(o) || cf_cli_option_is_set(o, opts))
            continue;
        if (width_given && is_width_setting(o))
            continue;
        const char *env = env_for(o);
        if (env) {
            *(const char **)((char *)opts + o->offset) = getenv(env);
            char shown[1024];
            cf_db_redact(getenv(env), shown, sizeof shown); /* as messages show it: no password */
            cf_log_option_source(o->long_name, env, shown, 1); /* an error about it names the variable */
            if (command != CMD_ALL && command_name && (rc = cf_cli_option_check_value(o, command, command_name,
                                                                                      getenv(env))) != 0)
                return rc; /* checked as the command line and the file are: CLOUDFIT_DB= is --db '' */
            continue;
        }
        char key_path[96];
        const cJSON *v = config_value(o, command_name, key_path, sizeof key_path);
        if (v) {
            char where[PATH_MAX + 100];
            snprintf(where, sizeof where, "%s: %s", config_file, key_path);
            char shown[1024] = "";
            if (cJSON_IsString(v))
                cf_db_redact(v->valuestring, shown, sizeof shown); /* as messages show it: no password */
            cf_log_option_source(o->long_name, where, shown, 0);
        }
        if (v && (rc = store(o, command, command_name, v, opts)) != 0)
            return rc;
    }
    return 0;
}

cf_config_source cf_cli_config_source(const cf_cli_option *o, unsigned command, const char *command_name,
                                      const cf_cli_options *given, char *detail, size_t n)
{
    detail[0] = '\0';
    if (given && cf_cli_option_is_set(o, given))
        return CF_FROM_COMMAND_LINE;
    if (!(o->commands & command) || !configurable(o))
        return CF_FROM_DEFAULT;
    /* --width and --wide, one setting: either on the command line keeps both out of the file (cf_cli_config_apply) */
    const cf_cli_option *width_given = given && is_width_setting(o) ? width_setting_given(given) : NULL;
    if (width_given) {
        snprintf(detail, n, "--%s on the command line", width_given->long_name);
        return CF_FROM_DEFAULT;
    }
    const char *env = env_for(o);
    if (env) {
        snprintf(detail, n, "%s", env);
        return CF_FROM_ENV;
    }
    if (config_value(o, command_name, detail, n))
        return CF_FROM_CONFIG;
    return CF_FROM_DEFAULT;
}

void cf_cli_option_text(const cf_cli_option *o, const cf_cli_options *opts, char *out, size_t n)
{
    const char *field = (const char *)opts + o->offset;
    out[0] = '\0';
    if (!cf_cli_option_is_set(o, opts))
        return;
    switch (o->kind) {
    case OPT_FLAG: snprintf(out, n, "%s", *(const int *)field ? "true" : "false"); break;
    case OPT_INT: snprintf(out, n, "%d", *(const int *)field); break;
    case OPT_DOUBLE: snprintf(out, n, "%g", *(const double *)field); break;
    case OPT_STRING: snprintf(out, n, "%s", *(const char *const *)field); break;
    case OPT_LIST: {
        const cf_cli_list *list = (const cf_cli_list *)field;
        size_t used = 0;
        for (int i = 0; i < list->n && used + 1 < n; i++) {
            int w = snprintf(out + used, n - used, "%s%s", i ? "," : "", list->items[i]);
            used = w < 0 ? n : used + (size_t)w;
        }
        break;
    }
    }
}
