/* cloudfit prices [GPU[:N]] [--cloud C] [--region R] [--spot] [--format table|json|csv]
 * cloudfit prices update [--cloud aws|azure|gcp]... [--region R]... [--db PATH]
 *
 * Without a GPU: a summary per GPU model and cloud (counts per VM, cheapest
 * $/GPU-hour on-demand and spot), like `sky show-gpus`. With GPU[:N]: every
 * offer of that GPU (and count). Both read the catalog in use (newest price
 * snapshot, else embedded). `update` fetches live prices (docs/pricing.md). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/catalog_source.h"
#include "cloudfit/advisor.h"
#include "cloudfit/common/clock.h"
#include "cloudfit/common/buf.h"
#include "exit_codes.h"
#include "log.h"
#include "cloudfit/pricing/update.h"
#include "cloudfit/db/snapshots.h"
#include "commands.h"
#include "io/db_open.h"

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV } out_format;

static const char *const CLOUD_ORDER[] = {"aws", "azure", "gcp", "lambda"};
enum { N_CLOUDS = 4 };

static int parse_format(const cf_cli_options *o, out_format *out)
{
    *out = FMT_TABLE;
    if (!o->format || strcmp(o->format, "table") == 0)
        return 0;
    if (strcmp(o->format, "json") == 0)
        *out = FMT_JSON;
    else if (strcmp(o->format, "csv") == 0)
        *out = FMT_CSV;
    else {
        cf_log_error("option '--format' does not accept '%s'", o->format);
        cf_log_hint("use one of: table, json, csv");
        return CF_EXIT_USAGE;
    }
    return 0;
}

/* ---- the catalog rows a view shows ---------------------------------------- */

typedef struct {
    const cf_vm **rows;
    size_t n;
} row_set;

/* A GPU name that is not a model in the GPU table may name a family:
 * "A100" means A100-40GB, A100-80GB and A100-80GB-PCIE. */
static size_t gpu_names(const cf_catalog *cat, const char *gpu, const char **out, size_t cap)
{
    if (!gpu)
        return 0;
    if (cf_catalog_gpu(cat, gpu)) {
        out[0] = gpu;
        return 1;
    }
    size_t n = 0, len = strlen(gpu);
    for (size_t i = 0; i < cat->n_gpus && n < cap; i++)
        if (strncasecmp(cat->gpus[i].model, gpu, len) == 0 && cat->gpus[i].model[len] == '-')
            out[n++] = cat->gpus[i].model;
    if (n == 0)
        out[n++] = gpu; /* unknown: cf_catalog_check_filter explains */
    return n;
}

static int select_rows(const cf_catalog_source *src, const cf_cli_options *o, const char *gpu, int spot_only,
                       row_set *out)
{
    const char *gpus[64];
    size_t n_gpus = gpu_names(&src->catalog, gpu, gpus, sizeof gpus / sizeof *gpus);
    cf_catalog_filter f = {o->clouds.items, (size_t)o->clouds.n, o->regions.items, (size_t)o->regions.n,
                           gpus, n_gpus, spot_only ? CF_SPOT_ONLY : CF_SPOT_ALLOW};
    if (cf_catalog_check_filter(&src->catalog, &f) != CF_OK)
        return cf_report_error();
    out->rows = malloc((src->catalog.n_vms + 1) * sizeof *out->rows);
    if (!out->rows) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    out->n = cf_catalog_filter_rows(&src->catalog, &f, out->rows);
    return 0;
}

static void out_text(const cf_buf *b)
{
    fwrite(b->data ? b->data : "", 1, b->len, stdout);
    fflush(stdout);
}

static void fmt_price(char *out, size_t n, double v) { v > 0 ? snprintf(out, n, "%.4g", v) : snprintf(out, n, "-"); }

/* "observed", "estimated 2025-06-28", "listed 2026-07-30", "-": the kind
 * and date of a spot price, short enough for a table cell. */
