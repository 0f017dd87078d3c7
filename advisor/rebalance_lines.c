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

cf_status cf_rebalance_read_line(const char *line, const char *source, long number, int n, double *times)
{
    char name[48];
    snprintf(name, sizeof name, "%.32s:%ld", source, number);
    cJSON *doc = NULL;
    cf_status st = cf_json_read(line, strlen(line), name, &doc);
    if (st != CF_OK)
        return st;
    const cJSON *t = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "times_s") : NULL;
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != n) {
        cJSON_Delete(doc);
        return cf_error_set(CF_ERR_INVALID, "%s: expected {\"times_s\": [%d numbers, one per worker]}", name, n);
    }
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, t)
    {
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble)) {
            cJSON_Delete(doc);
            return cf_error_set(CF_ERR_INVALID, "%s: times_s[%d]: expected a positive number of seconds", name, i);
        }
        times[i++] = v->valuedouble;
    }
    cJSON_Delete(doc);
    return CF_OK;
}

void cf_rebalance_answer(const cf_rebalance *c, int changed, cf_buf *out)
{
    cf_buf_puts(out, "{\"batches\": [");
    for (int i = 0; i < c->n; i++)
        cf_buf_printf(out, "%s%d", i ? ", " : "", c->batch[i]);
    cf_buf_printf(out, "], \"changed\": %s, \"updates\": %d, \"imbalance\": %.4g}\n", changed ? "true" : "false",
                  c->updates, c->imbalance);
}
