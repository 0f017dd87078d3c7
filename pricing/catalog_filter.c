/* Row filtering and filter validation over a loaded catalog.
 *
 * cf_catalog_filter_rows is the hot path of the search (called once per
 * recommendation, linear in the rows). cf_catalog_check_filter runs once on
 * user input and explains a bad value: the known names, and a "did you mean"
 * for near misses, so a typo in search.gpus does not silently match nothing. */
#include "cloudfit/pricing.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/pricing/regions.h"

/* The clouds cloudfit knows how to price (docs/catalog.md). */
static const char *const SUPPORTED_CLOUDS[] = {"aws", "gcp", "azure", "lambda"};

/* How many names a hint lists before it says "... (N in all)". */
enum { HINT_MAX_REGIONS = 8, MAX_SUGGESTIONS = 3, NAME_MAX_CHARS = 64 };

/* How many of a filter's GPU words are looked up once per call rather
 * than once per row (a spec has at most 32). */
enum { GPU_MODELS_CACHED = 64 };

/* ---- matching ------------------------------------------------------------ */

static int in_list(const char *value, const char *const *list, size_t n, int ignore_case)
{
    for (size_t i = 0; i < n; i++) {
        if (ignore_case ? strcasecmp(value, list[i]) == 0 : strcmp(value, list[i]) == 0)
            return 1;
    }
    return 0;
}

/* An empty list allows everything. */
static int cloud_selected(const cf_catalog_filter *filter, const char *cloud)
{
    return filter->n_clouds == 0 || in_list(cloud, filter->clouds, filter->n_clouds, 1);
}

/* The filter's GPU words as the models they stand for
 * (cf_catalog_gpu_filter_model: "Tesla T4" is T4), the first
 * GPU_MODELS_CACHED of them. */
typedef struct {
    const cf_catalog *catalog;
    const cf_catalog_filter *filter;
    const char *models[GPU_MODELS_CACHED];
} gpu_models;

static void gpu_models_init(gpu_models *m, const cf_catalog *catalog, const cf_catalog_filter *filter)
{
    m->catalog = catalog;
    m->filter = filter;
    for (size_t i = 0; i < filter->n_gpus && i < GPU_MODELS_CACHED; i++)
        m->models[i] = cf_catalog_gpu_filter_model(catalog, filter->gpus[i]);
}

static int gpu_selected(const gpu_models *m, const char *gpu_model)
{
    for (size_t i = 0; i < m->filter->n_gpus; i++) {
        const char *model =
            i < GPU_MODELS_CACHED ? m->models[i] : cf_catalog_gpu_filter_model(m->catalog, m->filter->gpus[i]);
        if (strcasecmp(gpu_model, model) == 0)
            return 1;
    }
    return 0;
}

/* The lists the row does not pass, as bits 1 << CF_FILTER_*, without the
 * region restriction. */
static unsigned row_misses(const cf_vm *vm, const cf_catalog_filter *filter, const gpu_models *gpus)
{
    unsigned misses = 0;
    if (!cloud_selected(filter, vm->cloud))
        misses |= 1u << CF_FILTER_CLOUDS;
    if (filter->n_regions && !in_list(vm->region, filter->regions, filter->n_regions, 0))
        misses |= 1u << CF_FILTER_REGIONS;
    if (filter->n_gpus && !gpu_selected(gpus, vm->gpu_model))
        misses |= 1u << CF_FILTER_GPUS;
    if (filter->spot == CF_SPOT_ONLY && vm->price_spot_usd_per_hr == 0.0)
        misses |= 1u << CF_FILTER_SPOT;
    /* Spot / flex-start only machines have no on-demand price. */
    if (filter->spot == CF_SPOT_NEVER && vm->price_ondemand_usd_per_hr == 0.0)
        misses |= 1u << CF_FILTER_SPOT;
    return misses;
}