static void spot_kind_cell(const cf_vm *vm, char *out, size_t n)
{
    if (vm->spot_kind == CF_PRICE_NONE)
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%s%s%s", cf_price_kind_name(vm->spot_kind), vm->spot_date[0] ? " " : " (undated)",
                 vm->spot_date);
}

/* "12.5%/mo advisor", "15%/mo default", "-" (no spot price). */
static void interruptions_cell(const cf_catalog *cat, const cf_vm *vm, char *out, size_t n)
{
    char origin[128];
    cf_vm_interruptions_origin(cat, vm, origin, sizeof origin);
    if (vm->spot_kind == CF_PRICE_NONE)
        snprintf(out, n, "-");
    else if (origin[0])
        snprintf(out, n, "%g%%/mo advisor", vm->interruptions_pct_per_month);
    else
        snprintf(out, n, "%g%%/mo default", CF_DEFAULT_SPOT_INTERRUPTIONS_PCT_PER_MONTH);
}

/* Where each price of an offer comes from, for the JSON views. */
static void add_price_provenance(cJSON *e, const cf_catalog *cat, const cf_vm *vm)
{
    char text[192];
    cJSON_AddStringToObject(e, "zones", vm->zones);
    const cf_price_kind kinds[2] = {vm->ondemand_kind, vm->spot_kind};
    const char *dates[2] = {vm->ondemand_date, vm->spot_date};
    static const char *const names[2][3] = {{"ondemand_kind", "ondemand_date", "ondemand_origin"},
                                            {"spot_kind", "spot_date", "spot_origin"}};
    for (int k = 0; k < 2; k++) {
        if (kinds[k] == CF_PRICE_NONE) {
            cJSON_AddNullToObject(e, names[k][0]);
            cJSON_AddNullToObject(e, names[k][1]);
        } else {
            cJSON_AddStringToObject(e, names[k][0], cf_price_kind_name(kinds[k]));
            if (dates[k][0])
                cJSON_AddStringToObject(e, names[k][1], dates[k]);
            else
                cJSON_AddNullToObject(e, names[k][1]);
        }
        cf_vm_price_origin(vm, k, text, sizeof text);
        cJSON_AddStringToObject(e, names[k][2], text);
    }
    cf_vm_interruptions_origin(cat, vm, text, sizeof text);
    if (vm->spot_kind == CF_PRICE_NONE) {
        cJSON_AddNullToObject(e, "interruptions_pct_per_month");
        cJSON_AddNullToObject(e, "interruptions_source");
    } else if (text[0]) {
        cJSON_AddNumberToObject(e, "interruptions_pct_per_month", vm->interruptions_pct_per_month);
        cJSON_AddStringToObject(e, "interruptions_source", text);
    } else {
        cJSON_AddNumberToObject(e, "interruptions_pct_per_month", CF_DEFAULT_SPOT_INTERRUPTIONS_PCT_PER_MONTH);
        cJSON_AddStringToObject(e, "interruptions_source", "default (no interruption data for this offer)");
    }
}

/* Table mark of a spot price that is not a listed price. */
static const char *kind_mark(cf_price_kind kind)
{
    return kind == CF_PRICE_ESTIMATED ? " (est.)" : kind == CF_PRICE_OBSERVED ? " (obs.)" : "";
}

static const char SPOT_LEGEND[] =
    "spot prices: (obs.) = observed AWS spot price, the lowest over the region's zones; (est.) = AWS on-demand × "
    "(1 − Spot Instance Advisor average savings), an estimate; unmarked = the cloud's listed spot price\n";

/* Pads a table of cells (rows × cols) to column widths and prints it. */
static void print_table(cf_buf *b, char (*cells)[12][128], size_t n_rows, size_t n_cols, const int *right)
{
    int width[12] = {0};
    for (size_t r = 0; r < n_rows; r++)
        for (size_t c = 0; c < n_cols; c++)
            if (cf_utf8_width(cells[r][c]) > width[c])
                width[c] = cf_utf8_width(cells[r][c]);
    for (size_t r = 0; r < n_rows; r++) {
        for (size_t c = 0; c < n_cols; c++) {
            cf_buf_pad(b, cells[r][c], c + 1 < n_cols ? width[c] : 0, right[c]);
            cf_buf_puts(b, c + 1 < n_cols ? "  " : "\n");
        }
    }
}

