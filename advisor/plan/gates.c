/* CI gates and their baseline (cloudfit/advisor/gates.h). */
#include "cloudfit/advisor/gates.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/json.h"
#include "cloudfit/common/number.h"
#include "cloudfit/version.h"
#include "gates_internal.h"

cf_status cf_gate_limits_set_increase(cf_gate_limits *limits, const char *text)
{
    /* "10%" is a percentage; anything else US dollars, spelt as every
     * money option takes them (cf_number_usd: "25" or "$25"). */
    size_t len = strlen(text);
    int pct = len > 0 && text[len - 1] == '%' && text[0] != '$';
    double v = 0;
    char why[96] = "";
    cf_number_result r;
    if (pct) {
        char number[64];
        snprintf(number, sizeof number, "%.*s", (int)(len - 1), text);
        r = len - 1 >= sizeof number ? CF_NUMBER_RANGE : cf_number_double(number, 0, HUGE_VAL, &v);
        if (r != CF_NUMBER_OK)
            cf_number_explain(number, r, why, sizeof why);
        if (r == CF_NUMBER_EMPTY)
            snprintf(why, sizeof why, "no number before '%%'");
    } else {
        r = cf_number_usd(text, 0, HUGE_VAL, &v, why, sizeof why);
    }
    if (r == CF_NUMBER_OK && v > CF_GATE_MAX_USD) {
        r = CF_NUMBER_RANGE;
        snprintf(why, sizeof why, pct ? "more than 1e12%%" : "more than 1e12, the range of search.budget_usd");
    }
    if (r != CF_NUMBER_OK) {
        char shown[128];
        cf_escape_into(text, shown, sizeof shown);
        return cf_error_set(CF_ERR_USAGE, "expects a percentage (10%%) or US dollars (25 or $25), got '%s' (%s)", shown,
                            why);
    }
    limits->max_increase = v;
    limits->increase_is_pct = pct;
    return CF_OK;
}

cf_status cf_gate_limits_check(const cf_gate_limits *l)
{
    int usd = l->max_cost_usd > CF_GATE_MAX_USD;
    if (!usd && !(l->max_hours > CF_GATE_MAX_HOURS))
        return CF_OK;
    /* the bounds as the spec's rules write them ("up to 1e6"), not as %g does ("1e+06"); the value
     * exactly (%.6g wrote 1000001 as "1e+06", the bound itself) */
    char given[32];
    cf_number_exact_text(usd ? l->max_cost_usd : l->max_hours, given, sizeof given);
    cf_error_set(CF_ERR_USAGE, "option '--%s' expects a positive number of %s up to %s (the range of %s), got %s",
                 usd ? "max-cost" : "max-hours", usd ? "US dollars" : "hours", usd ? "1e12" : "1e6",
                 usd ? "search.budget_usd" : "search.deadline_hours", given);
    cf_error_hint("the limit is the predicted %s", usd ? "total cost of the run in US dollars" : "wall time of the run in hours");
    return CF_ERR_USAGE;
}

int cf_baseline_cost_usable(double total_usd)
{
    return total_usd > 0 && total_usd <= 1e15; /* false for NaN and Infinity too */
}

