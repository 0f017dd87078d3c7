/* cf_prices_update: run the selected price sources, join their quotes to
 * the base catalog's machine shapes, keep nonsense out, and write the
 * merged catalog (see pricing_update.h for the contract).
 *
 * Validation, per quoted price, against the row it would replace:
 *  - not a positive finite number                    → kept out
 *  - spot not below the (new) on-demand price        → spot kept out (no
 *    discount on offer is not a spot price)
 *  - on-demand for a machine offered as spot only    → kept out
 *  - moved by more than max_change_factor either way → kept out
 * Kept-out prices leave the row as it was and are listed as warnings.
 *
 * Quotes only refresh rows the catalog has: an offer exists only where it
 * can be launched (the availability-joined catalog, docs/catalog.md), and
 * a price sheet that bills a machine in a region does not make it
 * launchable there. Every refreshed price gets its kind (listed, or
 * observed for the AWS spot feed) and the fetch date. A cloud whose fetch
 * yields no usable price fails, so an empty answer never passes for a
 * fresh one. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog_write.h"
#include "cloudfit/pricing/update.h"
#include "price_source.h"
#include "cloudfit/common/number.h"

static const cf_price_source *const SOURCES[] = {&cf_price_source_aws, &cf_price_source_azure, &cf_price_source_gcp,
                                                  &cf_price_source_lambda};
enum { N_SOURCES = sizeof SOURCES / sizeof *SOURCES };

typedef struct {
    cf_vm vm;               /* kinds and dates follow the prices */
    double spot;            /* 0 = none (advisor estimates are not prices) */
    const char *source;     /* of the row and its on-demand price; borrowed from the base catalog or merge_state.pool */
    const char *spot_source; /* of the spot price when not `source`; NULL = the same */
    int touched;
} work_row;

typedef struct {
    work_row *rows;
    size_t n, cap;
    cf_buf warnings;
    size_t n_rejected;
    double factor;
    char **pool;            /* sources written by this update; freed at the end */
    size_t n_pool, cap_pool;
} merge_state;

static double env_number(const char *name, double fallback)
{
    const char *t = getenv(name);
    double v = 0;
    return t && *t && cf_number_double(t, 0, HUGE_VAL, &v) == CF_NUMBER_OK && v > 0 ? v : fallback;
}

static const cf_price_source *find_source(const char *cloud)
{
    for (int i = 0; i < N_SOURCES; i++)
        if (strcasecmp(SOURCES[i]->cloud, cloud) == 0) /* cloud names ignore case, as in every filter */
            return SOURCES[i];
    return NULL;
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Sorted distinct values of a field over one cloud's rows. */
static size_t distinct(const cf_catalog *base, const char *cloud, int want_region, const char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < base->n_vms; i++)
        if (strcmp(base->vms[i].cloud, cloud) == 0)
            out[n++] = want_region ? base->vms[i].region : base->vms[i].instance_type;
    qsort(out, n, sizeof *out, str_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || strcmp(out[kept - 1], out[i]) != 0)
            out[kept++] = out[i];
    return kept;
}

static size_t select_regions(const cf_catalog *base, const char *cloud, const cf_price_update_options *o,
                             const char **scratch, const char **out)
{
    size_t n_base = distinct(base, cloud, 1, scratch);
    if (o->n_regions == 0) {
        memcpy(out, scratch, n_base * sizeof *out);
        return n_base;
    }
    size_t n = 0;
    for (size_t i = 0; i < o->n_regions; i++) {
        const char *r = o->regions[i];
        if (bsearch(&r, scratch, n_base, sizeof *scratch, str_cmp) != NULL)
            out[n++] = r;
    }
    return n;
}

enum { TAKEN_ONDEMAND = 1, TAKEN_SPOT = 2 };

static void reject(merge_state *m, const cf_vm *vm, const char *fmt, ...) CF_PRINTF(3, 4);
static void reject(merge_state *m, const cf_vm *vm, const char *fmt, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    cf_buf_printf(&m->warnings, "%s/%s %s (%d×%s): %s; kept out\n", vm->cloud, vm->region, vm->instance_type,
                  vm->gpu_count, vm->gpu_model, reason);
    m->n_rejected++;
}

static int moved_too_far(double old_price, double new_price, double factor)
{
    return old_price > 0 && (new_price > old_price * factor || new_price < old_price / factor);
}

/* "aws:AWS Price List bulk API fetched 2026-11-18T06:13:20Z", kept for the
 * life of the merge (*out borrows it). */