/* ---- summary: GPU × cloud ------------------------------------------------- */

typedef struct {
    const char *gpu;
    int cloud;                  /* index into CLOUD_ORDER */
    unsigned counts_mask;       /* bit k = k GPUs per VM (k < 32) */
    int counts_other;           /* a count >= 32 seen */
    double best_od, best_spot;  /* $/GPU-hr; 0 = none */
    const cf_vm *best_od_vm, *best_spot_vm;
} gpu_cloud;

static int cloud_index(const char *cloud)
{
    for (int i = 0; i < N_CLOUDS; i++)
        if (strcmp(CLOUD_ORDER[i], cloud) == 0)
            return i;
    return N_CLOUDS - 1;
}

static int gc_cmp(const void *a, const void *b)
{
    const gpu_cloud *x = a, *y = b;
    int c = strcasecmp(x->gpu, y->gpu);
    return c ? c : x->cloud - y->cloud;
}

static void counts_text(const gpu_cloud *g, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (int k = 1; k < 32 && o + 4 < n; k++)
        if (g->counts_mask & (1u << k))
            o += (size_t)snprintf(out + o, n - o, "%s%d", o ? ", " : "", k);
    if (g->counts_other && o + 6 < n)
        snprintf(out + o, n - o, "%s32+", o ? ", " : "");
}

static size_t summarize(const row_set *rs, gpu_cloud *out)
{
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const cf_vm *vm = rs->rows[i];
        int ci = cloud_index(vm->cloud);
        gpu_cloud *g = NULL;
        for (size_t k = 0; k < n && !g; k++)
            if (out[k].cloud == ci && strcmp(out[k].gpu, vm->gpu_model) == 0)
                g = &out[k];
        if (!g) {
            g = &out[n++];
            memset(g, 0, sizeof *g);
            g->gpu = vm->gpu_model;
            g->cloud = ci;
        }
        if (vm->gpu_count < 32)
            g->counts_mask |= 1u << vm->gpu_count;
        else
            g->counts_other = 1;
        double od = vm->price_ondemand_usd_per_hr / vm->gpu_count;
        double spot = vm->price_spot_usd_per_hr / vm->gpu_count;
        if (od > 0 && (!g->best_od_vm || od < g->best_od)) {
            g->best_od = od;
            g->best_od_vm = vm;
        }
        if (spot > 0 && (!g->best_spot_vm || spot < g->best_spot)) {
            g->best_spot = spot;
            g->best_spot_vm = vm;
        }
    }
    qsort(out, n, sizeof *out, gc_cmp);
    return n;
}

