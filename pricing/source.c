#include "cloudfit/pricing/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/buf.h"
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
    out->override_price_rule = calloc(2 * out->catalog.n_vms + 1, sizeof *out->override_price_rule);
    if (!out->override_rule || !out->override_price_rule)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = cf_price_overrides_load(path, &out->overrides);
    if (st == CF_OK)
        st = cf_price_overrides_apply_rules(&out->overrides, &out->catalog, out->override_rule,
                                            out->override_price_rule);
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
    out->max_age_days = max_age_days > 0 ? max_age_days : CF_DEFAULT_MAX_CATALOG_AGE_DAYS;
    const cf_vm **all = malloc((out->catalog.n_vms ? out->catalog.n_vms : 1) * sizeof *all);
    if (!all) {
        cf_catalog_source_close(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < out->catalog.n_vms; i++)
        all[i] = &out->catalog.vms[i];
    if (overrides_path && (st = apply_overrides(overrides_path, out)) != CF_OK) {
        free(all);
        cf_catalog_source_close(out);
        return st;
    }
    cf_catalog_source_set_in_use(out, all, out->catalog.n_vms, CF_SPOT_ALLOW, 0);
    free(all);
    return st;
}

static cf_cloud_price_age *cloud_age(cf_prices_in_use *u, const char *cloud)
{
    for (size_t i = 0; i < u->n_clouds; i++)
        if (strcmp(u->clouds[i].cloud, cloud) == 0)
            return &u->clouds[i];
    if (u->n_clouds == CF_PRICE_AGE_MAX_CLOUDS)
        return NULL;
    cf_cloud_price_age *c = &u->clouds[u->n_clouds++];
    memset(c, 0, sizeof *c);
    snprintf(c->cloud, sizeof c->cloud, "%s", cloud);
    return c;
}

static void older(char *oldest, const char *date)
{
    if (!*oldest || strcmp(date, oldest) < 0)
        snprintf(oldest, 11, "%s", date);
}

static int by_oldest(const void *a, const void *b)
{
    const cf_cloud_price_age *x = a, *y = b;
    if (!*x->oldest_date || !*y->oldest_date)
        return (*x->oldest_date == 0) - (*y->oldest_date == 0);
    int c = strcmp(x->oldest_date, y->oldest_date);
    return c ? c : strcmp(x->cloud, y->cloud);
}

/* Whether a price of `date` is older than the limit; a catalog holds a
 * handful of distinct dates, so the answers are remembered. */
typedef struct {
    char date[8][11];
    int stale[8];
    size_t n;
} stale_memo;

static int is_stale(stale_memo *m, const char *date, double max_age_days)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->date[i], date) == 0)
            return m->stale[i];
    int stale = floor(cf_days_since(date)) > max_age_days; /* whole days, as the age is told */
    if (m->n < sizeof m->stale / sizeof *m->stale) {
        snprintf(m->date[m->n], sizeof m->date[m->n], "%s", date);
        m->stale[m->n++] = stale;
    }
    return stale;
}

void cf_catalog_source_set_in_use(cf_catalog_source *s, const cf_vm *const *rows, size_t n, cf_spot_policy spot,
                                  size_t n_restricted_left_out)
{
    cf_prices_in_use *u = &s->in_use;
    stale_memo memo = {.n = 0};
    memset(u, 0, sizeof *u);
    u->n_restricted_left_out = n_restricted_left_out;
    for (size_t i = 0; i < n; i++) {
        const cf_vm *vm = rows[i];
        cf_cloud_price_age *c = cloud_age(u, vm->cloud);
        /* An estimated spot price is on-demand × a savings average: its
         * date is the on-demand price's. */
        int use_od = vm->price_ondemand_usd_per_hr > 0 && (spot != CF_SPOT_ONLY || vm->spot_price_estimated);
        int use_spot = vm->price_spot_usd_per_hr > 0 && !vm->spot_price_estimated && spot != CF_SPOT_NEVER;
        const char *dates[2] = {use_od ? vm->ondemand_date : NULL, use_spot ? vm->spot_date : NULL};
        const cf_price_kind kinds[2] = {vm->ondemand_kind, vm->spot_kind};
        int stale = 0;
        u->n_offers++;
        if (c)
            c->n_offers++;
        for (int k = 0; k < 2; k++) {
            if (!dates[k])
                continue;
            u->n_prices++;
            if (kinds[k] == CF_PRICE_GIVEN) /* the overrides' price is the user's: no date, no age */
                continue;
            if (!dates[k][0]) {
                u->n_undated++;
                if (c)
                    c->n_undated++;
                continue;
            }
            older(u->oldest_date, dates[k]);
            if (strcmp(dates[k], u->newest_date) > 0)
                snprintf(u->newest_date, sizeof u->newest_date, "%s", dates[k]);
            if (is_stale(&memo, dates[k], s->max_age_days)) {
                stale = 1;
                if (c)
                    older(c->oldest_date, dates[k]);
            }
        }
        if (c && stale)
            c->n_stale_offers++;
    }
    qsort(u->clouds, u->n_clouds, sizeof *u->clouds, by_oldest);
    s->age_days = u->oldest_date[0] ? cf_days_since(u->oldest_date) : 0;
    /* A price's date is a day: its age is the whole days since, as every
     * output says it; at the limit it is not over it, whatever the hour. */
    s->too_old = floor(s->age_days) > s->max_age_days;
}

