/* How the outputs describe the catalog a command used (the library chose
 * it: pricing/source.h): the "catalog" object of a JSON document and the
 * explanation lines of a table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/render/render_catalog.h"

#include "cloudfit/common/clock.h"

/* The rules that changed the prices the chosen plan pays: *spot_rule its
 * spot price (a spot or mixed plan), *ondemand_rule its on-demand price (a
 * plan on demand, or a mixed plan's fallback); 0 = the catalog's price, or
 * a price the plan does not pay. A rule that matched the VM is not the
 * rule of a price it left alone (cf_price_overrides_apply_rules). */
static void chosen_rules(const cf_catalog_source *s, const cf_vm *chosen, int spot, int mixed, int *ondemand_rule,
                         int *spot_rule)
{
    *ondemand_rule = *spot_rule = 0;
    if (!chosen)
        return;
    if (spot)
        *spot_rule = cf_catalog_source_price_rule_of(s, chosen, 1);
    if (!spot || mixed)
        *ondemand_rule = cf_catalog_source_price_rule_of(s, chosen, 0);
}

static void add_rule(cJSON *o, const char *key, int rule)
{
    if (rule)
        cJSON_AddNumberToObject(o, key, rule);
    else
        cJSON_AddNullToObject(o, key);
}

cJSON *cf_catalog_source_json(const cf_catalog_source *s, const cf_catalog *catalog, double age_days,
                              const cf_vm *chosen, int spot, int mixed)
{
    cJSON *cat = cJSON_CreateObject();
    /* Without a source (callers that load a catalog themselves), describe
     * the catalog by its name and newest data date. */
    cJSON_AddStringToObject(cat, "source", s ? s->source : catalog->name);
    cJSON_AddStringToObject(cat, "snapshot", s ? s->snapshot : catalog->name);
    cJSON_AddStringToObject(cat, "fetched_at", s ? s->fetched_at : catalog->data_date);
    cJSON_AddStringToObject(cat, "data_date", catalog->data_date);
    cJSON_AddStringToObject(cat, "oldest_data", catalog->oldest_date);
    cJSON_AddNumberToObject(cat, "age_days", floor(age_days));
    if (!s)
        return cat;
    if (s->refreshed[0]) {
        cJSON_AddStringToObject(cat, "refreshed_clouds", s->refreshed);
        cJSON_AddStringToObject(cat, "base", s->base);
    }
    cJSON_AddNumberToObject(cat, "max_age_days", s->max_age_days);
    cJSON_AddBoolToObject(cat, "too_old", s->too_old);
    /* age_days is that of the oldest dated price the result depends on */
    const cf_prices_in_use *u = &s->in_use;
    cJSON *use = cJSON_AddObjectToObject(cat, "prices_in_use");
    cJSON_AddNumberToObject(use, "offers", (double)u->n_offers);
    cJSON_AddNumberToObject(use, "prices", (double)u->n_prices);
    if (u->oldest_date[0]) {
        cJSON_AddStringToObject(use, "oldest_date", u->oldest_date);
        cJSON_AddStringToObject(use, "newest_date", u->newest_date);
    } else {
        cJSON_AddNullToObject(use, "oldest_date");
        cJSON_AddNullToObject(use, "newest_date");
    }
    cJSON_AddNumberToObject(use, "undated", (double)u->n_undated);
    cJSON_AddNumberToObject(use, "restricted_left_out", (double)u->n_restricted_left_out);
    cJSON *clouds = cJSON_AddArrayToObject(use, "clouds");
    for (size_t i = 0; i < u->n_clouds; i++) {
        const cf_cloud_price_age *c = &u->clouds[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "cloud", c->cloud);
        cJSON_AddNumberToObject(o, "offers", (double)c->n_offers);
        cJSON_AddNumberToObject(o, "stale_offers", (double)c->n_stale_offers);
        if (c->oldest_date[0])
            cJSON_AddStringToObject(o, "oldest_stale_date", c->oldest_date);
        cJSON_AddNumberToObject(o, "undated", (double)c->n_undated);
        cJSON_AddItemToArray(clouds, o);
    }
    if (s->overrides.n) {
        cJSON *ov = cJSON_AddObjectToObject(cat, "price_overrides");
        cJSON_AddStringToObject(ov, "file", s->overrides.path);
        cJSON_AddStringToObject(ov, "sha256", s->overrides.sha256); /* what a CI gate compares (docs/ci.md) */
        cJSON_AddNumberToObject(ov, "rows_changed", (double)s->n_rows_overridden);
        cJSON *rules = cJSON_AddArrayToObject(ov, "rules");
        for (size_t i = 0; i < s->overrides.n; i++) {
            const cf_price_override *r = &s->overrides.items[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "rule", (double)(i + 1));
            cJSON_AddStringToObject(o, "key", r->key_path);
            cJSON_AddStringToObject(o, "kind", r->kind == CF_OVERRIDE_DISCOUNT ? "discount" : "instance");
            if (r->kind == CF_OVERRIDE_DISCOUNT) {
                cJSON_AddNumberToObject(o, "percent", r->percent);
                cJSON_AddNumberToObject(o, "spot_prices_left_out", (double)r->spot_left_out);
            }
            if (r->price_ondemand_usd_per_hr > 0)
                cJSON_AddNumberToObject(o, "price_ondemand_usd_per_hr", r->price_ondemand_usd_per_hr);
            if (r->price_spot_usd_per_hr > 0)
                cJSON_AddNumberToObject(o, "price_spot_usd_per_hr", r->price_spot_usd_per_hr);
            cJSON_AddStringToObject(o, "note", r->note);
            cJSON_AddNumberToObject(o, "rows_matched", (double)r->rows_matched);
            cJSON_AddItemToArray(rules, o);
        }
        int ondemand_rule, spot_rule;
        chosen_rules(s, chosen, spot, spot && mixed, &ondemand_rule, &spot_rule);
        add_rule(ov, "chosen_price_rule", spot ? spot_rule : ondemand_rule);
        if (spot && mixed)
            add_rule(ov, "chosen_fallback_price_rule", ondemand_rule);
    }
    return cat;
}