static int show_summary(const cf_catalog_source *src, const cf_cli_options *o, out_format fmt)
{
    row_set rs = {0};
    int rc = select_rows(src, o, NULL, o->spot_only, &rs);
    if (rc)
        return rc;
    gpu_cloud *g = malloc((rs.n + 1) * sizeof *g);
    if (!g) {
        free(rs.rows);
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    size_t n = summarize(&rs, g);
    cf_buf b = CF_BUF_INIT;
    char counts[64], od[32], spot[32];
    if (fmt == FMT_JSON) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddItemToObject(doc, "catalog", cf_catalog_source_json(src, &src->catalog, src->age_days, NULL));
        cJSON *arr = cJSON_AddArrayToObject(doc, "gpus");
        for (size_t i = 0; i < n; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "gpu", g[i].gpu);
            cJSON_AddStringToObject(e, "cloud", CLOUD_ORDER[g[i].cloud]);
            cJSON *c = cJSON_AddArrayToObject(e, "gpu_counts");
            for (int k = 1; k < 32; k++)
                if (g[i].counts_mask & (1u << k))
                    cJSON_AddItemToArray(c, cJSON_CreateNumber(k));
            if (g[i].best_od_vm) { /* none: spot / flex-start only */
                cJSON_AddNumberToObject(e, "cheapest_usd_per_gpu_hr", g[i].best_od);
                cJSON_AddStringToObject(e, "cheapest_instance", g[i].best_od_vm->instance_type);
                cJSON_AddStringToObject(e, "cheapest_region", g[i].best_od_vm->region);
            } else {
                cJSON_AddNullToObject(e, "cheapest_usd_per_gpu_hr");
            }
            if (g[i].best_spot_vm) {
                cJSON_AddNumberToObject(e, "cheapest_spot_usd_per_gpu_hr", g[i].best_spot);
                cJSON_AddBoolToObject(e, "spot_estimated", g[i].best_spot_vm->spot_price_estimated);
                cJSON_AddStringToObject(e, "cheapest_spot_kind", cf_price_kind_name(g[i].best_spot_vm->spot_kind));
            } else {
                cJSON_AddNullToObject(e, "cheapest_spot_usd_per_gpu_hr");
            }
            cJSON_AddItemToArray(arr, e);
        }
        char *text = cJSON_Print(doc);
        cJSON_Delete(doc);
        cf_buf_puts(&b, text ? text : "null");
        cf_buf_puts(&b, "\n");
        free(text);
    } else if (fmt == FMT_CSV) {
        cf_buf_puts(&b, "gpu,cloud,gpu_counts,cheapest_usd_per_gpu_hr,cheapest_instance,cheapest_region,"
                        "cheapest_spot_usd_per_gpu_hr\n");
        for (size_t i = 0; i < n; i++) {
            counts_text(&g[i], counts, sizeof counts);
            cf_buf_printf(&b, "%s,%s,\"%s\",", g[i].gpu, CLOUD_ORDER[g[i].cloud], counts);
            if (g[i].best_od_vm)
                cf_buf_printf(&b, "%.6g,%s,%s,", g[i].best_od, g[i].best_od_vm->instance_type, g[i].best_od_vm->region);
            else
                cf_buf_puts(&b, ",,,");
            if (g[i].best_spot_vm)
                cf_buf_printf(&b, "%.6g", g[i].best_spot);
            cf_buf_puts(&b, "\n");
        }
    } else {
        char(*cells)[12][128] = calloc(n + 1, sizeof *cells);
        static const int right[] = {0, 0, 0, 1, 1, 0};
        const char *head[] = {"GPU", "CLOUD", "GPUS/VM", "$/GPU-HR", "SPOT $/GPU-HR", "CHEAPEST (ON-DEMAND)"};
        for (int c = 0; cells && c < 6; c++)
            snprintf(cells[0][c], 128, "%s", head[c]);
        for (size_t i = 0; cells && i < n; i++) {
            counts_text(&g[i], counts, sizeof counts);
            fmt_price(od, sizeof od, g[i].best_od);
            fmt_price(spot, sizeof spot, g[i].best_spot);
            snprintf(cells[i + 1][0], 128, "%s", i > 0 && strcmp(g[i - 1].gpu, g[i].gpu) == 0 ? "" : g[i].gpu);
            snprintf(cells[i + 1][1], 128, "%s", CLOUD_ORDER[g[i].cloud]);
            snprintf(cells[i + 1][2], 128, "%s", counts);
            snprintf(cells[i + 1][3], 128, "%s", od);
            snprintf(cells[i + 1][4], 128, "%s%s", spot, g[i].best_spot_vm ? kind_mark(g[i].best_spot_vm->spot_kind) : "");
            if (g[i].best_od_vm)
                snprintf(cells[i + 1][5], 128, "%s %s", g[i].best_od_vm->instance_type, g[i].best_od_vm->region);
            else
                snprintf(cells[i + 1][5], 128, "- (spot or flex-start only)");
        }
        if (cells)
            print_table(&b, cells, n + 1, 6, right);
        free(cells);
        char line[512];
        cf_catalog_source_describe(src, line, sizeof line);
        cf_buf_printf(&b, "\ncatalog: %s; %zu offers. 'cloudfit prices GPU' lists every offer of one GPU.\n", line,
                      rs.n);
        cf_buf_puts(&b, SPOT_LEGEND);
    }
    out_text(&b);
    cf_buf_free(&b);
    free(g);
    free(rs.rows);
    return 0;
}