/* Without the region restriction: 1 = passes. */
static int row_passes_but_restriction(const cf_vm *vm, const cf_catalog_filter *filter, const gpu_models *gpus)
{
    return row_misses(vm, filter, gpus) == 0;
}

unsigned cf_catalog_filter_misses(const cf_catalog *catalog, const cf_catalog_filter *filter, const cf_vm *vm)
{
    gpu_models gpus;
    gpu_models_init(&gpus, catalog, filter);
    return row_misses(vm, filter, &gpus);
}

/* A region that needs an access request is left out unless asked for:
 * by the filter's flag, or by naming the region. */
static int restricted_out(const cf_vm *vm, const cf_catalog_filter *filter)
{
    return !filter->include_restricted && cf_region_restriction(vm->cloud, vm->region) &&
           !(filter->n_regions && in_list(vm->region, filter->regions, filter->n_regions, 0));
}

size_t cf_catalog_filter_rows(const cf_catalog *catalog, const cf_catalog_filter *filter,
                              const cf_vm **out)
{
    gpu_models gpus;
    if (filter)
        gpu_models_init(&gpus, catalog, filter);
    size_t n = 0;
    for (size_t i = 0; i < catalog->n_vms; i++) {
        const cf_vm *vm = &catalog->vms[i];
        if (!filter || (row_passes_but_restriction(vm, filter, &gpus) && !restricted_out(vm, filter))) {
            if (out)
                out[n] = vm;
            n++;
        }
    }
    return n;
}

size_t cf_catalog_filter_restricted(const cf_catalog *catalog, const cf_catalog_filter *filter)
{
    if (!filter)
        return 0;
    gpu_models gpus;
    gpu_models_init(&gpus, catalog, filter);
    size_t n = 0;
    for (size_t i = 0; i < catalog->n_vms; i++)
        n += row_passes_but_restriction(&catalog->vms[i], filter, &gpus) && restricted_out(&catalog->vms[i], filter);
    return n;
}

/* ---- distinct, sorted name lists ----------------------------------------- */

typedef struct {
    const char **names;   /* point into catalog rows; not owned */
    size_t n;
} name_list;

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef const char *(*row_field)(const cf_vm *vm);
static const char *field_cloud(const cf_vm *vm) { return vm->cloud; }
static const char *field_region(const cf_vm *vm) { return vm->region; }
static const char *field_gpu(const cf_vm *vm) { return vm->gpu_model; }

/* Distinct values of `field` over the rows whose cloud passes `filter`
 * (NULL = all rows), sorted with strcmp. */
static cf_status collect_names(const cf_catalog *catalog, const cf_catalog_filter *filter,
                               row_field field, name_list *out)
{
    out->n = 0;
    out->names = malloc((catalog->n_vms ? catalog->n_vms : 1) * sizeof *out->names);
    if (!out->names)
        return cf_error_set(CF_ERR_NOMEM, "out of memory checking the catalog filter");
    for (size_t i = 0; i < catalog->n_vms; i++) {
        if (!filter || cloud_selected(filter, catalog->vms[i].cloud))
            out->names[out->n++] = field(&catalog->vms[i]);
    }
    qsort(out->names, out->n, sizeof *out->names, name_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (kept == 0 || strcmp(out->names[kept - 1], out->names[i]) != 0)
            out->names[kept++] = out->names[i];
    }
    out->n = kept;
    return CF_OK;
}

static void append_names(cf_buf *buf, const name_list *list, size_t max_shown)
{
    size_t shown = list->n < max_shown ? list->n : max_shown;
    for (size_t i = 0; i < shown; i++)
        cf_buf_printf(buf, "%s%s", i ? ", " : "", list->names[i]);
    if (shown < list->n)
        cf_buf_printf(buf, ", ... (%zu in all)", list->n);
}

/* ---- near misses --------------------------------------------------------- */