static cf_status fetched_source(merge_state *m, const char *cloud, const char *label, const char *fetched_at,
                                const char **out)
{
    char text[512];
    snprintf(text, sizeof text, "%s:%s fetched %s", cloud, label, fetched_at);
    for (size_t i = m->n_pool; i-- > 0;)
        if (strcmp(m->pool[i], text) == 0) {
            *out = m->pool[i];
            return CF_OK;
        }
    if (m->n_pool == m->cap_pool) {
        size_t cap = m->cap_pool ? m->cap_pool * 2 : 256;
        char **grown = realloc(m->pool, cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        m->pool = grown;
        m->cap_pool = cap;
    }
    char *copy = strdup(text);
    if (!copy)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    m->pool[m->n_pool++] = copy;
    *out = copy;
    return CF_OK;
}

/* Each price keeps its own provenance: a refreshed price gets the
 * source's label and fetch time, a kept one the source it had (the row's
 * source names the on-demand price, spot_source the spot price when it
 * differs). */
static cf_status set_sources(merge_state *m, work_row *r, const cf_price_source *src, const char *fetched_at,
                             int taken)
{
    const char *old_spot = r->spot_source ? r->spot_source : r->source;
    cf_status st = CF_OK;
    if (taken & TAKEN_ONDEMAND)
        st = fetched_source(m, r->vm.cloud, src->label, fetched_at, &r->source);
    if (st == CF_OK && (taken & TAKEN_SPOT))
        st = fetched_source(m, r->vm.cloud, src->spot_label ? src->spot_label : src->label, fetched_at,
                            &r->spot_source);
    else if (st == CF_OK)
        r->spot_source = old_spot;
    if (r->spot == 0 || (r->spot_source && strcmp(r->spot_source, r->source) == 0))
        r->spot_source = NULL;
    return st;
}

/* Applies one quote to one row; returns 0 when nothing was taken, else
 * TAKEN_ONDEMAND | TAKEN_SPOT for the prices taken. Taken prices get
 * `spot_kind` (spot) or listed (on-demand) and `date` (a quote's own spot
 * date wins: the AWS spot feed's publication date). */
static int apply_quote(merge_state *m, work_row *r, const cf_price_quote *q, const cf_price_source *src,
                       const char *date)
{
    double od = r->vm.price_ondemand_usd_per_hr, spot = r->spot;
    int od_new = 0, spot_new = 0;
    if (q->has_ondemand) {
        double v = q->price_ondemand_usd_per_hr;
        if (!(v > 0) || !isfinite(v))
            reject(m, &r->vm, "on-demand price %g is not a positive price", v);
        else if (od == 0)
            reject(m, &r->vm, "on-demand price %.6g for a machine offered as spot or flex-start only", v);
        else if (moved_too_far(od, v, m->factor))
            reject(m, &r->vm, "on-demand price moved from %.6g to %.6g (more than %g×)", od, v, m->factor);
        else
            od = v, od_new = 1;
    }
    if (q->has_spot) {
        double v = q->price_spot_usd_per_hr;
        if (!(v > 0) || !isfinite(v))
            reject(m, &r->vm, "spot price %g is not a positive price", v);
        else if (od > 0 && v > od)
            reject(m, &r->vm, "spot price %.6g is above the on-demand price %.6g", v, od);
        else if (od > 0 && v == od)
            reject(m, &r->vm, "spot price %.6g equals the on-demand price (no discount is not a spot price)", v);
        else if (moved_too_far(spot, v, m->factor))
            reject(m, &r->vm, "spot price moved from %.6g to %.6g (more than %g×)", spot, v, m->factor);
        else
            spot = v, spot_new = 1;
    }
    if (!od_new && !spot_new)
        return 0;
    cf_price_kind spot_kind = src->spot_kind;
    if (od > 0 && spot >= od) {
        reject(m, &r->vm, "previous spot price %.6g is not below the new on-demand price %.6g", spot, od);
        spot = 0;
    }
    r->vm.price_ondemand_usd_per_hr = od;
    if (od_new) {
        r->vm.ondemand_kind = CF_PRICE_LISTED;
        snprintf(r->vm.ondemand_date, sizeof r->vm.ondemand_date, "%s", date);
    }
    r->spot = spot;
    if (spot_new) {
        r->vm.spot_kind = spot_kind;
        r->vm.spot_regional = src->spot_regional;
        snprintf(r->vm.spot_date, sizeof r->vm.spot_date, "%s", q->spot_date[0] ? q->spot_date : date);
    } else if (spot == 0) {
        r->vm.spot_kind = CF_PRICE_NONE;
        r->vm.spot_date[0] = '\0';
        r->vm.spot_regional = 0;
    }
    r->touched = 1;
    return (od_new ? TAKEN_ONDEMAND : 0) | (spot_new ? TAKEN_SPOT : 0);
}

static cf_status add_row(merge_state *m, const work_row *proto)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        work_row *grown = realloc(m->rows, cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory merging prices");
        m->rows = grown;
        m->cap = cap;
    }
    m->rows[m->n++] = *proto;
    return CF_OK;
}