/* ---- detail: every offer of one GPU ---------------------------------------- */

static int spot_sort; /* qsort has no context argument in C11 */

static int offer_cmp(const void *a, const void *b)
{
    const cf_vm *x = *(const cf_vm *const *)a, *y = *(const cf_vm *const *)b;
    double px = spot_sort ? x->price_spot_usd_per_hr : x->price_ondemand_usd_per_hr;
    double py = spot_sort ? y->price_spot_usd_per_hr : y->price_ondemand_usd_per_hr;
    px = px > 0 ? px : HUGE_VAL; /* no on-demand price (spot only): last */
    py = py > 0 ? py : HUGE_VAL;
    if (px != py)
        return px < py ? -1 : 1;
    int c = strcmp(x->cloud, y->cloud);
    return c ? c : strcmp(x->region, y->region);
}

static int parse_gpu_arg(const char *arg, char *gpu, size_t cap, int *count)
{
    *count = 0;
    const char *colon = strchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
    if (len == 0 || len >= cap) {
        cf_log_error("expected GPU or GPU:N, got '%s'", arg);
        return CF_EXIT_USAGE;
    }
    memcpy(gpu, arg, len);
    gpu[len] = '\0';
    if (colon) {
        char *end = NULL;
        long n = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || n < 1 || n > 1024) {
            cf_log_error("in '%s': the GPU count after ':' must be a positive integer", arg);
            cf_log_hint("e.g. 'cloudfit prices A100:8'");
            return CF_EXIT_USAGE;
        }
        *count = (int)n;
    }
    return 0;
}

