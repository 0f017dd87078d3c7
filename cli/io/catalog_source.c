#include "io/catalog_source.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/clock.h"
#include "exit_codes.h"
#include "log.h"
#include "cloudfit/db/snapshots.h"
#include "commands.h"
#include "io/db_open.h"

/* The newest good snapshot when the database exists; *found = 0 otherwise. */
static cf_status load_snapshot(const cf_cli_options *o, cf_snapshot *snap, char *where, size_t n, int *found)
{
    *found = 0;
    char path[1024];
    cf_status st = cf_cli_db_path(o, path, sizeof path);
    if (st != CF_OK)
        return o->db_path ? st : CF_OK; /* no HOME: nothing stored, use the embedded catalog */
    if (access(path, F_OK) != 0)
        return CF_OK;
    cf_db *db = NULL;
    if ((st = cf_db_open_readonly(path, &db)) != CF_OK)
        return st;
    st = cf_snapshot_latest(db, snap, found);
    cf_db_close(db);
    if (st == CF_OK && *found)
        snprintf(where, n, "%s:%s", path, snap->name);
    return st;
}

int cf_cli_catalog_open(const cf_cli_options *o, int with_overrides, cf_catalog_source *out)
{
    memset(out, 0, sizeof *out);
    int found = 0;
    cf_snapshot snap;
    char where[1100] = "";
    if (load_snapshot(o, &snap, where, sizeof where, &found) != CF_OK)
        return cf_report_error();
    cf_snapshot_text text = {.vms_csv = found ? snap.vms_csv : NULL, .vms_csv_len = found ? snap.vms_csv_len : 0,
                             .where = where, .name = found ? snap.name : "", .fetched_at = found ? snap.fetched_at : "",
                             .sources = found ? snap.sources : "", .base = found ? snap.base : ""};
    cf_status st = cf_catalog_source_open(found ? &text : NULL, o->max_catalog_age_days,
                                          with_overrides ? o->price_overrides : NULL, out);
    if (found)
        cf_snapshot_free(&snap);
    if (st != CF_OK)
        return cf_report_error();
    for (size_t i = 0; i < out->overrides.n; i++)
        if (out->overrides.items[i].rows_matched == 0)
            cf_log_warning("%s: %s matches no catalog row; it changes nothing", out->overrides.path,
                           out->overrides.items[i].key_path);
    return 0;
}

void cf_cli_catalog_warn(const cf_catalog_source *s)
{
    if (!s->too_old)
        return;
    cf_log_warning("the price catalog (%s) is %.0f days old, more than %g days", s->snapshot, floor(s->age_days),
                   s->max_age_days);
    cf_log_hint("run 'cloudfit prices update' to fetch current prices (or raise --max-catalog-age-days)");
}

cJSON *cf_catalog_source_json(const cf_catalog_source *s, const cf_catalog *catalog, double age_days,
                              const cf_vm *chosen)
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
    if (s->overrides.n) {
        cJSON *ov = cJSON_AddObjectToObject(cat, "price_overrides");
        cJSON_AddStringToObject(ov, "file", s->overrides.path);
        cJSON_AddNumberToObject(ov, "rows_changed", (double)s->n_rows_overridden);
        cJSON *rules = cJSON_AddArrayToObject(ov, "rules");
        for (size_t i = 0; i < s->overrides.n; i++) {
            const cf_price_override *r = &s->overrides.items[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "rule", (double)(i + 1));
            cJSON_AddStringToObject(o, "key", r->key_path);
            cJSON_AddStringToObject(o, "kind", r->kind == CF_OVERRIDE_DISCOUNT ? "discount" : "instance");
            if (r->kind == CF_OVERRIDE_DISCOUNT)
                cJSON_AddNumberToObject(o, "percent", r->percent);
            if (r->price_ondemand_usd_per_hr > 0)
                cJSON_AddNumberToObject(o, "price_ondemand_usd_per_hr", r->price_ondemand_usd_per_hr);
            if (r->price_spot_usd_per_hr > 0)
                cJSON_AddNumberToObject(o, "price_spot_usd_per_hr", r->price_spot_usd_per_hr);
            cJSON_AddStringToObject(o, "note", r->note);
            cJSON_AddNumberToObject(o, "rows_matched", (double)r->rows_matched);
            cJSON_AddItemToArray(rules, o);
        }
        int rule = cf_catalog_source_rule_of(s, chosen);
        if (rule)
            cJSON_AddNumberToObject(ov, "chosen_price_rule", rule);
        else
            cJSON_AddNullToObject(ov, "chosen_price_rule");
    }
    return cat;
}

void cf_catalog_source_explain(const cf_catalog_source *s, const cf_catalog *catalog, double age_days,
                               const cf_vm *chosen, cf_buf *out)
{
    char line[512];
    if (s)
        cf_catalog_source_describe(s, line, sizeof line);
    else
        snprintf(line, sizeof line, "%s, data of %s (oldest %s), %.0f days old", catalog->name, catalog->data_date,
                 catalog->oldest_date, floor(age_days));
    cf_buf_printf(out, "  - catalog: %s\n", line);
    if (s && s->too_old)
        cf_buf_printf(out, "  note: prices are %.0f days old (limit %g); run 'cloudfit prices update'\n",
                      floor(s->age_days), s->max_age_days);
    if (!s || !s->overrides.n)
        return;
    cf_buf_printf(out, "  - price overrides from %s: %zu rule%s changed %zu catalog row%s\n", s->overrides.path,
                  s->overrides.n, s->overrides.n == 1 ? "" : "s", s->n_rows_overridden,
                  s->n_rows_overridden == 1 ? "" : "s");
    int rule = cf_catalog_source_rule_of(s, chosen);
    if (rule > 0 && (size_t)rule <= s->overrides.n) {
        const cf_price_override *r = &s->overrides.items[rule - 1];
        cf_buf_printf(out, "  - the chosen VM's price comes from override %s%s%s%s\n", r->key_path,
                      r->note[0] ? " (" : "", r->note, r->note[0] ? ")" : "");
    }
}

/* One option's values checked alone: "option '--gpu': unknown GPU model ..." (exit 2). */
static int check_option(const cf_catalog *catalog, const cf_catalog_filter *f, const char *option)
{
    if (cf_catalog_check_filter(catalog, f) == CF_OK)
        return 0;
    cf_log_error("option '--%s': %s", option, cf_error_message());
    if (cf_error_hint_text()[0])
        cf_log_hint("%s", cf_error_hint_text());
    cf_error_clear();
    return CF_EXIT_USAGE;
}

int cf_cli_check_search_options(const cf_cli_options *o, const cf_catalog *catalog)
{
    cf_catalog_filter clouds = {.clouds = o->clouds.items, .n_clouds = (size_t)o->clouds.n, .spot = CF_SPOT_ALLOW};
    cf_catalog_filter gpus = {.gpus = o->gpus.items, .n_gpus = (size_t)o->gpus.n, .spot = CF_SPOT_ALLOW};
    cf_catalog_filter regions = clouds;
    regions.regions = o->regions.items;
    regions.n_regions = (size_t)o->regions.n;
    int rc = o->clouds.n ? check_option(catalog, &clouds, "cloud") : 0;
    if (rc == 0 && o->gpus.n)
        rc = check_option(catalog, &gpus, "gpu");
    if (rc == 0 && o->regions.n)
        rc = check_option(catalog, &regions, "region");
    return rc;
}