static cf_status merge_quotes(merge_state *m, const cf_price_source *src, const cf_price_list *quotes,
                              const char *fetched_at, cf_cloud_update *cu, size_t *unmatched)
{
    char date[11];
    snprintf(date, sizeof date, "%.10s", fetched_at);
    for (size_t k = 0; k < quotes->n; k++) {
        const cf_price_quote *q = &quotes->items[k];
        size_t matched = 0;
        for (size_t i = 0; i < m->n; i++) {
            work_row *r = &m->rows[i];
            if (strcmp(r->vm.cloud, q->cloud) != 0 || strcmp(r->vm.region, q->region) != 0 ||
                strcmp(r->vm.instance_type, q->instance_type) != 0)
                continue;
            if (q->gpu_model[0] && (strcmp(r->vm.gpu_model, q->gpu_model) != 0 || r->vm.gpu_count != q->gpu_count))
                continue;
            matched++;
            int taken = apply_quote(m, r, q, src, date);
            if (!taken)
                continue;
            cf_status st = set_sources(m, r, src, fetched_at, taken);
            if (st != CF_OK)
                return st;
            cu->n_rows_updated++;
        }
        *unmatched += matched == 0;
    }
    return CF_OK;
}

static void progress(const cf_price_update_options *o, const char *fmt, ...) CF_PRINTF(2, 3);
static void progress(const cf_price_update_options *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->progress(o->progress_data, line);
}

static cf_status run_source(merge_state *m, const cf_catalog *base, const cf_price_update_options *o,
                            const cf_http_config *http, const cf_price_source *src, cf_cloud_update *cu, cf_buf *notes)
{
    const char **scratch = malloc((base->n_vms + 1) * sizeof *scratch);
    const char **regions = malloc((base->n_vms + o->n_regions + 1) * sizeof *regions);
    const char **types = malloc((base->n_vms + 1) * sizeof *types);
    cf_status st = scratch && regions && types ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n_regions = st == CF_OK ? select_regions(base, src->cloud, o, scratch, regions) : 0;
    size_t n_types = st == CF_OK ? distinct(base, src->cloud, 0, types) : 0;
    const char *base_url = getenv(src->url_env);
    char url[1024];
    snprintf(url, sizeof url, "%s", base_url && *base_url ? base_url : src->default_url);
    size_t len = strlen(url);
    while (len && url[len - 1] == '/')
        url[--len] = '\0';
    cf_price_list quotes = {0};
    if (st == CF_OK && n_regions == 0) {
        cu->outcome = CF_CLOUD_SKIPPED;
        snprintf(cu->message, sizeof cu->message, "%s: none of the selected regions has %s machines in the catalog",
                 src->cloud, src->cloud);
    } else if (st == CF_OK && (st = cf_http_check_url(url)) == CF_OK) {
        cf_fetch_ctx ctx = {.http = http, .base_url = url, .base = base, .cloud = src->cloud, .regions = regions,
                            .n_regions = n_regions, .known_types = types, .n_known_types = n_types,
                            .max_pages = (int)env_number("CLOUDFIT_MAX_PAGES", 1000), .notes = notes,
                            .fetched_at = o->fetched_at ? o->fetched_at : ""};
        char shown[1024];
        cf_http_redact(url, shown, sizeof shown);
        progress(o, "%s: fetching prices for %zu region%s from %s", src->cloud, n_regions, n_regions == 1 ? "" : "s",
                 shown);
        cf_error_clear();
        st = src->fetch(&ctx, &quotes);
        size_t unmatched = 0, rejected_before = m->n_rejected;
        if (st == CF_OK) {
            cu->n_quotes = quotes.n;
            st = merge_quotes(m, src, &quotes, o->fetched_at, cu, &unmatched);
        }
        if (st == CF_OK && cu->n_rows_updated == 0) {
            /* Nothing usable: a failure, never an empty "fresh" snapshot. */
            st = quotes.n == 0
                     ? cf_error_set(CF_ERR_NETWORK, "%s: the update yielded no usable prices (the API answered, but "
                                    "no item passed the filters for the catalog's machines in %zu region%s)",
                                    src->cloud, n_regions, n_regions == 1 ? "" : "s")
                     : cf_error_set(CF_ERR_NETWORK, "%s: the update yielded no usable prices (%zu quoted: %zu kept "
                                    "out by validation, %zu for machines or regions the catalog does not offer)",
                                    src->cloud, quotes.n, m->n_rejected - rejected_before, unmatched);
            cf_error_hint("the previous prices stay in use; check the notes above and the API's answer");
        }
    }
    if (st != CF_OK) {
        cu->status = st;
        cu->outcome = st == CF_ERR_UNAVAILABLE && !o->clouds_explicit ? CF_CLOUD_SKIPPED : CF_CLOUD_FAILED;
        snprintf(cu->message, sizeof cu->message, "%s", cf_error_message());
        snprintf(cu->hint, sizeof cu->hint, "%s", cf_error_hint_text());
    }
    cf_price_list_free(&quotes);
    free(scratch);
    free(regions);
    free(types);
    return st;
}

