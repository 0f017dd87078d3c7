#include "cloudfit/pricing/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/pricing/update.h"

static cf_status from_snapshot(const cf_snapshot_text *snap, cf_catalog_source *out)
{
    cf_status st = cf_catalog_load_with_vms(snap->vms_csv, snap->vms_csv_len, snap->where, &out->catalog);
    if (st != CF_OK) {
        cf_error_hint("the stored snapshot does not load; run 'cloudfit prices update' or use another --db");
        return st;
    }
    snprintf(out->catalog.name, sizeof out->catalog.name, "%s", snap->name);
    snprintf(out->source, sizeof out->source, "snapshot");
    snprintf(out->snapshot, sizeof out->snapshot, "%s", snap->name);
    snprintf(out->fetched_at, sizeof out->fetched_at, "%s", snap->fetched_at);
    snprintf(out->refreshed, sizeof out->refreshed, "%s", snap->sources ? snap->sources : "");
    snprintf(out->base, sizeof out->base, "%s", snap->base ? snap->base : "");
    return CF_OK;
}

static cf_status apply_overrides(const char *path, cf_catalog_source *out)
{
    out->override_rule = calloc(out->catalog.n_vms + 1, sizeof *out->override_rule);
    if (!out->override_rule)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = cf_price_overrides_load(path, &out->overrides);
    if (st == CF_OK)
        st = cf_price_overrides_apply(&out->overrides, &out->catalog, out->override_rule);
    for (size_t i = 0; st == CF_OK && i < out->catalog.n_vms; i++)
        out->n_rows_overridden += out->override_rule[i] != 0;
    return st;
}

cf_status cf_catalog_source_open(const cf_snapshot_text *snapshot, double max_age_days, const char *overrides_path,
                                 cf_catalog_source *out)
{
    memset(out, 0, sizeof *out);
    cf_status st;
    if (snapshot) {
        st = from_snapshot(snapshot, out);
    } else if ((st = cf_catalog_load_embedded(&out->catalog)) == CF_OK) {
        snprintf(out->source, sizeof out->source, "embedded");
        snprintf(out->snapshot, sizeof out->snapshot, "embedded");
        snprintf(out->fetched_at, sizeof out->fetched_at, "%s", out->catalog.data_date);
    }
    if (st != CF_OK)
        return st;
    out->age_days = cf_days_since(out->fetched_at);
    out->max_age_days = max_age_days > 0 ? max_age_days : CF_DEFAULT_MAX_CATALOG_AGE_DAYS;
    out->too_old = out->age_days > out->max_age_days;
    if (overrides_path && (st = apply_overrides(overrides_path, out)) != CF_OK)
        cf_catalog_source_close(out);
    return st;
}

void cf_catalog_source_describe(const cf_catalog_source *s, char *out, size_t n)
{
    double days = floor(s->age_days);
    char undated[48] = ""; /* prices whose source records no date (docs/catalog.md) */
    if (s->catalog.n_undated_prices)
        snprintf(undated, sizeof undated, "; %zu prices undated", s->catalog.n_undated_prices);
    char dropped[64] = ""; /* offers of an older snapshot that cannot be launched where offered */
    if (s->catalog.n_not_launchable)
        snprintf(dropped, sizeof dropped, "; %zu rows not launchable left out", s->catalog.n_not_launchable);
    if (strcmp(s->source, "snapshot") == 0)
        snprintf(out, n, "%s fetched %s (%.0f day%s old; refreshed %s, other rows from %s%s%s)", s->snapshot,
                 s->fetched_at, days, days == 1 ? "" : "s", s->refreshed, s->base, undated, dropped);
    else
        snprintf(out, n, "embedded, data of %s (oldest %s%s), %.0f day%s old", s->catalog.data_date,
                 s->catalog.oldest_date, undated, days, days == 1 ? "" : "s");
}

void cf_catalog_source_close(cf_catalog_source *s)
{
    cf_catalog_free(&s->catalog);
    cf_price_overrides_free(&s->overrides);
    free(s->override_rule);
    s->override_rule = NULL;
}

int cf_catalog_source_rule_of(const cf_catalog_source *s, const cf_vm *vm)
{
    if (!s || !s->override_rule || vm < s->catalog.vms || vm >= s->catalog.vms + s->catalog.n_vms)
        return 0;
    return s->override_rule[vm - s->catalog.vms];
}

