/* Field-by-field comparison of stored recommendations (cloudfit/db/history_diff.h). */
#include "cloudfit/db/history_diff.h"
#include "cloudfit/common/number.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void text_entry(cf_diff_entry *e, const char *key, const char *group, const char *a, const char *b)
{
    memset(e, 0, sizeof *e);
    e->key = key;
    e->group = group;
    snprintf(e->before, sizeof e->before, "%s", a);
    snprintf(e->after, sizeof e->after, "%s", b);
    e->before_value = e->after_value = NAN;
    e->changed = strcmp(a, b) != 0;
}

/* `digits` significant digits, never in exponent notation: a number too
 * large for them is shown whole, a price to the cent (a cost of
 * $1,234,567.89 was "1.23457e+06", and a change of it under $5 not one),
 * and one under 1e-4 in decimals (an LR of 4.21e-05 is "0.0000421"). */
static void shown(char *out, size_t n, double v, int digits, int cents)
{
    snprintf(out, n, "%.*g", digits, v);
    if (strchr(out, 'e') && fabs(v) >= 1)
        snprintf(out, n, "%.*f", cents ? 2 : 0, v);
    else if (strchr(out, 'e'))
        cf_number_plain_text(v, digits, out, n);
}

/* Numbers compare at the precision they are shown with: a change below
 * display precision is noise from re-running the same model. */
static void number_entry(cf_diff_entry *e, const char *key, const char *group, double a, double b, int digits)
{
    memset(e, 0, sizeof *e);
    e->key = key;
    e->group = group;
    int cents = strcmp(group, "prices") == 0 || strcmp(group, "cost") == 0;
    shown(e->before, sizeof e->before, a, digits, cents);
    shown(e->after, sizeof e->after, b, digits, cents);
    e->before_value = a;
    e->after_value = b;
    e->changed = strcmp(e->before, e->after) != 0;
}

size_t cf_config_diff(const cf_history_config *a, const cf_history_config *b, cf_diff_entry *out)
{
    size_t n = 0;
    text_entry(&out[n++], "cloud", "configuration", a->cloud, b->cloud);
    text_entry(&out[n++], "region", "configuration", a->region, b->region);
    text_entry(&out[n++], "instance_type", "configuration", a->instance_type, b->instance_type);
    text_entry(&out[n++], "gpu", "configuration", a->gpu, b->gpu);
    number_entry(&out[n++], "gpus_per_node", "configuration", a->gpus_per_node, b->gpus_per_node, 10);
    number_entry(&out[n++], "nodes", "configuration", a->nodes, b->nodes, 10);
    number_entry(&out[n++], "local_batch", "configuration", a->local_batch, b->local_batch, 10);
    number_entry(&out[n++], "accumulation", "configuration", a->accumulation, b->accumulation, 10);
    number_entry(&out[n++], "global_batch", "configuration", (double)a->global_batch, (double)b->global_batch, 12);
    number_entry(&out[n++], "lr", "configuration", a->lr, b->lr, 4);
    /* spot alone and spot with an on-demand fallback are two plans: their costs differ */
    text_entry(&out[n++], "spot", "configuration", !a->spot ? "no" : a->mixed ? "spot+od" : "yes",
               !b->spot ? "no" : b->mixed ? "spot+od" : "yes");
    number_entry(&out[n++], "step_time_s", "time", a->step_time_s, b->step_time_s, 4);
    number_entry(&out[n++], "hours", "time", a->hours, b->hours, 4);
    number_entry(&out[n++], "usd_per_node_hour", "prices", a->usd_per_node_hour, b->usd_per_node_hour, 6);
    number_entry(&out[n++], "total_usd", "cost", a->total_usd, b->total_usd, 6);
    return n;
}

double cf_diff_pct(const cf_diff_entry *e)
{
    if (isnan(e->before_value) || e->before_value == 0)
        return NAN;
    return 100 * (e->after_value - e->before_value) / e->before_value;
}

void cf_history_compare(const cf_history_row *a, const cf_history_row *b, cf_history_diff *out)
{
    memset(out, 0, sizeof *out);
    out->n = cf_config_diff(&a->chosen, &b->chosen, out->entries);
    /* What the configuration rests on: spec, objective, catalog, tool. */
    cf_diff_entry *e = out->entries;
    text_entry(&e[out->n++], "spec_hash", "inputs", a->spec_hash, b->spec_hash);
    text_entry(&e[out->n++], "objective", "inputs", a->objective, b->objective);
    text_entry(&e[out->n++], "catalog_name", "catalog", a->catalog_name, b->catalog_name);
    text_entry(&e[out->n++], "catalog_date", "catalog", a->catalog_date, b->catalog_date);
    text_entry(&e[out->n++], "tool_version", "inputs", a->tool_version, b->tool_version);
    for (size_t i = 0; i < out->n; i++)
        out->n_changed += e[i].changed;
}
