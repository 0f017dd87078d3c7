/* Validation helpers for model.json: the key path, error messages, key checks
 * with typo suggestions, and typed readers (see spec_internal.h). */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spec_internal.h"

#define SPEC_MSG_MAX 1024
#define SPEC_VALUE_SHOWN 48      /* characters of a string value shown in messages */

/* ---- key path ------------------------------------------------------------ */

/* Appends text, replacing control characters by '?' so that messages stay on
 * one line; silently truncates at the buffer's end. */
static void keypath_append(spec_ctx *c, const char *text)
{
    for (const char *p = text; *p && c->keypath_len + 1 < sizeof c->keypath; p++) {
        unsigned char ch = (unsigned char)*p;
        c->keypath[c->keypath_len++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    c->keypath[c->keypath_len] = '\0';
}

size_t spec_push_key(spec_ctx *c, const char *key)
{
    size_t mark = c->keypath_len;
    if (mark > 0)
        keypath_append(c, ".");
    keypath_append(c, key);
    return mark;
}

size_t spec_push_index(spec_ctx *c, int index)
{
    char text[24];
    size_t mark = c->keypath_len;
    snprintf(text, sizeof text, "[%d]", index);
    keypath_append(c, text);
    return mark;
}

void spec_pop(spec_ctx *c, size_t mark)
{
    c->keypath_len = mark;
    c->keypath[mark] = '\0';
}

/* ---- describing values ------------------------------------------------------ */

/* Shortest "%.Ng" text of v that reads back as v. */
static void format_number(double v, char *out, size_t n)
{
    snprintf(out, n, "%.15g", v);
    if (isfinite(v) && strtod(out, NULL) != v)
        snprintf(out, n, "%.17g", v);
}

/* s as a JSON-style quoted string, cut after SPEC_VALUE_SHOWN characters. */
static void format_string(const char *s, char *out, size_t n)
{
    size_t len = 0, shown = 0;
    if (n < 8)
        return;
    out[len++] = '"';
    for (const char *p = s; *p && len + 8 < n; p++) {
        unsigned char ch = (unsigned char)*p;
        if ((ch & 0xC0) != 0x80 && shown++ == SPEC_VALUE_SHOWN) {
            len += (size_t)snprintf(out + len, n - len, "...");
            break;
        }
        if (ch == '"' || ch == '\\')
            len += (size_t)snprintf(out + len, n - len, "\\%c", ch);
        else if (ch < 0x20)
            len += (size_t)snprintf(out + len, n - len, "\\u%04x", ch);
        else
            out[len++] = (char)ch;
    }
    snprintf(out + len, n - len, "\"");
}

void spec_quote(const char *text, char *out, size_t n) { format_string(text, out, n); }

static const char *type_name(const cJSON *item)
{
    if (cJSON_IsString(item))
        return "a string";
    if (cJSON_IsNumber(item))
        return "a number";
    if (cJSON_IsObject(item))
        return "an object";
    if (cJSON_IsArray(item))
        return "an array";
    if (cJSON_IsTrue(item))
        return "true";
    if (cJSON_IsFalse(item))
        return "false";
    return "null";
}

/* Writes got's value (numbers, quoted strings, literals) or type name
 * (objects, arrays) into out. */
static void describe_value(const cJSON *got, char *out, size_t n)
{
    if (cJSON_IsNumber(got))
        format_number(got->valuedouble, out, n);
    else if (cJSON_IsString(got))
        format_string(got->valuestring, out, n);
    else
        snprintf(out, n, "%s", type_name(got));
}

/* ---- errors ---------------------------------------------------------------- */

/* The last failure of this thread's parse as (key path, text), apart from
 * the message that joins them: a caller that wrote a value itself (the
 * command-line overrides) names its own source by the key, not by reading
 * the message. */
static _Thread_local struct {
    char key[SPEC_KEYPATH_MAX];
    char text[SPEC_MSG_MAX];
} last_failure;

void spec_failure_reset(void)
{
    last_failure.key[0] = '\0';
    last_failure.text[0] = '\0';
}

const char *spec_failure_key(void)
{
    return last_failure.key;
}

const char *spec_failure_text(void)
{
    return last_failure.text;
}

cf_status spec_fail(const spec_ctx *c, const char *fmt, ...)
{
    char text[SPEC_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(last_failure.key, sizeof last_failure.key, "%s", c->keypath);
    snprintf(last_failure.text, sizeof last_failure.text, "%s", text);
    if (c->keypath_len == 0)
        return cf_error_set(CF_ERR_INVALID, "%s: %s", c->file, text);
    return cf_error_set(CF_ERR_INVALID, "%s: %s: %s", c->file, c->keypath, text);
}

cf_status spec_fail_type(const spec_ctx *c, const char *what, const cJSON *got)
{
    return spec_fail(c, "expected %s, got %s", what, type_name(got));
}

cf_status spec_fail_value(const spec_ctx *c, const char *what, const cJSON *got)
{
    char shown[SPEC_VALUE_SHOWN * 2 + 16];
    describe_value(got, shown, sizeof shown);
    return spec_fail(c, "expected %s, got %s", what, shown);
}

cf_status spec_fail_missing(spec_ctx *c, const char *key, const char *example)
{
    size_t mark = spec_push_key(c, key);
    cf_status st = spec_fail(c, "required key is missing");
    spec_pop(c, mark);
    cf_error_hint("add \"%s\": %s", key, example);
    return st;
}

/* The unit a key's name ends in ("deadline_hours") and how a value may
 * spell it ("24h", "24 hours", "$20"). */
static const struct {
    const char *suffix, *unit, *spellings[6];
} KEY_UNITS[] = {
    {"_hours", "hours", {"h", "hr", "hrs", "hour", "hours", NULL}},
    {"_usd", "US dollars", {"$", "usd", "dollars", NULL}},
    {"_minutes", "minutes", {"m", "min", "mins", "minute", "minutes", NULL}},
    {"_mib", "MiB", {"mib", NULL}},
    {"_gbps", "Gbit/s", {"gbps", "gbit/s", "gb/s", NULL}},
};

/* A numeric string ("3") in place of a number gets a hint to drop the
 * quotes; one with the unit the key's name already says ("24h" for
 * deadline_hours, "$20" for budget_usd) the number alone; one with another
 * unit ("2d") what the key counts. */
static void hint_unquote(const spec_ctx *c, const cJSON *got)
{
    if (!cJSON_IsString(got) || got->valuestring[0] == '\0' || isspace((unsigned char)got->valuestring[0]))
        return;
    const char *text = got->valuestring;
    char *end = NULL;
    strtod(text, &end);
    if (end && *end == '\0') {
        cf_error_hint("write the number without quotes: %s", text);
        return;
    }
    const char *key = strrchr(c->keypath, '.');
    key = key ? key + 1 : c->keypath;
    size_t key_len = strlen(key);
    for (size_t u = 0; u < sizeof KEY_UNITS / sizeof *KEY_UNITS; u++) {
        size_t n = strlen(KEY_UNITS[u].suffix);
        if (key_len <= n || strcasecmp(key + key_len - n, KEY_UNITS[u].suffix) != 0)
            continue;
        const char *number = text[0] == '$' ? text + 1 : text; /* "$20" */
        double v = strtod(number, &end);
        if (end == number || isspace((unsigned char)number[0]) || !isfinite(v))
            return;
        const char *unit = end;
        while (isspace((unsigned char)*unit))
            unit++;
        int dollar = number != text;
        if (dollar && strcmp(KEY_UNITS[u].suffix, "_usd") != 0)
            unit = text; /* "$24" for hours: another unit */
        int same = dollar && *unit == '\0';
        for (int i = 0; !same && KEY_UNITS[u].spellings[i]; i++)
            same = strcasecmp(unit, KEY_UNITS[u].spellings[i]) == 0;
        if (same)
            cf_error_hint("write the number alone, without quotes or unit (%s is in %s): %.*s", key,
                          KEY_UNITS[u].unit, (int)(end - number), number);
        else
            cf_error_hint("write a number of %s without quotes or unit (the key's name says it)", KEY_UNITS[u].unit);
        return;
    }
}

/* ---- typo suggestions ------------------------------------------------------- */

#define SUGGEST_MAX_LEN 64

/* Optimal-string-alignment distance (edits incl. adjacent swaps) between
 * lowercased a and b; both at most SUGGEST_MAX_LEN bytes. */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    int d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
    for (int i = 0; i <= la; i++)
        d[i][0] = i;
    for (int j = 0; j <= lb; j++)
        d[0][j] = j;
    for (int i = 1; i <= la; i++) {
        for (int j = 1; j <= lb; j++) {
            int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ai != bj);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

/* The only entry of `names` that starts with `word` (case-insensitive, word of
 * 3+ characters), or NULL when none or several do. */
static const char *unique_prefix_match(const char *word, const char *const *names)
{
    size_t len = strlen(word);
    const char *match = NULL;
    if (len < 3)
        return NULL;
    for (const char *const *name = names; *name; name++) {
        if (strlen(*name) <= len || strncasecmp(*name, word, len) != 0)
            continue;
        if (match)
            return NULL;
        match = *name;
    }
    return match;
}

const char *spec_suggest(const char *word, const char *const *names)
{
    size_t len = strlen(word);
    if (len == 0 || len > SUGGEST_MAX_LEN)
        return NULL;
    int limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    const char *best = NULL;
    int best_distance = limit + 1;
    for (const char *const *name = names; *name; name++) {
        if (strlen(*name) > SUGGEST_MAX_LEN)
            continue;
        int distance = edit_distance(word, *name);
        if (distance < best_distance && distance < (int)len) {
            best = *name;
            best_distance = distance;
        }
    }
    if (best_distance == 0)   /* differs only in case */
        return best;
    const char *prefixed = unique_prefix_match(word, names);
    return prefixed ? prefixed : best;
}

/* ---- objects and keys ------------------------------------------------------- */

const cJSON *spec_member(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

cf_status spec_expect_object(const spec_ctx *c, const cJSON *item)
{
    return cJSON_IsObject(item) ? CF_OK : spec_fail_type(c, "an object", item);
}

static int in_list(const char *word, const char *const *names)
{
    for (const char *const *name = names; *name; name++)
        if (strcmp(word, *name) == 0)
            return 1;
    return 0;
}

/* Fails when `child`'s key already appeared among the earlier members. */
static cf_status check_duplicate(spec_ctx *c, const cJSON *obj, const cJSON *child)
{
    for (const cJSON *prev = obj->child; prev != child; prev = prev->next) {
        if (strcmp(prev->string, child->string) != 0)
            continue;
        size_t mark = spec_push_key(c, child->string);
        cf_status st = spec_fail(c, "duplicate key");
        spec_pop(c, mark);
        cf_error_hint("a key may appear only once in an object: remove one of them");
        return st;
    }
    return CF_OK;
}

static void hint_allowed_keys(const char *key, const char *const *allowed)
{
    const char *near = spec_suggest(key, allowed);
    if (near) {
        cf_error_hint("did you mean '%s'?", near);
        return;
    }
    char list[SPEC_MSG_MAX] = "";
    size_t len = 0;
    for (const char *const *name = allowed; *name && len < sizeof list; name++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", name == allowed ? "" : ", ",
                                *name);
    cf_error_hint("allowed keys here: %s", list);
}

cf_status spec_check_keys(spec_ctx *c, const cJSON *obj, const char *const *allowed)
{
    for (const cJSON *child = obj->child; child; child = child->next) {
        cf_status st = check_duplicate(c, obj, child);
        if (st != CF_OK)
            return st;
        if (in_list(child->string, allowed))
            continue;
        size_t mark = spec_push_key(c, child->string);
        st = spec_fail(c, "unknown key");
        spec_pop(c, mark);
        hint_allowed_keys(child->string, allowed);
        return st;
    }
    return CF_OK;
}

cf_status spec_check_duplicates(spec_ctx *c, const cJSON *obj)
{
    for (const cJSON *child = obj->child; child; child = child->next) {
        cf_status st = check_duplicate(c, obj, child);
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

/* ---- values ------------------------------------------------------------------- */

cf_status spec_read_int(const spec_ctx *c, const cJSON *item, const spec_int_rule *rule, int *out)
{
    if (!cJSON_IsNumber(item)) {
        cf_status st = spec_fail_type(c, rule->what, item);
        hint_unquote(c, item);
        return st;
    }
    double v = item->valuedouble;
    if (!isfinite(v) || v != floor(v)) {
        cf_status st = spec_fail_value(c, rule->what, item);
        if (isfinite(v))
            cf_error_hint("use a whole number");
        return st;
    }
    if (v < (double)rule->lo || v > (double)rule->hi) {
        cf_status st = spec_fail_value(c, rule->what, item);
        if (v > (double)rule->hi)
            cf_error_hint("the largest accepted value is %ld", rule->hi);
        return st;
    }
    *out = (int)v;
    return CF_OK;
}

cf_status spec_read_count(const spec_ctx *c, const cJSON *item, double *out)
{
    static const char what[] = "a positive integer";
    if (!cJSON_IsNumber(item)) {
        cf_status st = spec_fail_type(c, what, item);
        hint_unquote(c, item);
        return st;
    }
    double v = item->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < 1.0 || v > CF_SPEC_MAX_SAMPLES)
        return spec_fail_value(c, what, item);
    *out = v;
    return CF_OK;
}

cf_status spec_read_number(const spec_ctx *c, const cJSON *item, const spec_num_rule *rule, double *out)
{
    if (!cJSON_IsNumber(item)) {
        cf_status st = spec_fail_type(c, rule->what, item);
        hint_unquote(c, item);
        return st;
    }
    double v = item->valuedouble;
    if (!isfinite(v)) {
        cf_status st = spec_fail_value(c, rule->what, item);
        cf_error_hint("the number is too large to represent");
        return st;
    }
    int below = rule->lo_exclusive ? v <= rule->lo : v < rule->lo;
    if (below || v > rule->hi)
        return spec_fail_value(c, rule->what, item);
    *out = v;
    return CF_OK;
}

/* `one of "a", "b", "c"` for the names of an enum. */
static void format_choices(const char *const *names, char *out, size_t n)
{
    size_t len = (size_t)snprintf(out, n, "one of ");
    for (const char *const *name = names; *name && len < n; name++)
        len += (size_t)snprintf(out + len, n - len, "%s\"%s\"", name == names ? "" : ", ", *name);
}

cf_status spec_read_enum(const spec_ctx *c, const cJSON *item, const char *const *names, int *out_index)
{
    char what[256];
    format_choices(names, what, sizeof what);
    if (!cJSON_IsString(item))
        return spec_fail_type(c, what, item);
    for (int i = 0; names[i]; i++) {
        if (strcmp(item->valuestring, names[i]) == 0) {
            *out_index = i;
            return CF_OK;
        }
    }
    cf_status st = spec_fail_value(c, what, item);
    const char *near = spec_suggest(item->valuestring, names);
    if (near)
        cf_error_hint("did you mean \"%s\"?", near);
    return st;
}

cf_status spec_read_string(const spec_ctx *c, const cJSON *item, size_t max_len, char *out)
{
    if (!cJSON_IsString(item))
        return spec_fail_type(c, "a string", item);
    size_t len = strlen(item->valuestring);
    if (len == 0)
        return spec_fail_value(c, "a non-empty string", item);
    if (len > max_len) {
        char what[64];
        snprintf(what, sizeof what, "a string of at most %zu characters", max_len);
        return spec_fail_value(c, what, item);
    }
    memcpy(out, item->valuestring, len + 1);
    return CF_OK;
}

cf_status spec_read_path(const spec_ctx *c, const cJSON *item, char *out)
{
    char given[CF_PATH_MAX];
    cf_status st = spec_read_string(c, item, CF_PATH_MAX - 1, given);
    if (st != CF_OK)
        return st;
    const char *rel = given;
    if (given[0] == '/' || c->dir[0] == '\0' || strcmp(c->dir, ".") == 0) {
        memcpy(out, given, strlen(given) + 1);
        return CF_OK;
    }
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    int needed = snprintf(out, CF_PATH_MAX, "%s/%s", c->dir, rel);
    if (needed < 0 || needed >= CF_PATH_MAX) {
        out[0] = '\0';
        st = spec_fail_value(c, "a path of at most 1023 characters", item);
        cf_error_hint("relative paths are resolved against '%s'; that makes this one too long", c->dir);
        return st;
    }
    return CF_OK;
}

cf_status spec_read_array(const spec_ctx *c, const cJSON *item, int min, int max, const char *what,
                          int *out_count)
{
    if (!cJSON_IsArray(item))
        return spec_fail_type(c, what, item);
    int n = cJSON_GetArraySize(item);
    if (n == 0 && min > 0)
        return spec_fail(c, "expected %s, got an empty array", what);
    if (n < min || n > max)
        return spec_fail(c, "expected %s, got %d element%s", what, n, n == 1 ? "" : "s");
    *out_count = n;
    return CF_OK;
}

/* ---- members ------------------------------------------------------------------ */

/* Looks up obj[key]: NULL with *st = CF_OK when absent and optional, NULL with
 * an error when absent and required (example != NULL). */
static const cJSON *field_lookup(spec_ctx *c, const cJSON *obj, const char *key, const char *example,
                                 cf_status *st)
{
    const cJSON *item = spec_member(obj, key);
    *st = CF_OK;
    if (!item && example)
        *st = spec_fail_missing(c, key, example);
    return item;
}

cf_status spec_field_int(spec_ctx *c, const cJSON *obj, const char *key, const spec_int_rule *rule,
                         const char *example, int *out)
{
    cf_status st;
    const cJSON *item = field_lookup(c, obj, key, example, &st);
    if (!item)
        return st;
    size_t mark = spec_push_key(c, key);
    st = spec_read_int(c, item, rule, out);
    spec_pop(c, mark);
    return st;
}

cf_status spec_field_number(spec_ctx *c, const cJSON *obj, const char *key, const spec_num_rule *rule,
                            const char *example, double *out)
{
    cf_status st;
    const cJSON *item = field_lookup(c, obj, key, example, &st);
    if (!item)
        return st;
    size_t mark = spec_push_key(c, key);
    st = spec_read_number(c, item, rule, out);
    spec_pop(c, mark);
    return st;
}

cf_status spec_field_enum(spec_ctx *c, const cJSON *obj, const char *key, const char *const *names,
                          int *out_index)
{
    const cJSON *item = spec_member(obj, key);
    if (!item)
        return CF_OK;
    size_t mark = spec_push_key(c, key);
    cf_status st = spec_read_enum(c, item, names, out_index);
    spec_pop(c, mark);
    return st;
}

cf_status spec_field_string(spec_ctx *c, const cJSON *obj, const char *key, size_t max_len,
                            const char *example, char *out)
{
    cf_status st;
    const cJSON *item = field_lookup(c, obj, key, example, &st);
    if (!item)
        return st;
    size_t mark = spec_push_key(c, key);
    st = spec_read_string(c, item, max_len, out);
    spec_pop(c, mark);
    return st;
}

cf_status spec_field_object(spec_ctx *c, const cJSON *obj, const char *key, const char *example,
                            spec_object_reader reader, cf_spec *out)
{
    cf_status st;
    const cJSON *item = field_lookup(c, obj, key, example, &st);
    if (!item)
        return st;
    size_t mark = spec_push_key(c, key);
    st = spec_expect_object(c, item);
    if (st == CF_OK)
        st = reader(c, item, out);
    spec_pop(c, mark);
    return st;
}

/* Checks element i (at the current path) of an integer array. */
static cf_status read_int_element(spec_ctx *c, const cJSON *element, const spec_int_rule *rule,
                                  const int *previous, int *out)
{
    cf_status st = spec_read_int(c, element, rule, out);
    if (st != CF_OK || !previous || *out > *previous)
        return st;
    char what[96];
    snprintf(what, sizeof what, "an integer greater than %d (the entry before)", *previous);
    st = spec_fail_value(c, what, element);
    cf_error_hint("list the values in increasing order, each once");
    return st;
}

cf_status spec_read_int_array(spec_ctx *c, const cJSON *item, int min, int max, const char *what,
                              const spec_int_rule *rule, int increasing, int *out, int *out_count)
{
    int n = 0;
    cf_status st = spec_read_array(c, item, min, max, what, &n);
    if (st != CF_OK)
        return st;
    int i = 0;
    for (const cJSON *element = item->child; element; element = element->next, i++) {
        size_t mark = spec_push_index(c, i);
        st = read_int_element(c, element, rule, increasing && i > 0 ? &out[i - 1] : NULL, &out[i]);
        spec_pop(c, mark);
        if (st != CF_OK)
            return st;
    }
    *out_count = n;
    return CF_OK;
}