/* Canonical spelling for comparisons: lower case, '_' and ' ' read as '-',
 * no leading, trailing or repeated '-'; so "h100 nvl" equals "H100-NVL".
 * Returns 0 when the name is too long to compare. */
static int canonical(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = name; *p; p++) {
        char c = (*p == '_' || *p == ' ') ? '-' : (char)tolower((unsigned char)*p);
        if (c == '-' && (n == 0 || out[n - 1] == '-'))
            continue;
        if (n + 1 >= cap)
            return 0;
        out[n++] = c;
    }
    if (n > 0 && out[n - 1] == '-')
        n--;
    out[n] = '\0';
    return 1;
}

/* Levenshtein distance of two short strings (each < NAME_MAX_CHARS). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t prev[NAME_MAX_CHARS + 1], cur[NAME_MAX_CHARS + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t substitute = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t remove = prev[j] + 1, insert = cur[j - 1] + 1;
            size_t best = substitute < remove ? substitute : remove;
            cur[j] = best < insert ? best : insert;
        }
        memcpy(prev, cur, (lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

/* Known names that extend `want` by whole '-'-separated parts: "a100" →
 * A100-40GB, A100-80GB, A100-80GB-PCIE (but "a100-80g" extends nothing). */
static size_t suggest_extensions(const char *want, const name_list *known, const char **out)
{
    char have[NAME_MAX_CHARS];
    size_t want_len = strlen(want), n = 0;
    for (size_t i = 0; i < known->n && n < MAX_SUGGESTIONS; i++) {
        if (canonical(known->names[i], have, sizeof have) && strncmp(have, want, want_len) == 0 &&
            have[want_len] == '-')
            out[n++] = known->names[i];
    }
    return n;
}

/* Known names at the smallest edit distance from `want`, if that distance
 * is small: 1 for short names (where 2 edits make anything look alike),
 * 2 otherwise. */
static size_t suggest_close(const char *want, const name_list *known, const char **out)
{
    char have[NAME_MAX_CHARS];
    size_t limit = strlen(want) <= 4 ? 1 : 2, n = 0;
    for (size_t d = 0; d <= limit && n == 0; d++) {
        for (size_t i = 0; i < known->n && n < MAX_SUGGESTIONS; i++) {
            if (canonical(known->names[i], have, sizeof have) && edit_distance(want, have) == d)
                out[n++] = known->names[i];
        }
    }
    return n;
}

/* Up to MAX_SUGGESTIONS known names that `value` probably meant. */
static size_t suggest(const char *value, const name_list *known, const char **out)
{
    char want[NAME_MAX_CHARS];
    if (!canonical(value, want, sizeof want) || !*want)
        return 0;
    size_t n = strlen(want) >= 2 ? suggest_extensions(want, known, out) : 0;
    return n ? n : suggest_close(want, known, out);
}

/* "did you mean 'a'? " / "'a' or 'b'" / "'a', 'b' or 'c'"; nothing if none. */
static void append_did_you_mean(cf_buf *buf, const char *const *names, size_t n)
{
    if (n == 0)
        return;
    cf_buf_puts(buf, "did you mean ");
    for (size_t i = 0; i < n; i++)
        cf_buf_printf(buf, "%s'%s'", i == 0 ? "" : (i + 1 == n ? " or " : ", "), names[i]);
    cf_buf_puts(buf, "? ");
}

static void append_suggestions(cf_buf *buf, const char *value, const name_list *known)
{
    const char *close[MAX_SUGGESTIONS];
    append_did_you_mean(buf, close, suggest(value, known, close));
}

/* The "did you mean" of an unknown GPU. The rows on offer of the families
 * the name's words name (cf_gpu_near_rows: "NVIDIA A100"'s, the A100 PCIe
 * first for "A100 PCIe") come before names merely spelt alike: of those,
 * only ones of such a family ("A100-8GB": A100-80GB), a GPU of another
 * family ("A100 PCIe": H100-PCIE) never; names spelt alike when the name
 * names no family. */
