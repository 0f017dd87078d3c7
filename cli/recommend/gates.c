#include "recommend/gates.h"

#include "cloudfit/common/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "cloudfit/common/fileio.h"
#include "log.h"

int cf_gate_parse_increase(const char *text, cf_gate_limits *limits)
{
    const char *p = text;
    if (*p == '$')
        p++;
    char *end = NULL;
    errno = 0;
    double v = strtod(p, &end);
    int pct = end && *end == '%' && end[1] == '\0' && p == text;
    if (end == p || errno || !isfinite(v) || v < 0 || (!pct && *end)) {
        cf_log_error("option '--max-cost-increase' expects a percentage (10%%) or US dollars (25 or $25), got '%s'",
                     text);
        cf_log_hint("see 'cloudfit recommend --help'");
        return CF_EXIT_USAGE;
    }
    limits->max_increase = v;
    limits->increase_is_pct = pct;
    return 0;
}

int cf_gates_any(const cf_gate_limits *l)
{
    return l->max_cost_usd > 0 || l->max_hours > 0 || l->max_increase >= 0;
}

static void gate(cf_history_gate *g, const char *name, double limit, double value)
{
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->limit = limit;
    g->value = value;
    /* A small tolerance: values are rounded for display, and a cost equal
     * to the limit passes. */
    g->passed = isnan(value) || value <= limit * (1 + 1e-9) + 1e-9;
}

size_t cf_gates_evaluate(const cf_gate_limits *l, double total_usd, double hours, const cf_baseline *base,
                         cf_history_gate *out)
{
    size_t n = 0;
    if (l->max_cost_usd > 0) {
        gate(&out[n], "max_cost_usd", l->max_cost_usd, total_usd);
        snprintf(out[n].note, sizeof out[n].note, "predicted total cost $%.2f, limit $%.2f", total_usd,
                 l->max_cost_usd);
        n++;
    }
    if (l->max_hours > 0) {
        gate(&out[n], "max_hours", l->max_hours, hours);
        snprintf(out[n].note, sizeof out[n].note, "predicted wall time %.2f h, limit %.2f h", hours, l->max_hours);
        n++;
    }
    if (l->max_increase >= 0) {
        cf_history_gate *g = &out[n++];
        const char *name = l->increase_is_pct ? "max_cost_increase_pct" : "max_cost_increase_usd";
        if (!base || !base->have) {
            gate(g, name, l->max_increase, NAN);
            snprintf(g->note, sizeof g->note, "no earlier recommendation to compare with: passes");
        } else {
            double before = base->chosen.total_usd, delta = total_usd - before;
            double value = l->increase_is_pct ? (before > 0 ? 100 * delta / before : (delta > 0 ? INFINITY : 0))
                                              : delta;
            gate(g, name, l->max_increase, value);
            snprintf(g->note, sizeof g->note, "$%.2f → $%.2f (%+.2f USD, %+.1f%%) against %.100s", before, total_usd,
                     delta, before > 0 ? 100 * delta / before : 0.0, base->source);
        }
    }
    return n;
}

int cf_gates_passed(const cf_history_gate *gates, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!gates[i].passed)
            return 0;
    return 1;
}

/* Rounded so documents are stable: 6 significant digits. */
static double round6(double v)
{
    if (v == 0 || !isfinite(v))
        return v;
    double scale = pow(10, 5 - (int)floor(log10(fabs(v))));
    return round(v * scale) / scale;
}