static int show_detail(const cf_catalog_source *src, const cf_cli_options *o, out_format fmt, const char *arg)
{
    char gpu[32];
    int count = 0, rc = parse_gpu_arg(arg, gpu, sizeof gpu, &count);
    if (rc)
        return rc;
    row_set rs = {0};
    if ((rc = select_rows(src, o, gpu, o->spot_only, &rs)))
        return rc;
    size_t n = 0;
    for (size_t i = 0; i < rs.n; i++)
        if (count == 0 || rs.rows[i]->gpu_count == count)
            rs.rows[n++] = rs.rows[i];
    spot_sort = o->spot_only;
    qsort(rs.rows, n, sizeof *rs.rows, offer_cmp);
    if (n == 0) {
        free(rs.rows);
        cf_error_set(CF_ERR_INFEASIBLE, "no offer of %s%s%s matches%s", gpu, count ? " with " : "",
                     count ? arg + strlen(gpu) + 1 : "", o->spot_only ? " with a spot price" : "");
        if (count)
            cf_error_hint("see 'cloudfit prices %s' for the GPU counts on offer", gpu);
        return cf_report_error();
    }
    cf_buf b = CF_BUF_INIT;
    if (fmt == FMT_JSON) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddItemToObject(doc, "catalog", cf_catalog_source_json(src, &src->catalog, src->age_days, NULL));
        cJSON_AddStringToObject(doc, "gpu", gpu);
        if (count)
            cJSON_AddNumberToObject(doc, "gpu_count", count);
        else
            cJSON_AddNullToObject(doc, "gpu_count");
        cJSON *arr = cJSON_AddArrayToObject(doc, "offers");
        for (size_t i = 0; i < n; i++) {
            const cf_vm *vm = rs.rows[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "cloud", vm->cloud);
            cJSON_AddStringToObject(e, "region", vm->region);
            cJSON_AddStringToObject(e, "instance_type", vm->instance_type);
            cJSON_AddStringToObject(e, "gpu", vm->gpu_model);
            cJSON_AddNumberToObject(e, "gpus", vm->gpu_count);
            cJSON_AddNumberToObject(e, "gpu_memory_gib", vm->gpu_memory_gib);
            cJSON_AddNumberToObject(e, "vcpus", vm->vcpus);
            cJSON_AddNumberToObject(e, "memory_gib", vm->memory_gib);
            if (vm->network_gbps > 0)
                cJSON_AddNumberToObject(e, "network_gbps", vm->network_gbps);
            else
                cJSON_AddNullToObject(e, "network_gbps");
            if (vm->price_ondemand_usd_per_hr > 0)
                cJSON_AddNumberToObject(e, "usd_per_hour", vm->price_ondemand_usd_per_hr);
            else
                cJSON_AddNullToObject(e, "usd_per_hour");
            if (vm->price_spot_usd_per_hr > 0)
                cJSON_AddNumberToObject(e, "spot_usd_per_hour", vm->price_spot_usd_per_hr);
            else
                cJSON_AddNullToObject(e, "spot_usd_per_hour");
            cJSON_AddBoolToObject(e, "spot_estimated", vm->spot_price_estimated);
            add_price_provenance(e, &src->catalog, vm);
            if (cf_catalog_source_rule_of(src, vm))
                cJSON_AddNumberToObject(e, "price_override_rule", cf_catalog_source_rule_of(src, vm));
            cJSON_AddStringToObject(e, "source", src->catalog.sources[vm->source_index]);
            cJSON_AddItemToArray(arr, e);
        }
        char *text = cJSON_Print(doc);
        cJSON_Delete(doc);
        cf_buf_puts(&b, text ? text : "null");
        cf_buf_puts(&b, "\n");
        free(text);
    } else if (fmt == FMT_CSV) {
        cf_buf_puts(&b, "cloud,region,instance_type,gpus,gpu_memory_gib,vcpus,memory_gib,network_gbps,usd_per_hour,"
                        "spot_usd_per_hour,spot_estimated,ondemand_kind,ondemand_date,spot_kind,spot_date,zones\n");
        for (size_t i = 0; i < n; i++) {
            const cf_vm *vm = rs.rows[i];
            cf_buf_printf(&b, "%s,%s,%s,%d,%g,%d,%g,", vm->cloud, vm->region, vm->instance_type, vm->gpu_count,
                          vm->gpu_memory_gib, vm->vcpus, vm->memory_gib);
            if (vm->network_gbps > 0)
                cf_buf_printf(&b, "%g", vm->network_gbps);
            cf_buf_puts(&b, ",");
            if (vm->price_ondemand_usd_per_hr > 0)
                cf_buf_printf(&b, "%.6g", vm->price_ondemand_usd_per_hr);
            cf_buf_puts(&b, ",");
            if (vm->price_spot_usd_per_hr > 0)
                cf_buf_printf(&b, "%.6g", vm->price_spot_usd_per_hr);
            cf_buf_printf(&b, ",%d,%s,%s,%s,%s,%s\n", vm->spot_price_estimated,
                          vm->ondemand_kind ? cf_price_kind_name(vm->ondemand_kind) : "", vm->ondemand_date,
                          vm->spot_kind ? cf_price_kind_name(vm->spot_kind) : "", vm->spot_date, vm->zones);
        }
    } else {
        char(*cells)[12][128] = calloc(n + 1, sizeof *cells);
        static const int right[] = {0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0};
        const char *head[] = {"CLOUD", "REGION", "INSTANCE", "GPUS", "VCPUS", "MEM GIB", "NET GBPS", "$/HR",
                              "SPOT $/HR", "SPOT PRICE", "INTERRUPTIONS"};
        for (int c = 0; cells && c < 11; c++)
            snprintf(cells[0][c], 128, "%s", head[c]);
        for (size_t i = 0; cells && i < n; i++) {
            const cf_vm *vm = rs.rows[i];
            char(*row)[128] = cells[i + 1];
            snprintf(row[0], 128, "%s", vm->cloud);
            snprintf(row[1], 128, "%s", vm->region);
            snprintf(row[2], 128, "%s%s", vm->instance_type, cf_catalog_source_rule_of(src, vm) ? " *" : "");
            snprintf(row[3], 128, "%d×%s", vm->gpu_count, vm->gpu_model);
            snprintf(row[4], 128, "%d", vm->vcpus);
            snprintf(row[5], 128, "%g", vm->memory_gib);
            vm->network_gbps > 0 ? snprintf(row[6], 128, "%g", vm->network_gbps) : snprintf(row[6], 128, "-");
            fmt_price(row[7], 128, vm->price_ondemand_usd_per_hr);
            fmt_price(row[8], 128, vm->price_spot_usd_per_hr);
            spot_kind_cell(vm, row[9], 128);
            interruptions_cell(&src->catalog, vm, row[10], 128);
        }
        if (cells)
            print_table(&b, cells, n + 1, 11, right);
        free(cells);
        char line[512];
        cf_catalog_source_describe(src, line, sizeof line);
        cf_buf_printf(&b, "\n%zu offers; catalog: %s\n", n, line);
        if (src->overrides.n)
            cf_buf_printf(&b, "* price from %s\n", src->overrides.path);
        cf_buf_puts(&b, "SPOT PRICE: observed = AWS spot price seen in the region, the lowest over its zones; estimated = "
                        "AWS on-demand × (1 − Spot Instance Advisor average savings), not a price anyone quoted; "
                        "listed = the cloud's published spot price. INTERRUPTIONS: % of spot VMs interrupted per "
                        "month, from the AWS Spot Advisor band, else cloudfit's default.\n");
    }
    out_text(&b);
    cf_buf_free(&b);
    free(rs.rows);
    return 0;
}