static void append_gpu_suggestions(cf_buf *buf, const cf_catalog *catalog, const char *value,
                                   const name_list *known)
{
    enum { MAX_NEAR = 16 };
    const cf_gpu *rows[MAX_NEAR];
    size_t n_rows = cf_gpu_near_rows(catalog->gpus, catalog->n_gpus, value, rows, MAX_NEAR), n_near = 0;
    const char *near[MAX_NEAR];
    for (size_t i = 0; i < n_rows; i++)
        if (cf_catalog_sells_gpu(catalog, rows[i]->model))
            near[n_near++] = rows[i]->model;
    const char *close[MAX_SUGGESTIONS], *pick[MAX_SUGGESTIONS];
    size_t n_close = suggest(value, known, close), n = 0;
    for (size_t i = 0; i < n_close; i++)
        for (size_t j = 0; j < n_near; j++)
            if (strcasecmp(close[i], near[j]) == 0) {
                pick[n++] = close[i];
                break;
            }
    if (n_near == 0)
        append_did_you_mean(buf, close, n_close);
    else if (n > 0)
        append_did_you_mean(buf, pick, n);
    else
        append_did_you_mean(buf, near, n_near < MAX_SUGGESTIONS ? n_near : MAX_SUGGESTIONS);
}

/* Sets the hint from a finished buffer (an allocation failure just loses it). */
static void set_hint(cf_buf *buf)
{
    if (!cf_buf_failed(buf) && buf->len)
        cf_error_hint("%s", cf_buf_cstr(buf));
    cf_buf_free(buf);
}

/* ---- checks -------------------------------------------------------------- */

