/* The batch controller's JSON-lines protocol (cloudfit/advisor/rebalance.h). */
#include "cloudfit/advisor/rebalance.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/common/json.h"

int cf_rebalance_line_blank(const char *line)
{
    for (; *line; line++)
        if (!isspace((unsigned char)*line))
            return 0;
    return 1;
}

/* "an array", "a number", … for a message. */
static const char *json_kind(const cJSON *v)
{
    return cJSON_IsArray(v)    ? "an array"
           : cJSON_IsObject(v) ? "an object"
           : cJSON_IsString(v) ? "a string"
           : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsBool(v)   ? "a boolean"
           : cJSON_IsNull(v)   ? "null"
                               : "a value";
}

cf_status cf_rebalance_read_line(const char *line, const char *source, long number, int n, double *times)
{
    char name[48];
    snprintf(name, sizeof name, "%.32s:%ld", source, number);
    size_t len = strlen(line), text_len = len; /* the limit is on the text, not its line end */
    if (text_len > 0 && line[text_len - 1] == '\n')
        text_len--;
    if (text_len > 0 && line[text_len - 1] == '\r')
        text_len--;
    if (text_len > CF_REBALANCE_MAX_LINE)
        return cf_error_set(CF_ERR_INVALID, "%s: a line of %zu bytes, longer than the %d the protocol reads", name,
                            text_len, CF_REBALANCE_MAX_LINE);
    cJSON *doc = NULL;
    /* a syntax error at its line and column of the stream ("stdin:7:27"), not the line named twice; the
     * text without its line end, so that a line cut short ends on its own line, not at column 1 of the
     * next ("stdin:3:1" for line 2) */
    cf_status st = cf_json_read_at(line, text_len, source, number, &doc);
    if (st != CF_OK)
        return st;
    /* compute_s is the protocol's name; times_s, its first name, means the same */
    const char *key = "compute_s";
    const cJSON *t = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, key) : NULL;
    const cJSON *alias = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "times_s") : NULL;
    if (t && alias) { /* one key by two names, as a duplicate key: which to use is a guess */
        cJSON_Delete(doc);
        return cf_error_set(CF_ERR_INVALID, "%s: compute_s and times_s are the same key (times_s its first name): "
                                            "give one", name);
    }
    if (!t)
        t = alias, key = "times_s";
    /* what the line held, beside what was expected: a worker that joined or
     * left (a count off by one) read the same as a misspelt key */
    if (!cJSON_IsObject(doc) || !t) {
        cf_status bad = cf_error_set(CF_ERR_INVALID, "%s: expected {\"compute_s\": [%d numbers, one per worker]}, got %s",
                                     name, n, !cJSON_IsObject(doc) ? json_kind(doc) : "no key compute_s (or times_s)");
        cJSON_Delete(doc);
        return bad;
    }
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != n) {
        cf_status bad = cJSON_IsArray(t)
                            ? cf_error_set(CF_ERR_INVALID, "%s: %s holds %d value%s, expected %d (one per worker)",
                                           name, key, cJSON_GetArraySize(t), cJSON_GetArraySize(t) == 1 ? "" : "s", n)
                            : cf_error_set(CF_ERR_INVALID, "%s: %s is %s, expected an array of %d numbers (one per "
                                           "worker)", name, key, json_kind(t), n);
        cJSON_Delete(doc);
        return bad;
    }
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, t)
    {
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble)) {
            cJSON_Delete(doc);
            return cf_error_set(CF_ERR_INVALID, "%s: %s[%d]: expected a positive number of seconds", name, key, i);
        }
        double seconds = v->valuedouble;
        if (seconds < CF_REBALANCE_MIN_TIME_S || seconds > CF_REBALANCE_MAX_TIME_S) {
            cJSON_Delete(doc);
            return cf_error_set(CF_ERR_INVALID, "%s: %s[%d]: %.17g s is not an iteration's compute time (%g to %g s)",
                                name, key, i, seconds, CF_REBALANCE_MIN_TIME_S, CF_REBALANCE_MAX_TIME_S);
        }
        times[i++] = seconds;
    }
    cJSON_Delete(doc);
    return CF_OK;
}

void cf_rebalance_answer(const cf_rebalance *c, int changed, const char *skipped, cf_buf *out)
{
    cf_buf_puts(out, "{\"batches\": [");
    for (int i = 0; i < c->n; i++)
        cf_buf_printf(out, "%s%d", i ? ", " : "", c->batch[i]);
    cf_buf_printf(out, "], \"changed\": %s, \"updates\": %d, \"imbalance\": %.4g, \"band\": %.4g",
                  changed ? "true" : "false", c->updates, c->imbalance, c->band);
    if (c->n_below_floor) {
        cf_buf_puts(out, ", \"below_floor\": [");
        for (int i = 0, k = 0; i < c->n; i++)
            if (c->below_floor[i])
                cf_buf_printf(out, "%s%d", k++ ? ", " : "", i);
        cf_buf_puts(out, "]");
    }
    if (skipped) {
        cJSON *item = cJSON_CreateStringReference(skipped);
        char *text = item ? cJSON_PrintUnformatted(item) : NULL;
        cf_buf_printf(out, ", \"skipped\": %s", text ? text : "\"\"");
        cJSON_free(text);
        cJSON_Delete(item);
    }
    cf_buf_puts(out, "}\n");
}