cJSON *cf_gates_json(const cf_history_gate *gates, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const cf_history_gate *g = &gates[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", g->name);
        cJSON_AddNumberToObject(o, "limit", g->limit);
        if (isfinite(g->value))
            cJSON_AddNumberToObject(o, "value", round6(g->value));
        else
            cJSON_AddNullToObject(o, "value");
        cJSON_AddBoolToObject(o, "passed", g->passed);
        cJSON_AddStringToObject(o, "note", g->note);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

void cf_baseline_from_row(const cf_history_row *row, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    out->have = 1;
    out->id = row->id;
    if (row->ci.branch[0])
        snprintf(out->source, sizeof out->source, "recommendation %lld (%.64s, %s)", row->id, row->ci.branch,
                 row->created_at);
    else
        snprintf(out->source, sizeof out->source, "recommendation %lld (%s)", row->id, row->created_at);
    snprintf(out->created_at, sizeof out->created_at, "%s", row->created_at);
    snprintf(out->catalog, sizeof out->catalog, "%s %s", row->catalog_name, row->catalog_date);
    out->chosen = row->chosen;
}

static const cJSON *field(const cJSON *o, const char *key, int want_string, const char *path, cf_status *st)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (*st != CF_OK)
        return NULL;
    if (!v || (want_string ? !cJSON_IsString(v) : !cJSON_IsNumber(v))) {
        *st = cf_error_set(CF_ERR_INVALID, "%s: chosen.%s: expected a %s", path, key,
                           want_string ? "string" : "number");
        cf_error_hint("--compare-to takes a document written by 'cloudfit recommend --format json'");
        return NULL;
    }
    return v;
}

static void copy_string(char *out, size_t n, const cJSON *v)
{
    snprintf(out, n, "%s", v ? v->valuestring : "");
}

cf_status cf_baseline_from_file(const char *path, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    st = cf_baseline_from_text(text, len, path, out);
    free(text);
    return st;
}

cf_status cf_baseline_from_text(const char *text, size_t len, const char *path, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    cJSON *doc = NULL;
    cf_status st = cf_json_read(text, len, path, &doc);
    if (st != CF_OK) {
        cf_error_hint("--compare-to takes a document written by 'cloudfit recommend --format json'");
        return st;
    }
    const cJSON *chosen = cJSON_GetObjectItemCaseSensitive(doc, "chosen");
    if (!cJSON_IsObject(chosen)) {
        cJSON_Delete(doc);
        cf_error_set(CF_ERR_INVALID, "%s: chosen: expected an object (the chosen configuration)", path);
        cf_error_hint("--compare-to takes a document written by 'cloudfit recommend --format json'");
        return CF_ERR_INVALID;
    }
    cf_history_config *c = &out->chosen;
    c->rank = 1;
    copy_string(c->cloud, sizeof c->cloud, field(chosen, "cloud", 1, path, &st));
    copy_string(c->region, sizeof c->region, field(chosen, "region", 1, path, &st));
    copy_string(c->instance_type, sizeof c->instance_type, field(chosen, "instance_type", 1, path, &st));
    copy_string(c->gpu, sizeof c->gpu, field(chosen, "gpu", 1, path, &st));
    const char *nums[] = {"gpus_per_node", "nodes", "local_batch", "accumulation", "global_batch",
                          "lr", "step_time_s", "hours", "total_usd", "usd_per_hour"};
    /* Counts are whole numbers that fit their fields; the rest finite and
     * not negative: a value out of range is named, never cast blindly. */
    static const double max_of[10] = {1024, 1e6, 1e7, 1e6, 1e15, 1e6, 1e9, 1e9, 1e15, 1e9};
    double v[10] = {0};
    for (int i = 0; i < 10; i++) {
        const cJSON *x = field(chosen, nums[i], 0, path, &st);
        v[i] = x ? x->valuedouble : 0;
        if (st == CF_OK && (!(v[i] >= 0 && v[i] <= max_of[i]) || (i < 5 && v[i] != floor(v[i])))) {
            st = cf_error_set(CF_ERR_INVALID, "%s: chosen.%s: expected %s from 0 to %g, got %g", path, nums[i],
                              i < 5 ? "an integer" : "a number", max_of[i], v[i]);
            cf_error_hint("--compare-to takes a document written by 'cloudfit recommend --format json'");
        }
    }
    const cJSON *spot = cJSON_GetObjectItemCaseSensitive(chosen, "spot");
    if (st == CF_OK && !cJSON_IsBool(spot)) {
        st = cf_error_set(CF_ERR_INVALID, "%s: chosen.spot: expected true or false", path);
    }
    if (st == CF_OK) {
        c->gpus_per_node = (int)v[0];
        c->nodes = (int)v[1];
        c->local_batch = (int)v[2];
        c->accumulation = (int)v[3];
        c->global_batch = (long)v[4];
        c->lr = v[5];
        c->step_time_s = v[6];
        c->hours = v[7];
        c->total_usd = v[8];
        c->usd_per_node_hour = c->nodes > 0 ? v[9] / c->nodes : 0;
        c->spot = cJSON_IsTrue(spot);
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
        const cJSON *created = cJSON_GetObjectItemCaseSensitive(meta, "created_at");
        if (cJSON_IsString(created))
            snprintf(out->created_at, sizeof out->created_at, "%s", created->valuestring);
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(doc, "catalog");
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(cat, "source");
        const cJSON *date = cJSON_GetObjectItemCaseSensitive(cat, "fetched_at");
        snprintf(out->catalog, sizeof out->catalog, "%.48s %.16s", cJSON_IsString(src) ? src->valuestring : "?",
                 cJSON_IsString(date) ? date->valuestring : "?");
        snprintf(out->source, sizeof out->source, "%.300s%s%s", path, out->created_at[0] ? " of " : "",
                 out->created_at);
        out->have = 1;
    }
    cJSON_Delete(doc);
    return st;
}

void cf_gates_text(const cf_history_gate *gates, size_t n, cf_buf *out)
{
    if (!n)
        return;
    cf_buf_printf(out, "\nGates: %s\n", cf_gates_passed(gates, n) ? "all passed" : "FAILED");
    for (size_t i = 0; i < n; i++)
        cf_buf_printf(out, "  %s %-22s %s\n", gates[i].passed ? "pass" : "FAIL", gates[i].name, gates[i].note);
}