static cf_status check_clouds(const cf_catalog *catalog, const cf_catalog_filter *filter)
{
    for (size_t i = 0; i < filter->n_clouds; i++) {
        const char *cloud = filter->clouds[i];
        int present = 0;
        for (size_t r = 0; r < catalog->n_vms && !present; r++)
            present = strcasecmp(catalog->vms[r].cloud, cloud) == 0;
        if (present)
            continue;
        name_list known;
        if (collect_names(catalog, NULL, field_cloud, &known) != CF_OK)
            return CF_ERR_NOMEM;
        size_t n_supported = sizeof SUPPORTED_CLOUDS / sizeof *SUPPORTED_CLOUDS;
        if (in_list(cloud, SUPPORTED_CLOUDS, n_supported, 1))
            cf_error_set(CF_ERR_INVALID, "catalog '%s' has no rows for cloud '%s'", catalog->name,
                         cloud);
        else
            cf_error_set(CF_ERR_INVALID, "unknown cloud '%s'", cloud);
        cf_buf hint = CF_BUF_INIT;
        append_suggestions(&hint, cloud, &known);
        cf_buf_puts(&hint, "known clouds: ");
        append_names(&hint, &known, known.n);
        set_hint(&hint);
        free(known.names);
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

static cf_status check_gpus(const cf_catalog *catalog, const cf_catalog_filter *filter)
{
    for (size_t i = 0; i < filter->n_gpus; i++) {
        const char *gpu = filter->gpus[i];
        /* a model, or the name a tool prints for one ("Tesla T4") */
        if (cf_catalog_sells_gpu(catalog, cf_catalog_gpu_filter_model(catalog, gpu)))
            continue;
        name_list known;
        if (collect_names(catalog, NULL, field_gpu, &known) != CF_OK)
            return CF_ERR_NOMEM;
        /* In the GPU table but on no VM: a real GPU nobody rents here. */
        if (cf_catalog_gpu(catalog, cf_catalog_gpu_filter_model(catalog, gpu)))
            cf_error_set(CF_ERR_INVALID, "no VM in catalog '%s' has GPU '%s'", catalog->name, gpu);
        else
            cf_error_set(CF_ERR_INVALID, "unknown GPU '%s'", gpu);
        cf_buf hint = CF_BUF_INIT;
        append_gpu_suggestions(&hint, catalog, gpu, &known);
        cf_buf_puts(&hint, "known GPUs: ");
        append_names(&hint, &known, known.n);
        set_hint(&hint);
        free(known.names);
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

/* "aws", "aws, gcp", or "all clouds" for messages. */
static void append_cloud_label(cf_buf *buf, const cf_catalog_filter *filter)
{
    if (filter->n_clouds == 0) {
        cf_buf_puts(buf, "all clouds");
        return;
    }
    for (size_t i = 0; i < filter->n_clouds; i++)
        cf_buf_printf(buf, "%s%s", i ? ", " : "", filter->clouds[i]);
}

static cf_status region_error(const cf_catalog *catalog, const cf_catalog_filter *filter,
                               const char *region)
{
    int elsewhere = 0;
    for (size_t r = 0; r < catalog->n_vms && !elsewhere; r++)
        elsewhere = strcmp(catalog->vms[r].region, region) == 0;
    cf_buf label = CF_BUF_INIT;
    append_cloud_label(&label, filter);
    const char *clouds = cf_buf_failed(&label) ? "the selected clouds" : cf_buf_cstr(&label);
    if (elsewhere)
        cf_error_set(CF_ERR_INVALID, "region '%s' has no rows for the selected clouds (%s)",
                     region, clouds);
    else
        cf_error_set(CF_ERR_INVALID, "unknown region '%s'", region);

    name_list known;
    if (collect_names(catalog, filter, field_region, &known) != CF_OK) {
        cf_buf_free(&label);
        return CF_ERR_NOMEM;
    }
    cf_buf hint = CF_BUF_INIT;
    append_suggestions(&hint, region, &known);
    cf_buf_printf(&hint, "regions of %s in this catalog: ", clouds);
    append_names(&hint, &known, HINT_MAX_REGIONS);
    set_hint(&hint);
    free(known.names);
    cf_buf_free(&label);
    return CF_ERR_INVALID;
}

/* Regions are checked against the rows of the selected clouds: a region
 * where none of them can launch a GPU machine must say so rather than
 * return no rows. */
static cf_status check_regions(const cf_catalog *catalog, const cf_catalog_filter *filter)
{
    for (size_t i = 0; i < filter->n_regions; i++) {
        const char *region = filter->regions[i];
        int present = 0;
        for (size_t r = 0; r < catalog->n_vms && !present; r++) {
            const cf_vm *vm = &catalog->vms[r];
            present = strcmp(vm->region, region) == 0 && cloud_selected(filter, vm->cloud);
        }
        if (!present)
            return region_error(catalog, filter, region);
    }
    return CF_OK;
}

cf_status cf_catalog_check_filter_field(const cf_catalog *catalog, const cf_catalog_filter *filter,
                                        cf_filter_field *failed)
{
    *failed = CF_FILTER_OK;
    if (!filter)
        return CF_OK;
    if ((unsigned)filter->spot > (unsigned)CF_SPOT_ONLY) {
        *failed = CF_FILTER_SPOT;
        return cf_error_set(CF_ERR_INVALID, "invalid spot policy %d", (int)filter->spot);
    }
    /* Clouds first: the region check depends on the selected clouds. */
    cf_status status = check_clouds(catalog, filter);
    if (status != CF_OK)
        *failed = CF_FILTER_CLOUDS;
    else if ((status = check_gpus(catalog, filter)) != CF_OK)
        *failed = CF_FILTER_GPUS;
    else if ((status = check_regions(catalog, filter)) != CF_OK)
        *failed = CF_FILTER_REGIONS;
    return status;
}

static void append_list(cf_buf *buf, const char *what, const char *const *items, size_t n)
{
    cf_buf_printf(buf, "%s%s ", buf->len ? "; " : "", what);
    for (size_t i = 0; i < n; i++) {
        char shown[NAME_MAX_CHARS + 8];
        cf_text_fit(items[i], NAME_MAX_CHARS, shown, sizeof shown);
        cf_buf_printf(buf, "%s%s", i ? ", " : "", shown);
    }
}

cf_status cf_catalog_explain_empty(const cf_catalog *catalog, const cf_catalog_filter *filter)
{
    return cf_catalog_explain_empty_as(catalog, filter, "spot only (--spot allow)");
}

cf_status cf_catalog_explain_empty_as(const cf_catalog *catalog, const cf_catalog_filter *filter,
                                      const char *spot_label)
{
    cf_buf given = CF_BUF_INIT, hint = CF_BUF_INIT;
    if (filter->n_clouds)
        append_list(&given, "clouds", filter->clouds, filter->n_clouds);
    if (filter->n_regions)
        append_list(&given, "regions", filter->regions, filter->n_regions);
    if (filter->n_gpus)
        append_list(&given, "GPUs", filter->gpus, filter->n_gpus);
    if (filter->spot == CF_SPOT_ONLY)
        cf_buf_printf(&given, "%sspot only", given.len ? "; " : "");
    cf_error_set(CF_ERR_INFEASIBLE, "no offer of catalog '%s' passes the filters together (%s)", catalog->name,
                 cf_buf_failed(&given) ? "out of memory" : cf_buf_cstr(&given));
    /* what each filter alone takes away: the offers left without it */
    struct {
        int given;
        const char *label;
        cf_catalog_filter relaxed;
    } drop[] = {{filter->n_clouds > 0, "the cloud filter", *filter},
                {filter->n_regions > 0, "the region filter", *filter},
                {filter->n_gpus > 0, "the GPU filter", *filter},
                {filter->spot == CF_SPOT_ONLY, spot_label, *filter},
                {!filter->include_restricted, "regions that need an access request (--include-restricted-regions)",
                 *filter}};
    drop[0].relaxed.n_clouds = 0;
    drop[1].relaxed.n_regions = 0;
    drop[2].relaxed.n_gpus = 0;
    drop[3].relaxed.spot = CF_SPOT_ALLOW;
    drop[4].relaxed.include_restricted = 1;
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) {
        size_t n = drop[i].given ? cf_catalog_filter_rows(catalog, &drop[i].relaxed, NULL) : 0;
        if (n > 0)
            cf_buf_printf(&hint, "%s%zu offer%s %s %s", hint.len ? "; " : "", n, n == 1 ? "" : "s",
                          i == 4 ? "in" : "without", drop[i].label);
    }
    if (hint.len == 0)
        cf_buf_puts(&hint, "no single filter dropped leaves an offer: widen several (cloudfit prices lists what each "
                           "cloud and GPU offers)");
    else
        cf_buf_puts(&hint, " (cloudfit prices lists what each cloud and GPU offers)");
    set_hint(&hint);
    cf_buf_free(&given);
    return CF_ERR_INFEASIBLE;
}

cf_status cf_catalog_check_filter(const cf_catalog *catalog, const cf_catalog_filter *filter)
{
    cf_filter_field failed;
    return cf_catalog_check_filter_field(catalog, filter, &failed);
}

void cf_catalog_filter_from(const cf_constraints *c, cf_spot_policy spot, cf_catalog_filter_storage *out)
{
    for (int i = 0; i < c->n_clouds; i++)
        out->clouds[i] = c->clouds[i];
    for (int i = 0; i < c->n_regions; i++)
        out->regions[i] = c->regions[i];
    for (int i = 0; i < c->n_gpus; i++)
        out->gpus[i] = c->gpus[i];
    out->filter = (cf_catalog_filter){out->clouds, (size_t)c->n_clouds, out->regions, (size_t)c->n_regions,
                                      out->gpus, (size_t)c->n_gpus, spot, 0};
}
