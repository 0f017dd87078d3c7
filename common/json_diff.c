/* Field-by-field differences of two JSON documents (cloudfit/common/json_diff.h). */
#include "cloudfit/common/json_diff.h"

#include <stdio.h>
#include <string.h>

#include "cloudfit/common/escape.h"

#define SHOWN_MAX 40

/* A value as shown: compact JSON, a long array as its length, a string
 * without quotes. */
static void shown(const cJSON *v, char *out, size_t n)
{
    if (!v) {
        snprintf(out, n, "(none)");
        return;
    }
    /* cut at a character boundary (cf_utf8_prefix), marked "…": a cut at a byte
     * count put half an 'é' into the gate note's "spec:" */
    if (cJSON_IsString(v)) {
        cf_text_clip(v->valuestring, n - 1, out, n);
        return;
    }
    char *text = cJSON_PrintUnformatted(v);
    if (text && strlen(text) <= SHOWN_MAX)
        snprintf(out, n, "%s", text);
    else if (cJSON_IsArray(v))
        snprintf(out, n, "%d items", cJSON_GetArraySize(v));
    else
        snprintf(out, n, "%.*s…", (int)cf_utf8_prefix(text ? text : "?", SHOWN_MAX), text ? text : "?");
    cJSON_free(text);
}

typedef struct {
    size_t n, max_items;
    cf_buf *out;
} diff_state;

static void changed(diff_state *st, const char *path, const cJSON *a, const cJSON *b)
{
    if (st->n++ >= st->max_items)
        return;
    char before[64], after[64];
    shown(a, before, sizeof before);
    shown(b, after, sizeof after);
    cf_buf_printf(st->out, "%s%s %s → %s", st->n > 1 ? "; " : "", path, before, after);
}

static void walk(diff_state *st, const char *path, const cJSON *a, const cJSON *b)
{
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        const cJSON *item;
        char sub[512];
        cJSON_ArrayForEach(item, b)
        {
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", item->string);
            walk(st, sub, cJSON_GetObjectItemCaseSensitive(a, item->string), item);
        }
        cJSON_ArrayForEach(item, a)
        {
            if (cJSON_GetObjectItemCaseSensitive(b, item->string))
                continue;
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", item->string);
            changed(st, sub, item, NULL);
        }
        return;
    }
    if (!a || !b || !cJSON_Compare(a, b, 1))
        changed(st, *path ? path : "(document)", a, b);
}

size_t cf_json_diff_text(const cJSON *before, const cJSON *after, size_t max_items, cf_buf *out)
{
    diff_state st = {0, max_items, out};
    walk(&st, "", before, after);
    if (st.n > max_items)
        cf_buf_printf(out, "; and %zu more", st.n - max_items);
    return st.n;
}