int cf_gates_any(const cf_gate_limits *l)
{
    return l->max_cost_usd > 0 || l->max_hours > 0 || l->max_increase >= 0 || l->require_baseline;
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

/* x as a recommendation document holds it (JSON numbers of 6 significant digits). */
static double at_document_precision(double x)
{
    char text[32];
    snprintf(text, sizeof text, "%.6g", x);
    return strtod(text, NULL);
}

/* "$50.88 (80 %: $39.22–$66.06)", or "$50.88" when the interval is unknown. */
static void usd_text(char *out, size_t n, double v, double lo, double hi)
{
    if (isfinite(lo) && isfinite(hi) && hi > 0)
        snprintf(out, n, "$%.2f (80 %%: $%.2f–$%.2f)", v, lo, hi);
    else
        snprintf(out, n, "$%.2f", v);
}

static void hours_text(char *out, size_t n, double v, double lo, double hi)
{
    if (isfinite(lo) && isfinite(hi) && hi > 0)
        snprintf(out, n, "%.3g h (80 %%: %.3g–%.3g)", v, lo, hi);
    else
        snprintf(out, n, "%.3g h", v);
}

static void config_text(char *out, size_t n, const cf_history_config *c)
{
    /* names from a --compare-to document or the history, cut at a character
     * boundary with "…": "%.40s" ended one inside an 'é', shown as "\xc3" */
    char instance[48], gpu[24];
    cf_text_clip(c->instance_type, 40, instance, sizeof instance);
    cf_text_clip(c->gpu, 20, gpu, sizeof gpu);
    snprintf(out, n, "%d × %s (%d×%s%s)", c->nodes, instance, c->gpus_per_node, gpu,
             !c->spot ? "" : c->mixed ? ", spot+od" : ", spot");
}

void cf_config_intervals(const cf_config *c, double *hours_p10, double *hours_p90, double *usd_p10, double *usd_p90)
{
    *hours_p10 = c->hours_p10, *hours_p90 = c->hours_p90, *usd_p10 = c->total_usd_p10, *usd_p90 = c->total_usd_p90;
    if (c->spot && c->spot_est.valid) {
        const cf_spot_spread *s = c->mixed && c->spot_est.has_mixed ? &c->spot_est.mixed : &c->spot_est.spot;
        *hours_p10 = s->p10_h, *hours_p90 = s->p90_h, *usd_p10 = s->p10_usd, *usd_p90 = s->p90_usd;
    }
}

/* The increase gate's note: the cost change with both intervals, then
 * what changed in the spec and in the plan. */
static void increase_note(char *out, size_t n, const cf_config *c, const cf_baseline *base, double delta)
{
    const cf_history_config *b = &base->chosen;
    cf_history_config now;
    cf_history_config_from(c, 1, &now);
    char cost_before[96], cost_now[96], h_before[80], h_now[80], cfg_before[96], cfg_now[96], spec[640];
    usd_text(cost_before, sizeof cost_before, b->total_usd, base->total_usd_p10, base->total_usd_p90);
    double h10, h90, u10, u90;
    cf_config_intervals(c, &h10, &h90, &u10, &u90);
    usd_text(cost_now, sizeof cost_now, c->total_usd, u10, u90);
    hours_text(h_before, sizeof h_before, b->hours, base->hours_p10, base->hours_p90);
    hours_text(h_now, sizeof h_now, c->hours, h10, h90);
    config_text(cfg_before, sizeof cfg_before, b);
    config_text(cfg_now, sizeof cfg_now, &now);
    if (!base->spec_known)
        snprintf(spec, sizeof spec, "%s", base->spec_changes[0] ? base->spec_changes : "not known (the baseline names no spec)");
    else
        snprintf(spec, sizeof spec, "%s", base->spec_changes[0] ? base->spec_changes : "unchanged");
    double before = b->total_usd;
    cf_buf text = CF_BUF_INIT;
    char pct[48];
    if (before >= CF_BASELINE_MIN_PCT_USD)
        snprintf(pct, sizeof pct, "%+.1f%%", 100 * delta / before);
    else
        snprintf(pct, sizeof pct, "from $%.2f: no percentage", before);
    cf_buf_printf(&text, "cost %s → %s, %+.2f USD (%s) against %s; spec: %s; ", cost_before, cost_now, delta, pct,
                  base->source, spec);
    /* the spec alone does not say why: a run recorded since, another price snapshot */
    if (base->evidence_changes[0])
        cf_buf_printf(&text, "evidence: %s; ", base->evidence_changes);
    cf_buf_puts(&text, "plan: ");
    if (strcmp(cfg_before, cfg_now) != 0)
        cf_buf_printf(&text, "%s → ", cfg_before);
    cf_buf_printf(&text, "%s, %s → %s", cfg_now, h_before, h_now);
    /* cut at a character boundary: the note is stored (PostgreSQL refuses half a character) */
    cf_text_fit(cf_buf_failed(&text) ? "(out of memory)" : cf_buf_cstr(&text), n - 1, out, n);
    cf_buf_free(&text);
}

/* value and limit with 2 decimals, more where 2 would print a failing
 * value equal to its limit ("$50.88, limit $50.88"): up to 8. A limit
 * those decimals do not give back reads as it was given (--max-cost
 * 0.000000001 read "limit $0.00000"). */
static void value_and_limit(char *v_text, char *l_text, size_t n, double value, double limit)
{
    for (int decimals = 2; decimals <= 8; decimals++) {
        snprintf(v_text, n, "%.*f", decimals, value);
        snprintf(l_text, n, "%.*f", decimals, limit);
        if (value == limit || strcmp(v_text, l_text) != 0)
            break;
    }
    if (strtod(l_text, NULL) != limit)
        cf_number_plain_text(limit, CF_NUMBER_AS_GIVEN, l_text, n);
}

size_t cf_gates_evaluate(const cf_gate_limits *l, const cf_config *c, const cf_baseline *base, cf_history_gate *out)
{
    char v_text[48], l_text[48];
    size_t n = 0;
    double total_usd = c->total_usd, hours = c->hours;
    int have = base && base->have;
    if (l->max_cost_usd > 0) {
        gate(&out[n], "max_cost_usd", l->max_cost_usd, total_usd);
        value_and_limit(v_text, l_text, sizeof v_text, total_usd, l->max_cost_usd);
        snprintf(out[n].note, sizeof out[n].note, "predicted total cost $%s, limit $%s", v_text, l_text);
        n++;
    }
    if (l->max_hours > 0) {
        gate(&out[n], "max_hours", l->max_hours, hours);
        value_and_limit(v_text, l_text, sizeof v_text, hours, l->max_hours);
        snprintf(out[n].note, sizeof out[n].note, "predicted wall time %s h, limit %s h", v_text, l_text);
        n++;
    }
    if (l->max_increase >= 0) {
        cf_history_gate *g = &out[n++];
        const char *name = l->increase_is_pct ? "max_cost_increase_pct" : "max_cost_increase_usd";
        if (!have) {
            gate(g, name, l->max_increase, NAN);
            if (base && base->lookup[0])
                snprintf(g->note, sizeof g->note, "no earlier recommendation to compare with (%.600s): passes",
                         base->lookup);
            else
                snprintf(g->note, sizeof g->note, "no earlier recommendation to compare with: passes");
        } else {
            /* at the precision a recommendation document writes dollars
             * (6 significant digits): an unchanged plan against its own
             * JSON failed a 0 % gate by the rounding (+2.3e-05 USD) */
            double before = at_document_precision(base->chosen.total_usd);
            double delta = at_document_precision(total_usd) - before;
            double value = l->increase_is_pct
                               ? (before >= CF_BASELINE_MIN_PCT_USD ? 100 * delta / before : (delta > 0 ? INFINITY : 0))
                               : delta;
            gate(g, name, l->max_increase, value);
            increase_note(g->note, sizeof g->note, c, base, delta);
        }
    }
    if (l->require_baseline) {
        cf_history_gate *g = &out[n++];
        memset(g, 0, sizeof *g);
        snprintf(g->name, sizeof g->name, "require_baseline");
        g->limit = 1;
        g->value = have ? 1 : 0;
        g->passed = have;
        if (have)
            snprintf(g->note, sizeof g->note, "baseline: %.400s", base->source);
        else
            snprintf(g->note, sizeof g->note, "no baseline: no earlier recommendation for %.600s, and "
                     "--require-baseline asks for one", base && base->lookup[0] ? base->lookup : "this spec");
    }
    return n;
}

/* ---- the baseline from a recommendation document ---------------------------- */

#define BASELINE_HINT "--compare-to takes a document written by 'cloudfit recommend --format json'"

static const cJSON *field(const cJSON *o, const char *key, int want_string, const char *path, cf_status *st)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (*st != CF_OK)
        return NULL;
    if (!v || (want_string ? !cJSON_IsString(v) : !cJSON_IsNumber(v))) {
        *st = cf_error_set(CF_ERR_INVALID, "%s: chosen.%s: expected a %s", path, key,
                           want_string ? "string" : "number");
        cf_error_hint(BASELINE_HINT);
        return NULL;
    }
    return v;
}