static cf_status init_rows(merge_state *m, const cf_catalog *base)
{
    for (size_t i = 0; i < base->n_vms; i++) {
        const cf_vm *vm = &base->vms[i];
        work_row r = {.vm = *vm, .spot = vm->spot_price_estimated ? 0 : vm->price_spot_usd_per_hr,
                      .source = cf_vm_price_source(base, vm, 0),
                      .spot_source = vm->has_spot_source ? cf_vm_price_source(base, vm, 1) : NULL,
                      .touched = 0};
        cf_status st = add_row(m, &r);
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

/* Restores rows to the state before a failed cloud (all-or-nothing). */
static void restore_rows(merge_state *m, const work_row *saved, size_t n_saved)
{
    memcpy(m->rows, saved, n_saved * sizeof *saved);
    m->n = n_saved;
}

static cf_status finish(merge_state *m, cf_price_update_result *out)
{
    cf_buf csv = CF_BUF_INIT;
    cf_vms_csv_header(&csv);
    for (size_t i = 0; i < m->n; i++) {
        const work_row *r = &m->rows[i];
        cf_vms_csv_row(&csv, &r->vm, r->spot, r->source, r->spot_source);
        if (!r->touched)
            continue;
        cf_price_quote q;
        memset(&q, 0, sizeof q);
        snprintf(q.cloud, sizeof q.cloud, "%s", r->vm.cloud);
        snprintf(q.region, sizeof q.region, "%s", r->vm.region);
        snprintf(q.instance_type, sizeof q.instance_type, "%s", r->vm.instance_type);
        snprintf(q.gpu_model, sizeof q.gpu_model, "%s", r->vm.gpu_model);
        q.gpu_count = r->vm.gpu_count;
        q.has_ondemand = r->vm.price_ondemand_usd_per_hr > 0;
        q.price_ondemand_usd_per_hr = r->vm.price_ondemand_usd_per_hr;
        q.has_spot = r->spot > 0;
        q.price_spot_usd_per_hr = r->spot;
        if (cf_price_list_add(&out->refreshed, &q) != CF_OK)
            break;
    }
    if (cf_buf_failed(&csv) || cf_buf_failed(&m->warnings)) {
        cf_buf_free(&csv);
        return cf_error_set(CF_ERR_NOMEM, "out of memory writing the merged catalog");
    }
    /* Load what would be stored: a merge that does not load is never saved. */
    cf_catalog check;
    cf_status st = cf_catalog_load_with_vms(csv.data, csv.len, "price update", &check);
    if (st != CF_OK) {
        cf_buf_free(&csv);
        return st;
    }
    out->n_rows = check.n_vms;
    cf_catalog_free(&check);
    out->vms_csv = csv.data;
    out->vms_csv_len = csv.len;
    return CF_OK;
}

cf_status cf_prices_update_check_clouds(const char *const *clouds, size_t n_clouds)
{
    for (size_t i = 0; i < n_clouds; i++) {
        if (find_source(clouds[i]))
            continue;
        cf_error_set(CF_ERR_USAGE, "cannot update prices of cloud '%s'", clouds[i]);
        cf_error_hint("prices update fetches the prices of aws, azure, gcp and lambda (names in any case)");
        return CF_ERR_USAGE;
    }
    return CF_OK;
}

cf_status cf_prices_update(const cf_catalog *base, const cf_price_update_options *o, cf_price_update_result *out)
{
    memset(out, 0, sizeof *out);
    cf_status st = cf_prices_update_check_clouds(o->clouds, o->n_clouds);
    if (st != CF_OK)
        return st;
    cf_http_config http;
    cf_http_config_from_env(&http);
    http.progress = o->progress;
    http.progress_data = o->progress_data;
    http.transfer = o->transfer;
    http.transfer_data = o->transfer_data;
    merge_state m = {.factor = o->max_change_factor > 1 ? o->max_change_factor : 3.0};
    cf_buf notes = CF_BUF_INIT;
    if ((st = init_rows(&m, base)) != CF_OK)
        goto done;
    cf_status first_failure = CF_OK;
    char first_message[1024] = "", first_hint[256] = "";
    int any_updated = 0;
    for (int s = 0; s < N_SOURCES; s++) {
        const cf_price_source *src = SOURCES[s];
        int wanted = o->n_clouds == 0;
        for (size_t i = 0; i < o->n_clouds; i++)
            wanted |= strcasecmp(o->clouds[i], src->cloud) == 0;
        if (!wanted)
            continue;
        cf_cloud_update *cu = &out->clouds[out->n_clouds++];
        snprintf(cu->cloud, sizeof cu->cloud, "%s", src->cloud);
        work_row *saved = malloc((m.n + 1) * sizeof *saved);
        if (!saved) {
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
            goto done;
        }
        memcpy(saved, m.rows, m.n * sizeof *saved);
        size_t n_saved = m.n, rejected_before = m.n_rejected, warn_len = m.warnings.len;
        cf_status cst = run_source(&m, base, o, &http, src, cu, &notes);
        if (cst != CF_OK || cu->outcome != CF_CLOUD_UPDATED) {
            /* All-or-nothing per cloud: undo whatever it merged. */
            restore_rows(&m, saved, n_saved);
            m.n_rejected = rejected_before;
            m.warnings.len = warn_len;
            if (m.warnings.data)
                m.warnings.data[warn_len] = '\0';
            cu->n_rows_updated = 0;
        }
        free(saved);
        if (cst == CF_OK && cu->outcome == CF_CLOUD_UPDATED) {
            any_updated = 1;
            progress(o, "%s: %zu prices, %zu rows refreshed", src->cloud, cu->n_quotes, cu->n_rows_updated);
        } else if (cu->outcome == CF_CLOUD_FAILED && first_failure == CF_OK) {
            first_failure = cst;
            snprintf(first_message, sizeof first_message, "%s", cu->message);
            snprintf(first_hint, sizeof first_hint, "%s", cu->hint);
        }
    }
    if (!any_updated) {
        st = first_failure != CF_OK ? first_failure : CF_ERR_UNAVAILABLE;
        if (first_failure != CF_OK) {
            cf_error_set(st, "%s", first_message);
            if (first_hint[0])
                cf_error_hint("%s", first_hint);
        } else {
            cf_error_set(st, "no cloud could be updated: %s", out->n_clouds ? out->clouds[0].message : "none selected");
            if (out->n_clouds && out->clouds[0].hint[0])
                cf_error_hint("%s", out->clouds[0].hint);
        }
        goto done;
    }
    st = finish(&m, out);
done:
    cf_buf_puts(&m.warnings, "");
    cf_buf_puts(&notes, "");
    if (!cf_buf_failed(&m.warnings) && !cf_buf_failed(&notes)) {
        cf_buf_puts(&m.warnings, cf_buf_cstr(&notes));
        out->warnings = m.warnings.data;
        m.warnings.data = NULL;
    }
    out->n_rejected = m.n_rejected;
    cf_buf_free(&m.warnings);
    cf_buf_free(&notes);
    for (size_t i = 0; i < m.n_pool; i++)
        free(m.pool[i]);
    free(m.pool);
    free(m.rows);
    return st;
}

void cf_price_update_result_free(cf_price_update_result *r)
{
    free(r->warnings);
    free(r->vms_csv);
    cf_price_list_free(&r->refreshed);
    memset(r, 0, sizeof *r);
}