void cf_vm_price_age_text(const cf_vm *vm, int spot, char *out, size_t cap)
{
    cf_price_kind kind = spot ? vm->spot_kind : vm->ondemand_kind;
    const char *date = spot ? vm->spot_date : vm->ondemand_date;
    if (!date[0] || (kind != CF_PRICE_LISTED && kind != CF_PRICE_OBSERVED)) {
        if (cap)
            out[0] = '\0';
        return;
    }
    double days = floor(cf_days_since(date));
    snprintf(out, cap, " (%.0f day%s old)", days, days == 1 ? "" : "s");
}

void cf_catalog_source_too_old_text(const cf_catalog_source *s, cf_buf *out)
{
    if (!s || !s->too_old)
        return;
    char stale[512];
    cf_catalog_source_stale(s, stale, sizeof stale);
    cf_buf_printf(out, "prices in use are up to %.0f days old (limit %g): %s; run 'cloudfit prices update'",
                  floor(s->age_days), s->max_age_days, stale);
}

static void rule_text(const cf_catalog_source *s, int rule, cf_buf *out)
{
    const cf_price_override *r = &s->overrides.items[rule - 1];
    cf_buf_printf(out, "override %s%s%s%s", r->key_path, r->note[0] ? " (" : "", r->note, r->note[0] ? ")" : "");
}

void cf_catalog_source_overrides_text(const cf_catalog_source *s, const cf_vm *chosen, int spot, int mixed,
                                      cf_buf *out)
{
    if (!s || !s->overrides.n)
        return;
    cf_buf_printf(out, "price overrides from %s: %zu rule%s changed %zu catalog row%s\n", s->overrides.path,
                  s->overrides.n, s->overrides.n == 1 ? "" : "s", s->n_rows_overridden,
                  s->n_rows_overridden == 1 ? "" : "s");
    int od, sp;
    mixed = spot && mixed;
    chosen_rules(s, chosen, spot, mixed, &od, &sp);
    if ((size_t)od > s->overrides.n || (size_t)sp > s->overrides.n || od < 0 || sp < 0 || (!od && !sp))
        return;
    static const char fallback[] = "on-demand price (the mixed plan's fallback)";
    if (!mixed) {
        cf_buf_printf(out, "the chosen VM's %s price comes from ", spot ? "spot" : "on-demand");
        rule_text(s, spot ? sp : od, out);
    } else if (sp) {
        cf_buf_puts(out, "the chosen VM's spot price comes from ");
        rule_text(s, sp, out);
        cf_buf_printf(out, "; its %s ", fallback);
        if (od) {
            cf_buf_puts(out, "from ");
            rule_text(s, od, out);
        } else {
            cf_buf_puts(out, "is the catalog's");
        }
    } else {
        cf_buf_printf(out, "the chosen VM's %s comes from ", fallback);
        rule_text(s, od, out);
        cf_buf_puts(out, "; its spot price is the catalog's");
    }
    cf_buf_puts(out, "\n");
}

void cf_catalog_source_restricted_text(const cf_catalog_source *s, cf_buf *out)
{
    if (s && s->in_use.n_restricted_left_out)
        cf_buf_printf(out, "%zu offer%s in regions that need an access request left out "
                           "(--include-restricted-regions offers them)",
                      s->in_use.n_restricted_left_out, s->in_use.n_restricted_left_out == 1 ? "" : "s");
}

void cf_catalog_source_explain(const cf_catalog_source *s, const cf_catalog *catalog, double age_days,
                               const cf_vm *chosen, int spot, int mixed, cf_buf *out)
{
    char line[512];
    if (s)
        cf_catalog_source_describe(s, line, sizeof line);
    else
        snprintf(line, sizeof line, "%s, data of %s (oldest %s), %.0f days old", catalog->name, catalog->data_date,
                 catalog->oldest_date, floor(age_days));
    cf_buf_printf(out, "  - catalog: %s\n", line);
    if (s && s->in_use.n_restricted_left_out) {
        cf_buf_puts(out, "  - ");
        cf_catalog_source_restricted_text(s, out);
        cf_buf_puts(out, "\n");
    }
    if (s && s->too_old) {
        cf_buf_puts(out, "  note: ");
        cf_catalog_source_too_old_text(s, out);
        cf_buf_puts(out, "\n");
    }
    cf_buf lines = CF_BUF_INIT;
    cf_catalog_source_overrides_text(s, chosen, spot, mixed, &lines);
    for (const char *p = cf_buf_cstr(&lines); *p;) {
        size_t len = strcspn(p, "\n");
        cf_buf_puts(out, "  - ");
        cf_buf_append(out, p, len);
        cf_buf_puts(out, "\n");
        p += len + (p[len] == '\n');
    }
    if (lines.failed)
        out->failed = 1;
    cf_buf_free(&lines);
}