static void copy_string(char *out, size_t n, const cJSON *v)
{
    /* at a character boundary, and a cut says so: the markdown comparison showed "my-private-clou" */
    cf_text_fit_clip(v ? v->valuestring : "", n - 1, out, n);
}

/* An optional number of the chosen configuration (an interval); NaN when absent. */
static double optional_number(const cJSON *chosen, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(chosen, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 ? v->valuedouble : NAN;
}

/* catalog.price_overrides of a recommendation document: absent when the
 * run had none; its file and, since this was stored, its content's hash */
static void overrides_from_doc(const cJSON *doc, cf_baseline *out)
{
    if (!cJSON_IsObject(doc))
        return;
    out->overrides_known = 1;
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "catalog"),
                                                       "price_overrides");
    if (!cJSON_IsObject(ov))
        return;
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(ov, "file");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(ov, "sha256");
    cf_text_fit_clip(cJSON_IsString(file) && file->valuestring[0] ? file->valuestring : "?",
                sizeof out->overrides_file - 1, out->overrides_file, sizeof out->overrides_file);
    if (cJSON_IsString(sha) && strlen(sha->valuestring) == sizeof out->overrides_sha256 - 1 &&
        strspn(sha->valuestring, "0123456789abcdef") == sizeof out->overrides_sha256 - 1)
        snprintf(out->overrides_sha256, sizeof out->overrides_sha256, "%s", sha->valuestring);
}