/* ---- update ------------------------------------------------------------------ */

static void progress_line(void *data, const char *line)
{
    (void)data;
    cf_log_info("%s", line);
}

static void print_update_warnings(const char *text)
{
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        int len = nl ? (int)(nl - text) : (int)strlen(text);
        if (len)
            cf_log_warning("%.*s", len, text);
        text += len + (nl != NULL);
    }
}

static cf_status store_snapshot(cf_db *db, const cf_catalog_source *base, const cf_price_update_result *res,
                                const char *fetched_at, long long *out_id)
{
    char sources[64] = "";
    for (size_t i = 0; i < res->n_clouds; i++)
        if (res->clouds[i].outcome == CF_CLOUD_UPDATED)
            snprintf(sources + strlen(sources), sizeof sources - strlen(sources), "%s%s", sources[0] ? "," : "",
                     res->clouds[i].cloud);
    cf_snapshot_price *prices = calloc(res->refreshed.n + 1, sizeof *prices);
    if (!prices)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < res->refreshed.n; i++) {
        const cf_price_quote *q = &res->refreshed.items[i];
        prices[i] = (cf_snapshot_price){q->cloud, q->region, q->instance_type, q->gpu_model, q->gpu_count,
                                        q->price_ondemand_usd_per_hr, q->has_spot ? q->price_spot_usd_per_hr : 0};
    }
    char base_name[64];
    snprintf(base_name, sizeof base_name, "%s", base->snapshot);
    cf_snapshot_new snap = {.fetched_at = fetched_at, .sources = sources, .base = base_name,
                            .vms_csv = res->vms_csv, .vms_csv_len = res->vms_csv_len, .row_count = (long)res->n_rows,
                            .report = res->warnings ? res->warnings : "", .prices = prices,
                            .n_prices = res->refreshed.n};
    cf_status st = cf_snapshot_insert(db, &snap, out_id);
    free(prices);
    return st;
}