void cf_catalog_source_describe(const cf_catalog_source *s, char *out, size_t n)
{
    const cf_prices_in_use *u = &s->in_use;
    double days = floor(s->age_days);
    char prices[160];
    if (u->oldest_date[0])
        snprintf(prices, sizeof prices, "prices in use of %s%s%s, the oldest %.0f day%s old", u->oldest_date,
                 strcmp(u->oldest_date, u->newest_date) ? " to " : "",
                 strcmp(u->oldest_date, u->newest_date) ? u->newest_date : "", days, days == 1 ? "" : "s");
    else
        snprintf(prices, sizeof prices, "no price in use records its date");
    char undated[48] = ""; /* prices whose source records no date (docs/catalog.md) */
    if (u->n_undated)
        snprintf(undated, sizeof undated, "; %zu undated", u->n_undated);
    char dropped[64] = ""; /* offers of an older snapshot that cannot be launched where offered */
    if (s->catalog.n_not_launchable)
        snprintf(dropped, sizeof dropped, "; %zu rows not launchable left out", s->catalog.n_not_launchable);
    if (strcmp(s->source, "snapshot") == 0)
        snprintf(out, n, "%s fetched %s (refreshed %s, other rows from %s); %s%s%s", s->snapshot, s->fetched_at,
                 s->refreshed, s->base, prices, undated, dropped);
    else
        snprintf(out, n, "embedded; %s%s%s", prices, undated, dropped);
}

void cf_catalog_source_stale(const cf_catalog_source *s, char *out, size_t n)
{
    cf_buf text = CF_BUF_INIT, undated = CF_BUF_INIT;
    for (size_t i = 0; i < s->in_use.n_clouds; i++) {
        const cf_cloud_price_age *c = &s->in_use.clouds[i];
        if (c->n_stale_offers)
            cf_buf_printf(&text, "%s%s %zu offer%s (prices of %s)", text.len ? ", " : "", c->cloud, c->n_stale_offers,
                          c->n_stale_offers == 1 ? "" : "s", c->oldest_date);
        if (c->n_undated)
            cf_buf_printf(&undated, "%s%s %zu price%s undated", undated.len ? ", " : "", c->cloud, c->n_undated,
                          c->n_undated == 1 ? "" : "s");
    }
    snprintf(out, n, "%s%s%s", cf_buf_cstr(&text), text.len && undated.len ? "; " : "", cf_buf_cstr(&undated));
    cf_buf_free(&text);
    cf_buf_free(&undated);
}

void cf_catalog_source_close(cf_catalog_source *s)
{
    cf_catalog_free(&s->catalog);
    cf_price_overrides_free(&s->overrides);
    free(s->override_rule);
    s->override_rule = NULL;
    free(s->override_price_rule);
    s->override_price_rule = NULL;
}

int cf_catalog_source_rule_of(const cf_catalog_source *s, const cf_vm *vm)
{
    if (!s || !s->override_rule || vm < s->catalog.vms || vm >= s->catalog.vms + s->catalog.n_vms)
        return 0;
    return s->override_rule[vm - s->catalog.vms];
}

int cf_catalog_source_price_rule_of(const cf_catalog_source *s, const cf_vm *vm, int spot)
{
    if (!s || !s->override_price_rule || vm < s->catalog.vms || vm >= s->catalog.vms + s->catalog.n_vms)
        return 0;
    return s->override_price_rule[2 * (vm - s->catalog.vms) + (spot ? 1 : 0)];
}