void cf_baseline_overrides_from_text(const char *text, cf_baseline *out)
{
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    overrides_from_doc(doc, out);
    cJSON_Delete(doc);
}

cf_status cf_baseline_from_text(const char *text, size_t len, const char *path, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    out->hours_p10 = out->hours_p90 = out->total_usd_p10 = out->total_usd_p90 = NAN;
    cJSON *doc = NULL;
    cf_status st = cf_json_read(text, len, path, &doc);
    if (st != CF_OK) {
        cf_error_hint(BASELINE_HINT);
        return st;
    }
    /* A document of another format version (a newer cloudfit's) may mean
     * other things by the same fields: it was taken as a baseline without
     * a word. */
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
    if (version && !(cJSON_IsString(version) && strcmp(version->valuestring, CF_DOCUMENT_VERSION) == 0)) {
        const cJSON *tool = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "tool");
        char got[40], by[80];
        cf_text_fit(cJSON_IsString(version) ? version->valuestring : "(not a string)", 32, got, sizeof got);
        cf_text_fit(cJSON_IsString(tool) ? tool->valuestring : "another cloudfit", 64, by, sizeof by);
        cf_error_set(CF_ERR_INVALID, "%s: version: expected \"%s\" (the recommendation document this cloudfit reads), "
                                     "got \"%s\" (written by %s)", path, CF_DOCUMENT_VERSION, got, by);
        cf_error_hint("compare with the cloudfit that wrote it, or write the baseline again with this one "
                      "('cloudfit recommend --format json')");
        cJSON_Delete(doc);
        return CF_ERR_INVALID;
    }
    const cJSON *chosen = cJSON_GetObjectItemCaseSensitive(doc, "chosen");
    if (!cJSON_IsObject(chosen)) {
        cJSON_Delete(doc);
        cf_error_set(CF_ERR_INVALID, "%s: chosen: expected an object (the chosen configuration)", path);
        cf_error_hint(BASELINE_HINT);
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
    /* Counts are whole numbers from 1 (a plan of 0 VMs, 0 GPUs or batch 0
     * is none) that fit their fields; the rest finite and not negative: a
     * value out of range is named, never cast blindly. */
    static const double max_of[10] = {1024, 1e6, 1e7, 1e6, 1e15, 1e6, 1e9, 1e9, 1e15, 1e9};
    double v[10] = {0};
    for (int i = 0; i < 10; i++) {
        const cJSON *x = field(chosen, nums[i], 0, path, &st);
        v[i] = x ? x->valuedouble : 0;
        int is_count = i < 5;
        /* total_usd (8) has a range of its own, stated below: "from 0" told a cost of -1 that 0 would do */
        if (st == CF_OK && i != 8 &&
            (!(v[i] >= is_count && v[i] <= max_of[i]) || (is_count && v[i] != floor(v[i])))) {
            st = cf_error_set(CF_ERR_INVALID, "%s: chosen.%s: expected %s from %d to %g, got %g", path, nums[i],
                              is_count ? "an integer" : "a number", is_count, max_of[i], v[i]);
            cf_error_hint(BASELINE_HINT);
        }
    }
    if (st == CF_OK && !cf_baseline_cost_usable(v[8])) {
        /* the percentage gate divides by it: a $0 baseline failed it at +inf% while its note said +0.0% */
        st = cf_error_set(CF_ERR_INVALID, "%s: chosen.total_usd: expected a cost above 0 (a chosen plan is never free) "
                                          "and at most 1e15, got %g", path, v[8]);
        cf_error_hint(BASELINE_HINT);
    }
    const cJSON *spot = cJSON_GetObjectItemCaseSensitive(chosen, "spot");
    if (st == CF_OK && !cJSON_IsBool(spot)) {
        st = cf_error_set(CF_ERR_INVALID, "%s: chosen.spot: expected true or false", path);
    }
    /* the spec's hash, when given, is one (the schema's pattern): any
     * string was taken and cut at 12 bytes into the gate's note ("spec:
     * aééééé\xc3… → …"), and one over 64 bytes was dropped without a word */
    const cJSON *spec_hash = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "spec"), "hash");
    if (st == CF_OK && spec_hash &&
        !(cJSON_IsString(spec_hash) && strlen(spec_hash->valuestring) == sizeof out->spec_hash - 1 &&
          strspn(spec_hash->valuestring, "0123456789abcdef") == sizeof out->spec_hash - 1)) {
        char got[40];
        cf_text_clip(cJSON_IsString(spec_hash) ? spec_hash->valuestring : "(not a string)", 32, got, sizeof got);
        char shown[80];
        cf_text_fit(got, sizeof shown - 1, shown, sizeof shown);
        st = cf_error_set(CF_ERR_INVALID, "%s: spec.hash: expected 64 hexadecimal digits (the spec's SHA-256), got '%s'",
                          path, shown);
        cf_error_hint(BASELINE_HINT);
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
        const cJSON *plan = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(chosen, "spot_model"),
                                                             "plan");
        c->mixed = c->spot && cJSON_IsString(plan) && strcmp(plan->valuestring, "mixed") == 0;
        out->hours_p10 = optional_number(chosen, "hours_p10");
        out->hours_p90 = optional_number(chosen, "hours_p90");
        out->total_usd_p10 = optional_number(chosen, "total_usd_p10");
        out->total_usd_p90 = optional_number(chosen, "total_usd_p90");
        if (spec_hash)
            snprintf(out->spec_hash, sizeof out->spec_hash, "%s", spec_hash->valuestring);
        const cJSON *job = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "spec"), "name");
        if (cJSON_IsString(job) && strlen(job->valuestring) < sizeof out->job_name)
            snprintf(out->job_name, sizeof out->job_name, "%s", job->valuestring);
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
        const cJSON *created = cJSON_GetObjectItemCaseSensitive(meta, "created_at");
        if (cJSON_IsString(created))
            cf_text_fit(created->valuestring, sizeof out->created_at - 1, out->created_at, sizeof out->created_at);
        const cJSON *tool = cJSON_GetObjectItemCaseSensitive(meta, "tool"); /* "cloudfit 1.2.0" */
        if (cJSON_IsString(tool) && strncmp(tool->valuestring, "cloudfit ", 9) == 0)
            cf_text_fit(tool->valuestring + 9, sizeof out->tool_version - 1, out->tool_version,
                        sizeof out->tool_version);
        /* named as the current run names its catalog (its snapshot's name
         * and data date): a snapshot's source and fetch time never matched,
         * so "nothing changed" was never said with a price snapshot */
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(doc, "catalog");
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(cat, "snapshot");
        const cJSON *date = cJSON_GetObjectItemCaseSensitive(cat, "data_date");
        if (!cJSON_IsString(src)) /* documents of earlier versions */
            src = cJSON_GetObjectItemCaseSensitive(cat, "source");
        if (!cJSON_IsString(date))
            date = cJSON_GetObjectItemCaseSensitive(cat, "fetched_at");
        /* text from the document and the file name, cut (and escaped) as
         * text that is stored: never half a character */
        char cat_src[52], cat_date[36], name[304];
        cf_text_fit(cJSON_IsString(src) ? src->valuestring : "?", 48, cat_src, sizeof cat_src);
        cf_text_fit(cJSON_IsString(date) ? date->valuestring : "?", 32, cat_date, sizeof cat_date);
        cf_text_fit(path, 300, name, sizeof name);
        snprintf(out->catalog, sizeof out->catalog, "%s %s", cat_src, cat_date);
        snprintf(out->source, sizeof out->source, "%s%s%s", name, out->created_at[0] ? " of " : "", out->created_at);
        overrides_from_doc(doc, out);
        out->have = 1;
    }
    cJSON_Delete(doc);
    return st;
}

void cf_history_config_from(const cf_config *c, int rank, cf_history_config *out)
{
    memset(out, 0, sizeof *out);
    out->rank = rank;
    snprintf(out->cloud, sizeof out->cloud, "%s", c->vm->cloud);
    snprintf(out->region, sizeof out->region, "%s", c->vm->region);
    snprintf(out->instance_type, sizeof out->instance_type, "%s", c->vm->instance_type);
    snprintf(out->gpu, sizeof out->gpu, "%s", c->vm->gpu_model);
    out->gpus_per_node = c->gpus_per_node;
    out->nodes = c->nodes;
    out->local_batch = c->local_batch;
    out->accumulation = c->accumulation;
    out->global_batch = c->global_batch;
    out->lr = c->lr.lr;
    out->spot = c->spot;
    out->mixed = c->spot && c->mixed;
    out->step_time_s = c->step_time_s;
    out->hours = c->hours;
    out->total_usd = c->total_usd;
    out->usd_per_node_hour = c->nodes > 0 ? c->usd_per_hour / c->nodes : 0;
}