static int cmd_update(const cf_cli_options *o, int n_positional)
{
    if (n_positional != 1) {
        cf_log_error("'prices update' takes no arguments (use --cloud and --region)");
        return CF_EXIT_USAGE;
    }
    /* The base is the catalog in use, without overrides: a stored snapshot
     * holds list prices only. */
    cf_catalog_source base;
    int rc = cf_cli_catalog_open(o, 0, &base);
    if (rc)
        return rc;
    char path[1024], fetched_at[32];
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 1, &db, path, sizeof path) != CF_OK) {
        cf_catalog_source_close(&base);
        return cf_report_error();
    }
    cf_now_iso8601(fetched_at, sizeof fetched_at);
    cf_price_update_options uo = {.clouds = o->clouds.items, .n_clouds = (size_t)o->clouds.n,
                                  .regions = o->regions.items, .n_regions = (size_t)o->regions.n,
                                  .clouds_explicit = o->clouds.n > 0,
                                  .max_change_factor = o->max_price_change > 0 ? o->max_price_change : 3.0,
                                  .fetched_at = fetched_at, .progress = progress_line};
    cf_price_update_result res;
    cf_status st = cf_prices_update(&base.catalog, &uo, &res);
    print_update_warnings(res.warnings);
    int any_failed = 0;
    for (size_t i = 0; i < res.n_clouds; i++) {
        const cf_cloud_update *c = &res.clouds[i];
        if (c->outcome == CF_CLOUD_SKIPPED) {
            cf_log_warning("%s skipped: %s", c->cloud, c->message);
            if (c->hint[0])
                cf_log_hint("%s", c->hint);
        } else if (c->outcome == CF_CLOUD_FAILED) {
            cf_log_error("%s not updated: %s", c->cloud, c->message);
            if (c->hint[0])
                cf_log_hint("%s", c->hint);
        }
        any_failed |= c->outcome == CF_CLOUD_FAILED;
    }
    long long id = 0;
    if (st != CF_OK && any_failed) {
        rc = cf_exit_code_for(st); /* each failure was printed above */
        cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
    } else if (st != CF_OK || (st = store_snapshot(db, &base, &res, fetched_at, &id)) != CF_OK) {
        rc = cf_report_error();
        cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
    } else {
        printf("%-6s  %-8s  %7s  %7s\n", "CLOUD", "STATUS", "PRICES", "UPDATED");
        for (size_t i = 0; i < res.n_clouds; i++) {
            const cf_cloud_update *c = &res.clouds[i];
            static const char *const names[] = {"updated", "FAILED", "skipped"};
            printf("%-6s  %-8s  %7zu  %7zu\n", c->cloud, names[c->outcome], c->n_quotes, c->n_rows_updated);
        }
        printf("stored snapshot-%lld: %zu rows, %zu prices kept out, fetched %s (in %s)\n", id, res.n_rows,
               res.n_rejected, fetched_at, path);
        rc = any_failed ? cf_exit_code_for(CF_ERR_NETWORK) : 0;
    }
    cf_price_update_result_free(&res);
    cf_db_close(db);
    cf_catalog_source_close(&base);
    return rc;
}

int cmd_prices(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    out_format fmt;
    int rc = parse_format(o, &fmt);
    if (rc)
        return rc;
    if (n_positional >= 1 && strcmp(argv[1], "update") == 0)
        return cmd_update(o, n_positional);
    if (o->max_price_change > 0) {
        cf_log_error("option '--max-price-change' only applies to 'prices update'");
        return CF_EXIT_USAGE;
    }
    if (n_positional > 1) {
        cf_log_error("prices takes at most one GPU[:N], got %d arguments", n_positional);
        cf_log_hint("usage: cloudfit prices [GPU[:N]] [--cloud C] [--region R] [--spot] [--format table|json|csv]");
        return CF_EXIT_USAGE;
    }
    cf_catalog_source src;
    if ((rc = cf_cli_catalog_open(o, 1, &src)))
        return rc;
    cf_cli_catalog_warn(&src);
    rc = n_positional == 1 ? show_detail(&src, o, fmt, argv[1]) : show_summary(&src, o, fmt);
    cf_catalog_source_close(&src);
    return rc;
}
